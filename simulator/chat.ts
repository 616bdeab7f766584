import type { IncomingMessage, ServerResponse } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { z } from "zod";
import type { Extraction } from "@/lib/extract/types";
import { type ChatItem, type KnownStory, simulatedExtraction } from "./chatAnswer";
import { countTokens } from "./embeddings";
import type { FaultKind, FaultTable } from "./faults";

/**
 * An OpenAI-compatible chat completions endpoint, `POST /v1/chat/completions`, answering as the
 * extraction model `sim-extract-1`, so wirewatch's chat provider (lib/extract) is tested end to
 * end over real HTTP, faults included, and the embedded default shows costs without a paid key.
 *
 * The assistant's content is a JSON string of an Extraction (lib/extract/types.ts) about the item
 * in the user messages (see itemOf); a story the newsroom published itself is answered from what
 * the newsroom knows, any other text by its script and keywords (chatAnswer.ts). The same item
 * gets the same answer in every request, whatever the model asked for (it is echoed), and a
 * correction retry (more messages) is answered the same way. `usage` counts words and
 * punctuation marks, as the embeddings endpoint does: the request's messages in, the content out.
 *
 * Faults go through the simulator's fault table under the source id `llm`, and may be limited
 * to the next N requests (`calls`):
 *   429 {retryAfter}  Too Many Requests with Retry-After (seconds)
 *   500, 503          server errors
 *   latency {ms}      the answer comes `ms` later (a slow supplier; the CLI's `slow`)
 *   blackhole         the request is never answered
 *   reset             the connection is reset
 *   malformed         the n-th malformed answer since start is, by n mod 5: content cut in half
 *                     (not JSON), prose, empty content, a JSON body that is not a chat completion,
 *                     a body cut in half (not JSON at all)
 *   schema            well-formed JSON content that breaks the schema, by n mod 5: language "fr",
 *                     category "gossip", entities a string, a 2,000-character summary, no language
 * They apply in that order; a request that meets several counts against each.
 */
export const CHAT_PATH = "/v1/chat/completions";
export const CHAT_SOURCE_ID = "llm";
export const CHAT_MODEL = "sim-extract-1";

export interface ChatOptions {
  /** When set, requests must carry `Authorization: Bearer <apiKey>` (else 401). */
  apiKey?: string;
}

export interface ChatStats {
  /** Requests to the endpoint, faulted or not. */
  requests: number;
  /** Requests answered 200 with a valid extraction. */
  answered: number;
  /** Requests carrying an assistant message: correction retries. */
  corrections: number;
  /** Requests a fault answered, delayed or swallowed, by its kind. */
  byFault: Partial<Record<FaultKind, number>>;
}

export interface ChatEndpoint {
  readonly model: string;
  readonly stats: ChatStats;
  handle(
    req: IncomingMessage,
    res: ServerResponse,
    faults: FaultTable,
    stopping: AbortSignal,
  ): Promise<void>;
}

const partSchema = z.looseObject({ type: z.string(), text: z.string().optional() });
const messageSchema = z.looseObject({
  role: z.enum(["system", "developer", "user", "assistant", "tool"]),
  content: z.union([z.string(), z.array(partSchema), z.null()]).optional(),
});
// Loose: clients send fields this double has no use for (seed, max_tokens, tools …).
const requestSchema = z.looseObject({
  model: z.string().min(1),
  messages: z.array(messageSchema).min(1).max(1_000),
  response_format: z
    .looseObject({ type: z.enum(["text", "json_object", "json_schema"]) })
    .optional(),
  temperature: z.number().min(0).max(2).optional(),
  stream: z.boolean().optional(),
});
type ChatMessage = z.infer<typeof messageSchema>;

// An extraction request is a prompt and one item, a few KiB; a correction retry adds the
// previous answer and its errors. 1 MiB is far above both and stops a runaway client.
const MAX_BODY_BYTES = 1024 * 1024;
const MALFORMED_VARIANTS = 5;
const SCHEMA_VARIANTS = 5;

