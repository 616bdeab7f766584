import type { IncomingMessage, ServerResponse } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { z } from "zod";
import type { FaultTable } from "./faults";

/**
 * An OpenAI-compatible embeddings endpoint, `POST /v1/embeddings`, so wirewatch's HTTP provider
 * is tested end to end over real HTTP, faults included.
 *
 * The vectors are a seeded hashed bag of words: each word (NFKC, lower case, letters, marks and
 * digits of any script) stands for a fixed pseudo-random direction, a text is the unit sum of its
 * words' directions. Texts sharing words are near, the same text always gets the same vector,
 * and no model is needed. `usage.prompt_tokens` counts words and punctuation marks.
 *
 * Faults go through the simulator's fault table as for any source, under the source id
 * `embeddings`, and may be limited to the next N requests (`calls`):
 *   429 {retryAfter}  Too Many Requests with Retry-After (seconds)
 *   500, 503          server errors
 *   latency {ms}      the answer comes `ms` later (a slow supplier)
 *   blackhole         the request is never answered
 *   reset             the connection is reset
 *   wrong-dims        vectors one dimension longer than the model's
 *   malformed         the n-th malformed answer since the fault was set is, by n mod 4: a body
 *                     that is not JSON, JSON without `data`, one vector fewer than inputs, and
 *                     a vector with a string among its numbers
 * They apply in that order; a request that meets several counts against each.
 */
export const EMBEDDINGS_PATH = "/v1/embeddings";
export const EMBEDDINGS_SOURCE_ID = "embeddings";

export interface EmbeddingsOptions {
  /** Dimensions of every vector, unless a request asks for `dimensions` (default 256). */
  dims?: number;
  /** The seed of the word directions (default 1). */
  seed?: number;
  /** When set, requests must carry `Authorization: Bearer <apiKey>` (else 401). */
  apiKey?: string;
  /**
   * Lists `data` last input first, as a server may: a vector's `index`, not its position, says
   * which input it is for (default false: in input order, as OpenAI answers).
   */
  reverseOrder?: boolean;
}

export interface EmbeddingsStats {
  /** Requests to the endpoint, faulted or not. */
  requests: number;
  /** Requests answered 200 with well-formed vectors. */
  answered: number;
  /** Inputs embedded in those. */
  inputs: number;
}

export interface EmbeddingsEndpoint {
  readonly dims: number;
  readonly stats: EmbeddingsStats;
  handle(
    req: IncomingMessage,
    res: ServerResponse,
    faults: FaultTable,
    stopping: AbortSignal,
  ): Promise<void>;
}

const requestSchema = z.object({
  model: z.string().min(1),
  input: z.union([z.string(), z.array(z.string()).min(1).max(2_048)]),
  dimensions: z.number().int().min(1).max(8_192).optional(),
  encoding_format: z.enum(["float"]).optional(),
  user: z.string().optional(),
});

// Bodies hold up to 2,048 texts; 16 MB is far above a real batch and stops a runaway client.
const MAX_BODY_BYTES = 16 * 1024 * 1024;

