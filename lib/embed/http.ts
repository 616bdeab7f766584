import { z } from "zod";
import { type BackoffPolicy, type Clock, retry, systemClock } from "../backoff";
import { CallBreaker } from "./breaker";
import { checkTexts } from "./checks";
import { RequestPacer } from "./pace";
import {
  type CallLedger,
  type EmbedBatch,
  type Embedder,
  EmbeddingError,
  type EmbedOptions,
  type ModelInfo,
} from "./types";
import { toUnitLength } from "./vector";

/**
 * An OpenAI-compatible embeddings server: `POST <baseUrl>/embeddings` with `{ model, input:
 * [...] }`, as OpenAI, Ollama (/v1), TEI, vLLM and LocalAI answer it.
 *
 * Every attempt has its own timeout; 429, 408, 5xx, timeouts and refused connections are retried
 * with full jitter (lib/backoff.ts), a Retry-After (seconds or an HTTP date) is honoured up to a
 * cap, past which the call gives up at once as rate_limited; an in-memory breaker (./breaker.ts)
 * stops sending to a supplier that keeps failing; an optional requests-per-minute limit paces all
 * callers. Every answer is checked before anything is returned: as many vectors as inputs, each
 * exactly `dims` long, finite numbers, `index` order honoured; then each is scaled to unit length.
 * Every attempt, answered or not, goes to the ledger with its status, latency, tokens and cost.
 */
export interface HttpEmbedderOptions {
  /** The server's API base, e.g. https://api.openai.com/v1 or http://127.0.0.1:11434/v1. */
  baseUrl: string;
  /** The model name the server knows, sent as `model`. */
  model: string;
  /** Dimensions every vector must have (the model's; a server answering others is refused). */
  dims: number;
  apiKey?: string;
  /** USD per million input tokens (OpenAI text-embedding-3-small: 0.02). Default 0. */
  pricePerMillionTokens?: number;
  /** Requests per minute at most, over all callers of this embedder. */
  requestsPerMinute?: number;
  ledger?: CallLedger;
  /**
   * One attempt's limit, answer body included. 30 s: a 2,048-input request to a hosted API takes
   * a few seconds; a server that has not answered in 30 is better retried or fallen over from.
   */
  timeoutMs?: number;
  /** Attempts in all, the first included (default 4). */
  attempts?: number;
  /** Waits between attempts (default: full jitter from 500 ms, at most 8 s). */
  backoff?: BackoffPolicy;
  /**
   * The longest Retry-After waited for (default 30 s); a longer one gives up at once, so a
   * caller with a fallback uses it rather than stall for minutes.
   */
  maxRetryAfterMs?: number;
  /** Failed requests in a row that open the breaker, and how long it stays open (5, 30 s). */
  breaker?: { threshold: number; coolDownMs: number };
  clock?: Clock;
}

/** The answer as checked: extra fields are ignored, missing or mistyped ones refuse it. */
const answerSchema = z.object({
  data: z.array(
    z.object({
      index: z.number().int().min(0).optional(),
      embedding: z.array(z.number()),
    }),
  ),
  usage: z
    .object({ prompt_tokens: z.number().int().min(0).optional() })
    .nullable()
    .optional(),
});

/** A failed attempt: whether another may follow, and when. */
class AttemptError extends EmbeddingError {
  constructor(
    message: string,
    code: EmbeddingError["code"],
    readonly retryable: boolean,
    readonly retryAfterMs?: number,
    options?: { cause?: unknown },
  ) {
    super(message, code, options);
  }
}

const DEFAULTS = {
  timeoutMs: 30_000,
  attempts: 4,
  backoff: { baseMs: 500, capMs: 8_000 } satisfies BackoffPolicy,
  maxRetryAfterMs: 30_000,
  // Five failed requests in a row is one call's four attempts and one more: the supplier is
  // down, not unlucky. 30 s open lets a failover answer at once meanwhile, and notices a
  // recovered supplier within half a minute.
  breaker: { threshold: 5, coolDownMs: 30_000 },
};

/** The model id of a model served over HTTP: the same name on another server may be another model. */
export function httpModelInfo(baseUrl: string, model: string, dims: number): ModelInfo {
  const host = new URL(baseUrl).host;
  return {
    model: `http:${model}@${host}`,
    provider: "http",
    name: model,
    version: host,
    dims,
    kind: "meaning",
    // A remote model's languages are not known here; none declared keeps Bangla pairs out of
    // its verdicts (they go to review) until an operator measures it.
    languages: [],
    crossLingual: false,
  };
}

export class HttpEmbedder implements Embedder {
  readonly info: ModelInfo;
  readonly breaker: CallBreaker;
  private readonly url: string;
  private readonly pacer: RequestPacer;
  private readonly clock: Clock;
  private readonly settings: typeof DEFAULTS;

