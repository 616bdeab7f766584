import { type BackoffPolicy, type Clock, retry, systemClock } from "../../backoff";
import { CallBreaker } from "../../embed/breaker";
import { parseRetryAfter } from "../../embed/http";
import { RequestPacer } from "../../embed/pace";
import { inputProblem, plainText, truncate } from "../input";
import { costOf, type PriceTable, priceTable } from "../prices";
import { extractionJsonSchema, MAX_ENTITIES, MAX_SUMMARY_CHARS } from "../schema";
import {
  CATEGORIES,
  ENTITY_TYPES,
  type ExtractFailureCode,
  type ExtractInput,
  type ExtractionProvider,
  type ProviderAnswer,
  type ProviderCallOptions,
} from "../types";

/**
 * An OpenAI-compatible chat server as an extraction provider (`name: "llm"`): OpenAI, Ollama's
 * /v1, vLLM, LocalAI, the simulator. `POST <baseUrl>/chat/completions` with the prompt below
 * and structured output (`response_format: json_schema`, strict) against the declared schema.
 *
 * Plain fetch, not the `openai` package: the chain needs what the client hides or does its own
 * way: the raw body of a malformed answer (kept for the dead letter), the Retry-After header
 * against our cap, every attempt's status and usage for the ledger, one retry policy for the
 * whole project (lib/backoff.ts) and our breaker and pacing; with its retries off and its
 * parsing bypassed, the client would be a 6 MB wrapper around one POST (as lib/embed/http.ts
 * decided for embeddings).
 *
 * Per attempt: a timeout that aborts the request, body included. 429, 408, 5xx, timeouts and
 * refused connections are retried with full jitter, honouring a Retry-After up to a cap (30 s);
 * a longer one gives up at once as rate_limited with `retryAfterMs`, so the chain goes to the
 * next provider and skips this one until then. An open breaker answers breaker_open without a
 * request. Any 200 is checked only as far as its shape: the content must be JSON (else
 * malformed); whether it satisfies the schema is the chain's to judge (schema.ts).
 */
export const PROMPT_VERSION = "extract-v1";

export interface OpenAICompatibleOptions {
  /** The server's API base, e.g. https://api.openai.com/v1 or http://127.0.0.1:11434/v1. */
  baseUrl: string;
  model: string;
  apiKey?: string;
  /** One attempt's limit, body included (WIREWATCH_EXTRACT_LLM_TIMEOUT_MS, 30 s). */
  timeoutMs?: number;
  /**
   * Attempts in all, the first included (default 3): a chain has the local provider behind, so
   * a supplier that failed three times in a row is better fallen over from than waited on.
   */
  attempts?: number;
  /** Waits between attempts (default: full jitter from 500 ms, at most 8 s). */
  backoff?: BackoffPolicy;
  /** The longest Retry-After waited for (default 30 s); longer gives up as rate_limited. */
  maxRetryAfterMs?: number;
  /** Failed requests in a row that open the breaker, and how long it stays open (5, 30 s). */
  breaker?: { threshold: number; coolDownMs: number };
  /** Requests per minute at most (WIREWATCH_EXTRACT_LLM_RPM). */
  requestsPerMinute?: number;
  /** The price table (default: the built-in one under WIREWATCH_LLM_PRICES). */
  prices?: PriceTable;
  /** The answer's token limit (default 1,000: 50 entities and a 300-character summary fit). */
  maxTokens?: number;
  clock?: Clock;
}

const DEFAULTS = {
  timeoutMs: 30_000,
  attempts: 3,
  backoff: { baseMs: 500, capMs: 8_000 } satisfies BackoffPolicy,
  maxRetryAfterMs: 30_000,
  // Five failed requests in a row: one call's three attempts and two more, the supplier is down.
  // 30 s open lets the chain's next provider answer at once, and notices a recovered supplier
  // within half a minute.
  breaker: { threshold: 5, coolDownMs: 30_000 },
  maxTokens: 1_000,
};