export function createEmbeddingsEndpoint(options: EmbeddingsOptions = {}): EmbeddingsEndpoint {
  const dims = options.dims ?? 256;
  const seed = options.seed ?? 1;
  const stats: EmbeddingsStats = { requests: 0, answered: 0, inputs: 0 };
  let malformedAnswers = 0;

  async function handle(
    req: IncomingMessage,
    res: ServerResponse,
    faults: FaultTable,
    stopping: AbortSignal,
  ): Promise<void> {
    stats.requests++;
    if (req.method !== "POST") {
      res.setHeader("allow", "POST");
      return openAiError(res, 405, "invalid_request_error", `${req.method} is not served here`);
    }
    const id = EMBEDDINGS_SOURCE_ID;
    if (faults.take(id, "blackhole")) return; // the socket stays open until the client gives up
    const latency = faults.take(id, "latency");
    if (latency) {
      const slept = await sleep(latency.ms, true, { signal: stopping }).catch(() => false);
      if (!slept || res.destroyed) return;
    }
    if (faults.take(id, "reset")) return void req.socket.resetAndDestroy();
    const tooMany = faults.take(id, "429");
    if (tooMany) {
      res.setHeader("retry-after", String(tooMany.retryAfter));
      return openAiError(res, 429, "rate_limit_error", "Rate limit reached; retry later");
    }
    if (faults.take(id, "503")) return openAiError(res, 503, "server_error", "Service Unavailable");
    if (faults.take(id, "500")) return openAiError(res, 500, "server_error", "Internal error");

    if (options.apiKey !== undefined && req.headers.authorization !== `Bearer ${options.apiKey}`) {
      return openAiError(res, 401, "invalid_request_error", "Incorrect API key provided");
    }
    let body: z.infer<typeof requestSchema>;
    try {
      body = requestSchema.parse(JSON.parse(await readBody(req)));
    } catch (err) {
      const why = err instanceof z.ZodError ? z.prettifyError(err) : (err as Error).message;
      return openAiError(res, 400, "invalid_request_error", `bad request: ${why}`);
    }
    const inputs = typeof body.input === "string" ? [body.input] : body.input;
    const empty = inputs.indexOf("");
    if (empty >= 0) {
      return openAiError(res, 400, "invalid_request_error", `input[${empty}] is an empty string`);
    }
    const size = body.dimensions ?? dims;
    const wrongDims = faults.take(id, "wrong-dims") !== undefined;
    const data = inputs.map((text, index) => ({
      object: "embedding",
      index,
      embedding: Array.from(simulatedVector(text, wrongDims ? size + 1 : size, seed)),
    }));
    const tokens = inputs.reduce((n, t) => n + countTokens(t), 0);
    if (options.reverseOrder) data.reverse();
    const answer = {
      object: "list",
      data,
      model: body.model,
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    };
    if (faults.take(id, "malformed")) {
      return sendMalformed(res, answer, malformedAnswers++ % 4);
    }
    if (!wrongDims) {
      stats.answered++;
      stats.inputs += inputs.length;
    }
    sendJson(res, 200, answer);
  }

  return { dims, stats, handle };
}

/** The seeded hashed bag of words: a unit vector, all zeros never (see the top of the file). */
export function simulatedVector(text: string, dims: number, seed = 1): Float32Array {
  const folded = text.normalize("NFKC").toLowerCase();
  const words = folded.match(/[\p{L}\p{M}\p{N}]+/gu) ?? [folded.trim() || folded];
  const v = new Float32Array(dims);
  for (const word of words) {
    let state = fnv1a(`${seed}\u0000${word}`);
    for (let i = 0; i < dims; i++) {
      state = (state + 0x6d2b79f5) >>> 0; // mulberry32
      let t = state;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      v[i] = (v[i] as number) + ((t ^ (t >>> 14)) >>> 0) / 2_147_483_648 - 1;
    }
  }
  let sum = 0;
  for (const x of v) sum += x * x;
  const scale = sum > 0 ? 1 / Math.sqrt(sum) : 0;
  for (let i = 0; i < dims; i++) v[i] = (v[i] as number) * scale;
  return v;
}

/** Words and punctuation marks, the simulator's tokens. */
export function countTokens(text: string): number {
  return (text.match(/[\p{L}\p{M}\p{N}]+|[^\s\p{L}\p{M}\p{N}]/gu) ?? []).length;
}

function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

function sendMalformed(res: ServerResponse, answer: { data: unknown[] }, variant: number): void {
  if (variant === 0) {
    const text = JSON.stringify(answer);
    res.writeHead(200, { "content-type": "application/json" });
    res.end(text.slice(0, Math.floor(text.length / 2)));
  } else if (variant === 1) {
    sendJson(res, 200, { ...answer, data: undefined, result: "ok" });
  } else if (variant === 2) {
    sendJson(res, 200, { ...answer, data: answer.data.slice(1) });
  } else {
    const [first, ...rest] = answer.data as { embedding: unknown[] }[];
    const spoilt = { ...first, embedding: ["0.1", ...(first?.embedding.slice(1) ?? [])] };
    sendJson(res, 200, { ...answer, data: [spoilt, ...rest] });
  }
}

function openAiError(res: ServerResponse, status: number, type: string, message: string): void {
  sendJson(res, status, { error: { message, type, code: null } });
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
  });
  res.end(body);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new Error(`request body over ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}