  constructor(private readonly options: HttpEmbedderOptions) {
    if (!Number.isInteger(options.dims) || options.dims < 1) {
      throw new EmbeddingError(`dims must be a whole number ≥ 1, not ${options.dims}`, "bad_input");
    }
    let base: URL;
    try {
      base = new URL(options.baseUrl);
    } catch {
      throw new EmbeddingError(`not a URL: "${options.baseUrl}"`, "unavailable");
    }
    if (!/^https?:$/.test(base.protocol)) {
      throw new EmbeddingError(`the embeddings URL must be http or https: ${base}`, "unavailable");
    }
    this.url = `${base.href.replace(/\/+$/, "")}/embeddings`;
    this.info = httpModelInfo(options.baseUrl, options.model, options.dims);
    this.clock = options.clock ?? systemClock;
    this.settings = {
      timeoutMs: options.timeoutMs ?? DEFAULTS.timeoutMs,
      attempts: options.attempts ?? DEFAULTS.attempts,
      backoff: options.backoff ?? DEFAULTS.backoff,
      maxRetryAfterMs: options.maxRetryAfterMs ?? DEFAULTS.maxRetryAfterMs,
      breaker: options.breaker ?? DEFAULTS.breaker,
    };
    this.breaker = new CallBreaker(this.settings.breaker, this.clock);
    this.pacer = new RequestPacer(options.requestsPerMinute, this.clock);
  }

  async embed(texts: string[], options: EmbedOptions = {}): Promise<EmbedBatch> {
    checkTexts(texts);
    const { signal } = options;
    let attempts = 0;
    try {
      const attempt = (n: number) => {
        attempts = n + 1;
        return this.attempt(texts, attempts, signal);
      };
      const vectors = await retry(attempt, {
        attempts: this.settings.attempts,
        policy: this.settings.backoff,
        clock: this.clock,
        ...(signal ? { signal } : {}),
        decide: (outcome) => {
          if (!("error" in outcome)) return null;
          const err = outcome.error;
          if (!(err instanceof AttemptError) || !err.retryable) return null;
          if (err.retryAfterMs === undefined) return undefined;
          return err.retryAfterMs > this.settings.maxRetryAfterMs ? null : err.retryAfterMs;
        },
      });
      return { model: this.info, vectors };
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      if (!(err instanceof EmbeddingError)) throw err;
      const tries = attempts === 1 ? "" : ` (${attempts} attempts)`;
      throw new EmbeddingError(`${this.info.model}: ${err.message}${tries}`, err.code, {
        cause: err,
      });
    }
  }

  async close(): Promise<void> {}