/** The system prompt: the schema in words (the JSON Schema goes as response_format). */
export const SYSTEM_PROMPT = [
  "You extract structured facts from one news item for a newsroom's pipeline.",
  'The item comes as JSON: {"title": …, "summary"?: …, "languageHint"?: …}.',
  "Answer with one JSON object and nothing else, with exactly these four fields:",
  '- "language": "bn" (Bangla), "en" (English) or "other": the language the item is written in; a Bangla sentence that names English companies or people is still "bn".',
  `- "category": one of ${CATEGORIES.join(", ")}; or null when none fits.`,
  `- "entities": at most ${MAX_ENTITIES} objects {"text", "type"}, each named in the item, "text" as written there (1 to 200 characters), "type" one of ${ENTITY_TYPES.join(", ")}. An instrument is a traded security, index, commodity benchmark or currency pair; write tickers upper case ("GP", "AAPL", "USD/BDT"). Name each entity once.`,
  `- "summary": null when the item has no summary or one of ${MAX_SUMMARY_CHARS} characters or fewer; otherwise a summary of the item in its own language, at most ${MAX_SUMMARY_CHARS} characters.`,
  "No other fields, no comments, no Markdown.",
].join("\n");

type Failure = Extract<ProviderAnswer, { ok: false }>;

/** A failed attempt, as the retry loop sees it. */
class AttemptFailed extends Error {
  constructor(
    readonly answer: Failure,
    readonly retryable: boolean,
  ) {
    super(answer.message);
  }
}

export class OpenAICompatibleProvider implements ExtractionProvider {
  readonly name = "llm";
  readonly promptVersion = PROMPT_VERSION;
  readonly paid = true;
  readonly model: string;
  readonly breaker: CallBreaker;
  private readonly url: string;
  private readonly pacer: RequestPacer;
  private readonly clock: Clock;
  private readonly settings: typeof DEFAULTS;
  private readonly schema = extractionJsonSchema();

  constructor(private readonly options: OpenAICompatibleOptions) {
    const base = new URL(options.baseUrl);
    if (!/^https?:$/.test(base.protocol)) {
      throw new Error(`the chat server's URL must be http or https: ${base}`);
    }
    this.url = `${base.href.replace(/\/+$/, "")}/chat/completions`;
    this.model = options.model;
    this.clock = options.clock ?? systemClock;
    this.settings = {
      timeoutMs: options.timeoutMs ?? DEFAULTS.timeoutMs,
      attempts: options.attempts ?? DEFAULTS.attempts,
      backoff: options.backoff ?? DEFAULTS.backoff,
      maxRetryAfterMs: options.maxRetryAfterMs ?? DEFAULTS.maxRetryAfterMs,
      breaker: options.breaker ?? DEFAULTS.breaker,
      maxTokens: options.maxTokens ?? DEFAULTS.maxTokens,
    };
    this.breaker = new CallBreaker(this.settings.breaker, this.clock);
    this.pacer = new RequestPacer(options.requestsPerMinute, this.clock);
  }

  /** The request body (exported for tests: what the server is sent). */
  request(input: ExtractInput, correction?: ProviderCallOptions["correction"]) {
    const item: Record<string, string> = { title: input.title.trim() };
    const summary = plainText(input.summary);
    if (summary) item.summary = summary;
    if (input.languageHint) item.languageHint = input.languageHint;
    const messages: { role: "system" | "user" | "assistant"; content: string }[] = [
      { role: "system", content: SYSTEM_PROMPT },
      { role: "user", content: JSON.stringify(item) },
    ];
    if (correction) {
      messages.push(
        { role: "assistant", content: truncate(correction.previousRaw) },
        {
          role: "user",
          content: `Your answer was refused:\n${correction.errors.map((e) => `- ${e}`).join("\n")}\nAnswer again about the same item with one JSON object that satisfies every rule above.`,
        },
      );
    }
    return {
      model: this.model,
      messages,
      temperature: 0,
      max_tokens: this.settings.maxTokens,
      response_format: {
        type: "json_schema",
        json_schema: { name: "extraction", strict: true, schema: this.schema },
      },
    };
  }