export function createChatEndpoint(
  lookup: (title: string) => KnownStory | undefined,
  options: ChatOptions = {},
): ChatEndpoint {
  const stats: ChatStats = { requests: 0, answered: 0, corrections: 0, byFault: {} };
  let malformedAnswers = 0;
  let schemaAnswers = 0;
  let completions = 0;

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
    const take = <K extends FaultKind>(kind: K) => {
      const fault = faults.take(CHAT_SOURCE_ID, kind);
      if (fault) stats.byFault[kind] = (stats.byFault[kind] ?? 0) + 1;
      return fault;
    };
    if (take("blackhole")) return; // the socket stays open until the client gives up
    const latency = take("latency");
    if (latency) {
      const slept = await sleep(latency.ms, true, { signal: stopping }).catch(() => false);
      if (!slept || res.destroyed) return;
    }
    if (take("reset")) return void req.socket.resetAndDestroy();
    const tooMany = take("429");
    if (tooMany) {
      res.setHeader("retry-after", String(tooMany.retryAfter));
      return openAiError(res, 429, "rate_limit_error", "Rate limit reached; retry later");
    }
    if (take("503")) return openAiError(res, 503, "server_error", "Service Unavailable");
    if (take("500")) return openAiError(res, 500, "server_error", "Internal error");

    if (options.apiKey !== undefined && req.headers.authorization !== `Bearer ${options.apiKey}`) {
      return openAiError(res, 401, "invalid_request_error", "Incorrect API key provided");
    }
    const declared = Number(req.headers["content-length"] ?? 0);
    const text = declared > MAX_BODY_BYTES ? undefined : await readBody(req);
    if (text === undefined) {
      res.setHeader("connection", "close");
      return openAiError(res, 413, "invalid_request_error", `body over ${MAX_BODY_BYTES} bytes`);
    }
    let body: z.infer<typeof requestSchema>;
    try {
      body = requestSchema.parse(JSON.parse(text));
    } catch (err) {
      const why = err instanceof z.ZodError ? z.prettifyError(err) : (err as Error).message;
      return openAiError(res, 400, "invalid_request_error", `bad request: ${why}`);
    }
    if (body.stream) {
      return openAiError(res, 400, "invalid_request_error", "stream is not served here");
    }
    if (body.messages.some((m) => m.role === "assistant")) stats.corrections++;

    const item = itemOf(body.messages);
    const extraction = simulatedExtraction(item, lookup(item.title));
    const malformed = take("malformed") !== undefined;
    const broken = take("schema") !== undefined;
    let content = JSON.stringify(extraction);
    if (broken) content = JSON.stringify(breakSchema(extraction, schemaAnswers++));
    const variant = malformed ? malformedAnswers++ % MALFORMED_VARIANTS : undefined;
    if (variant === 0) content = content.slice(0, Math.floor(content.length / 2));
    if (variant === 1) content = prose(extraction);
    if (variant === 2) content = "";

    const promptTokens = body.messages.reduce((n, m) => n + countTokens(textOf(m)), 0);
    const completionTokens = countTokens(content);
    const answer = {
      id: `chatcmpl-sim-${++completions}`,
      object: "chat.completion",
      created: Math.floor(Date.now() / 1000),
      model: body.model,
      choices: [
        {
          index: 0,
          message: { role: "assistant", content, refusal: null },
          logprobs: null,
          finish_reason: "stop",
        },
      ],
      usage: {
        prompt_tokens: promptTokens,
        completion_tokens: completionTokens,
        total_tokens: promptTokens + completionTokens,
      },
      system_fingerprint: null,
    };
    if (variant === 3) return sendJson(res, 200, { status: "ok", output: content });
    if (variant === 4) {
      const whole = JSON.stringify(answer);
      res.writeHead(200, { "content-type": "application/json" });
      return void res.end(whole.slice(0, Math.floor(whole.length / 2)));
    }
    if (!malformed && !broken) stats.answered++;
    sendJson(res, 200, answer);
  }

  return { model: CHAT_MODEL, stats, handle };
}

/** A message's text: its string content, or its text parts joined by new lines. */
function textOf(message: ChatMessage): string {
  const { content } = message;
  if (typeof content === "string") return content;
  return (content ?? []).map((p) => p.text ?? "").join("\n");
}

/**
 * The item asked about. Clients send it as JSON ({"title", "summary"?}) or as text; the user
 * messages are searched last to first for a JSON object with a string `title`. Without one the
 * first user message's whole text is the title: a correction retry appends its own user message
 * (the errors), which must not be taken for the item.
 */
export function itemOf(messages: readonly ChatMessage[]): ChatItem {
  const users = messages.filter((m) => m.role === "user").map(textOf);
  for (const text of [...users].reverse()) {
    for (const candidate of jsonObjectsIn(text)) {
      const found = titled(candidate, 0);
      if (found) return found;
    }
  }
  return { title: (users[0] ?? "").trim(), summary: null };
}

function titled(value: unknown, depth: number): ChatItem | undefined {
  if (typeof value !== "object" || value === null || depth > 4) return undefined;
  const v = value as Record<string, unknown>;
  if (typeof v.title === "string") {
    return { title: v.title, summary: typeof v.summary === "string" ? v.summary : null };
  }
  for (const inner of Object.values(v)) {
    const found = titled(inner, depth + 1);
    if (found) return found;
  }
  return undefined;
}

/** Every balanced {...} in the text that parses as JSON, outermost first. */
function* jsonObjectsIn(text: string): Generator<unknown> {
  for (let start = text.indexOf("{"); start >= 0; start = text.indexOf("{", start + 1)) {
    const end = closingBrace(text, start);
    if (end < 0) continue;
    try {
      yield JSON.parse(text.slice(start, end + 1));
      start = end;
    } catch {
      // not JSON from this brace: the next one may start an object
    }
  }
}

function closingBrace(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{") depth++;
    else if (c === "}" && --depth === 0) return i;
  }
  return -1;
}

/** Well-formed JSON that breaks the extraction schema, one way per variant. */
function breakSchema(e: Extraction, n: number): Record<string, unknown> {
  switch (n % SCHEMA_VARIANTS) {
    case 0:
      return { ...e, language: "fr" };
    case 1:
      return { ...e, category: "gossip" };
    case 2:
      return { ...e, entities: e.entities.map((x) => x.text).join(", ") };
    case 3:
      return { ...e, summary: "Sources say ".repeat(167).slice(0, 2_000) };
    default: {
      const { language: _dropped, ...rest } = e;
      return rest;
    }
  }
}

/** What a chatty model says instead of the JSON it was asked for. */
function prose(e: Extraction): string {
  const language = { bn: "Bangla", en: "English", other: "another language" }[e.language];
  return `Sure! This story is about ${e.category ?? "the news"}, written in ${language}, and names ${e.entities.length} entities.`;
}

function openAiError(res: ServerResponse, status: number, type: string, message: string): void {
  sendJson(res, status, { error: { message, type, param: null, code: null } });
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
  });
  res.end(body);
}

/** The body as text; undefined once it passes the cap (the rest is read and dropped). */
function readBody(req: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) return void chunks.push(chunk);
      req.off("data", onData);
      req.resume();
      resolve(undefined);
    };
    req.on("data", onData);
    req.once("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.once("error", reject);
  });
}