  private async attempt(
    texts: string[],
    attempt: number,
    signal: AbortSignal | undefined,
  ): Promise<Float32Array[]> {
    if (!this.breaker.allow()) {
      const at = new Date(this.breaker.reopensAt ?? this.clock.now()).toISOString();
      throw new AttemptError(
        `the breaker is open after repeated failures; no request sent (next probe ${at})`,
        "provider_error",
        false,
      );
    }
    try {
      await this.pacer.turn(signal);
      signal?.throwIfAborted();
    } catch (err) {
      this.breaker.cancel();
      throw err;
    }
    const started = this.clock.now();
    const record = (fields: { ok: boolean; status?: number; error?: string; tokens?: number }) => {
      const tokens = fields.tokens ?? 0;
      this.options.ledger?.record({
        purpose: "embed",
        provider: "http",
        model: this.info.model,
        ok: fields.ok,
        status: fields.status ?? null,
        error: fields.error ?? null,
        items: texts.length,
        inputTokens: tokens,
        costUsd: (tokens * (this.options.pricePerMillionTokens ?? 0)) / 1_000_000,
        latencyMs: this.clock.now() - started,
        attempt,
      });
    };

    const timeout = AbortSignal.timeout(this.settings.timeoutMs);
    const both = signal ? AbortSignal.any([signal, timeout]) : timeout;
    let status: number | undefined;
    let text: string;
    let retryAfter: string | null = null;
    try {
      const res = await fetch(this.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json",
          ...(this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {}),
        },
        body: JSON.stringify({ model: this.options.model, input: texts, encoding_format: "float" }),
        signal: both,
      });
      status = res.status;
      retryAfter = res.headers.get("retry-after");
      text = await res.text();
    } catch (err) {
      if (signal?.aborted) {
        this.breaker.cancel();
        record({ ok: false, ...(status ? { status } : {}), error: "aborted by the caller" });
        throw signal.reason;
      }
      const why = timeout.aborted
        ? `no answer within ${this.settings.timeoutMs} ms`
        : `no answer: ${connectionError(err)}`;
      record({ ok: false, ...(status ? { status } : {}), error: why });
      this.breaker.failed();
      throw new AttemptError(why, "provider_error", true, undefined, { cause: err });
    }

    if (status !== 200) {
      const message = `HTTP ${status}${serverMessage(text)}`;
      record({ ok: false, status, error: message });
      if (status === 429) {
        this.breaker.failed();
        const waitMs = parseRetryAfter(retryAfter, this.clock.now());
        if (waitMs !== undefined) this.pacer.holdUntil(this.clock.now() + waitMs);
        const capped =
          waitMs !== undefined && waitMs > this.settings.maxRetryAfterMs
            ? `; Retry-After ${Math.round(waitMs / 1000)} s is past the ${this.settings.maxRetryAfterMs / 1000} s cap`
            : "";
        throw new AttemptError(`${message}${capped}`, "rate_limited", true, waitMs);
      }
      if (status === 408 || status >= 500) {
        this.breaker.failed();
        throw new AttemptError(message, "provider_error", true);
      }
      this.breaker.answered();
      if (status === 400 || status === 413 || status === 422) {
        throw new AttemptError(`refused the input: ${message}`, "bad_input", false);
      }
      if (status === 401 || status === 403 || status === 404) {
        throw new AttemptError(
          `${message}: check the API key (WIREWATCH_EMBEDDING_API_KEY), the URL and the model name`,
          "unavailable",
          false,
        );
      }
      throw new AttemptError(message, "provider_error", false);
    }

    this.breaker.answered();
    let answer: z.infer<typeof answerSchema>;
    try {
      answer = answerSchema.parse(JSON.parse(text));
    } catch (err) {
      const why =
        err instanceof z.ZodError
          ? `not an embeddings answer: ${summarise(err)}`
          : "the answer is not JSON";
      record({ ok: false, status, error: why, tokens: usageTokens(text) ?? 0 });
      throw new AttemptError(why, "invalid_answer", false, undefined, { cause: err });
    }
    const tokens = answer.usage?.prompt_tokens ?? estimateTokens(texts);
    let vectors: Float32Array[];
    try {
      vectors = this.check(answer, texts.length);
    } catch (err) {
      record({ ok: false, status, error: (err as Error).message, tokens });
      throw err;
    }
    record({ ok: true, status, tokens });
    return vectors;
  }

  /** The answer's vectors in input order, unit length, or an invalid_answer. */
  private check(answer: z.infer<typeof answerSchema>, inputs: number): Float32Array[] {
    const { dims } = this.options;
    const refuse = (why: string) => new AttemptError(why, "invalid_answer", false);
    if (answer.data.length !== inputs) {
      throw refuse(`${answer.data.length} vectors for ${inputs} inputs`);
    }
    const indexed = answer.data.filter((d) => d.index !== undefined).length;
    if (indexed !== 0 && indexed !== inputs) throw refuse("some vectors have an index, some not");
    const ordered = new Array<number[] | undefined>(inputs);
    answer.data.forEach((d, position) => {
      const at = d.index ?? position;
      if (at >= inputs || ordered[at] !== undefined) {
        throw refuse(`index ${at} is out of range or given twice`);
      }
      ordered[at] = d.embedding;
    });
    return ordered.map((embedding, i) => {
      const values = embedding as number[];
      if (values.length !== dims) {
        throw refuse(`vector ${i} has ${values.length} dimensions, the model has ${dims}`);
      }
      const unit = toUnitLength(Float32Array.from(values));
      if (!unit) throw refuse(`vector ${i} has no length (zeros, or beyond 32-bit floats)`);
      return unit;
    });
  }
}

/**
 * Tokens when the server does not say: a quarter of the UTF-8 bytes. English runs about four
 * characters a token (one byte each); Bengali letters are three bytes and tokenise at one or two
 * letters a token, so a quarter of the bytes is near for both, and never zero.
 */
export function estimateTokens(texts: readonly string[]): number {
  return texts.reduce((n, t) => n + Math.max(1, Math.ceil(Buffer.byteLength(t) / 4)), 0);
}

/** Retry-After as a wait in ms: delta-seconds or an HTTP date (RFC 9110 §10.2.3). */
export function parseRetryAfter(value: string | null, now: number): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** A malformed answer may still say what it cost. */
function usageTokens(text: string): number | undefined {
  try {
    const tokens = (JSON.parse(text) as { usage?: { prompt_tokens?: unknown } })?.usage
      ?.prompt_tokens;
    return typeof tokens === "number" && Number.isFinite(tokens) ? tokens : undefined;
  } catch {
    return undefined;
  }
}

function serverMessage(text: string): string {
  let message: unknown = text;
  try {
    message = (JSON.parse(text) as { error?: { message?: unknown } })?.error?.message ?? text;
  } catch {}
  const flat = String(message).replace(/\s+/g, " ").trim().slice(0, 300);
  return flat ? `: ${flat}` : "";
}

function summarise(err: z.ZodError): string {
  return err.issues
    .slice(0, 3)
    .map((i) => `${i.path.join(".") || "answer"} ${i.message}`)
    .join("; ");
}

function connectionError(err: unknown): string {
  const e = err as Error & { cause?: NodeJS.ErrnoException };
  return e.cause?.code ?? e.cause?.message ?? e.message ?? String(err);
}