  async call(input: ExtractInput, options: ProviderCallOptions = {}): Promise<ProviderAnswer> {
    const problem = inputProblem(input);
    if (problem) return failure("bad_input", problem, zeroUsage());
    const body = JSON.stringify(this.request(input, options.correction));
    const { signal } = options;
    try {
      return await retry((n) => this.attempt(body, n + 1, signal), {
        attempts: this.settings.attempts,
        policy: this.settings.backoff,
        clock: this.clock,
        ...(signal ? { signal } : {}),
        decide: (outcome) => {
          if (!("error" in outcome)) return null;
          const err = outcome.error;
          if (!(err instanceof AttemptFailed) || !err.retryable || signal?.aborted) return null;
          const wait = err.answer.retryAfterMs;
          const verdict = wait === undefined ? undefined : wait;
          // Told before the wait: the chain records the attempt now, with its own latency.
          try {
            options.onRetried?.(err.answer);
          } catch {}
          return verdict;
        },
      });
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      if (err instanceof AttemptFailed) return err.answer;
      return failure("provider_error", (err as Error).message ?? String(err), zeroUsage());
    }
  }

  async close(): Promise<void> {}

  private async attempt(
    body: string,
    attempt: number,
    signal: AbortSignal | undefined,
  ): Promise<ProviderAnswer> {
    if (!this.breaker.allow()) {
      const at = new Date(this.breaker.reopensAt ?? this.clock.now()).toISOString();
      throw new AttemptFailed(
        failure(
          "breaker_open",
          `the breaker is open after repeated failures; no request sent (next probe ${at})`,
          zeroUsage(),
        ),
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
    const usage = (status: number | null, tokensIn = 0, tokensOut = 0) => ({
      tokensIn,
      tokensOut,
      costUsd: costOf(this.model, tokensIn, tokensOut, this.options.prices ?? priceTable()),
      latencyMs: this.clock.now() - started,
      status,
    });
    const tries = attempt > 1 ? ` (attempt ${attempt})` : "";

    const timeout = AbortSignal.timeout(this.settings.timeoutMs);
    const both = signal ? AbortSignal.any([signal, timeout]) : timeout;
    let status: number | null = null;
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
        body,
        signal: both,
      });
      status = res.status;
      retryAfter = res.headers.get("retry-after");
      text = await res.text();
    } catch (err) {
      if (signal?.aborted) {
        this.breaker.cancel();
        throw signal.reason;
      }
      this.breaker.failed();
      const timedOut = timeout.aborted;
      const why = timedOut
        ? `no complete answer within ${this.settings.timeoutMs} ms${tries}`
        : `no answer: ${connectionError(err)}${tries}`;
      throw new AttemptFailed(
        failure(timedOut ? "timeout" : "provider_error", why, usage(status)),
        true,
      );
    }

    if (status !== 200) {
      const message = `HTTP ${status}${serverMessage(text)}${tries}`;
      const raw = truncate(text);
      if (status === 429 || status === 503) {
        this.breaker.failed();
        const waitMs = parseRetryAfter(retryAfter, this.clock.now());
        if (waitMs !== undefined) this.pacer.holdUntil(this.clock.now() + waitMs);
        const code: ExtractFailureCode = status === 429 ? "rate_limited" : "provider_error";
        const past = waitMs !== undefined && waitMs > this.settings.maxRetryAfterMs;
        const capped = past
          ? `; Retry-After ${Math.round((waitMs as number) / 1000)} s is past the ${this.settings.maxRetryAfterMs / 1000} s cap`
          : "";
        throw new AttemptFailed(
          {
            ...failure(code, `${message}${capped}`, usage(status)),
            rawText: raw,
            ...(waitMs !== undefined ? { retryAfterMs: waitMs } : {}),
          },
          !past,
        );
      }
      if (status === 408 || status >= 500) {
        this.breaker.failed();
        throw new AttemptFailed(
          { ...failure("provider_error", message, usage(status)), rawText: raw },
          true,
        );
      }
      this.breaker.answered();
      if (status === 400 || status === 413 || status === 422) {
        throw new AttemptFailed(
          { ...failure("bad_input", `refused the input: ${message}`, usage(status)), rawText: raw },
          false,
        );
      }
      // 405: the URL is not the API's (a POST to a page); a wrong URL like a 404.
      if (status === 401 || status === 403 || status === 404 || status === 405) {
        throw new AttemptFailed(
          {
            ...failure(
              "unavailable",
              `${message}: check the API key (WIREWATCH_EXTRACT_LLM_API_KEY), the URL and the model name`,
              usage(status),
            ),
            rawText: raw,
          },
          false,
        );
      }
      throw new AttemptFailed(
        { ...failure("provider_error", message, usage(status)), rawText: raw },
        false,
      );
    }

    this.breaker.answered();
    return this.read(text, body, usage);
  }

  /** A 200's body: the content's JSON, or malformed with what came (tokens billed all the same). */
  private read(
    text: string,
    requestBody: string,
    usage: (
      status: number | null,
      tokensIn?: number,
      tokensOut?: number,
    ) => ReturnType<typeof zeroUsage>,
  ): ProviderAnswer {
    let completion: unknown;
    try {
      completion = JSON.parse(text);
    } catch {
      const t = usageOf(undefined, requestBody, text);
      throw new AttemptFailed(
        {
          ...failure("malformed", "the answer is not JSON", usage(200, t.in, t.out)),
          rawText: truncate(text),
        },
        false,
      );
    }
    const choice = (completion as { choices?: unknown })?.choices;
    const message = Array.isArray(choice)
      ? (choice[0] as { message?: unknown })?.message
      : undefined;
    const content = (message as { content?: unknown } | undefined)?.content;
    const refusal = (message as { refusal?: unknown } | undefined)?.refusal;
    const t = usageOf(
      (completion as { usage?: unknown })?.usage,
      requestBody,
      typeof content === "string" ? content : text,
    );
    const spent = usage(200, t.in, t.out);
    if (typeof refusal === "string" && refusal) {
      throw new AttemptFailed(
        {
          ...failure("malformed", `the model refused: ${refusal.slice(0, 300)}`, spent),
          rawText: truncate(refusal),
        },
        false,
      );
    }
    if (typeof content !== "string") {
      throw new AttemptFailed(
        {
          ...failure(
            "malformed",
            "not a chat completion: no choices[0].message.content string",
            spent,
          ),
          rawText: truncate(text),
        },
        false,
      );
    }
    let candidate: unknown;
    try {
      candidate = JSON.parse(stripFence(content));
    } catch {
      const empty = content.trim() === "";
      const why = empty ? "the content is empty" : "the content is not JSON";
      // An empty content says nothing for the dead letter: the whole body does.
      throw new AttemptFailed(
        { ...failure("malformed", why, spent), rawText: truncate(empty ? text : content) },
        false,
      );
    }
    return { ok: true, candidate, rawText: truncate(content), ...spent };
  }
}

function zeroUsage() {
  return { tokensIn: 0, tokensOut: 0, costUsd: 0, latencyMs: 0, status: null as number | null };
}

function failure(
  code: ExtractFailureCode,
  message: string,
  usage: ReturnType<typeof zeroUsage>,
): Failure {
  return { ok: false, code, message, ...usage };
}

/**
 * Tokens from the answer's `usage`, else estimated: a quarter of the UTF-8 bytes (English runs
 * ~4 characters a token; Bengali letters are 3 bytes and 1-2 letters a token), never zero.
 */
function usageOf(
  usage: unknown,
  requestBody: string,
  content: string,
): { in: number; out: number } {
  const u = (usage ?? {}) as { prompt_tokens?: unknown; completion_tokens?: unknown };
  const count = (v: unknown) =>
    typeof v === "number" && Number.isFinite(v) && v >= 0 ? Math.round(v) : undefined;
  const estimate = (s: string) => Math.max(1, Math.ceil(Buffer.byteLength(s) / 4));
  return {
    in: count(u.prompt_tokens) ?? estimate(requestBody),
    out: count(u.completion_tokens) ?? estimate(content),
  };
}

/** A model that wraps its JSON in a Markdown fence despite the prompt still answered JSON. */
function stripFence(content: string): string {
  const m = content.trim().match(/^```(?:json)?\s*\n([\s\S]*?)\n?```$/u);
  return m ? (m[1] as string) : content;
}

function serverMessage(text: string): string {
  let message: unknown = text;
  try {
    message = (JSON.parse(text) as { error?: { message?: unknown } })?.error?.message ?? text;
  } catch {}
  const flat = String(message).replace(/\s+/g, " ").trim().slice(0, 300);
  return flat ? `: ${flat}` : "";
}

function connectionError(err: unknown): string {
  const e = err as Error & { cause?: NodeJS.ErrnoException };
  return e.cause?.code ?? e.cause?.message ?? e.message ?? String(err);
}
