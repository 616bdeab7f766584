/**
 * Extraction as a supplier, not an oracle (seed 002): what an item is about (language, category,
 * entities, a short summary) from a chain of providers in a fallback order. Every answer is
 * validated against the declared schema (schema.ts) before anything trusts it; a malformed one
 * gets one correction retry that feeds the validation errors back; still invalid, rate limited,
 * down or over its budget → the next provider; every attempt is costed in the ledger
 * (provider_calls). Nothing invalid is ever returned, so nothing invalid is ever stored.
 *
 * This file is the contract the providers (providers/), the chain (chain.ts), the extract stage
 * (workers/extract) and the Costs page build on.
 */

export const EXTRACTION_LANGUAGES = ["bn", "en", "other"] as const;
export type ExtractionLanguage = (typeof EXTRACTION_LANGUAGES)[number];

/**
 * The categories an extraction may name: the newsroom simulator's nine and the other common
 * desks, so a category from any provider is one a filter and the read model can group by.
 */
export const CATEGORIES = [
  "politics",
  "economy",
  "business",
  "markets",
  "currencies",
  "commodities",
  "technology",
  "science",
  "health",
  "environment",
  "weather",
  "sports",
  "crime",
  "world",
  "entertainment",
  "education",
] as const;
export type Category = (typeof CATEGORIES)[number];

export const ENTITY_TYPES = ["person", "place", "organization", "instrument"] as const;
export type EntityType = (typeof ENTITY_TYPES)[number];

export interface Entity {
  /** As written in the text (a ticker upper case, e.g. "GP", "AAPL"). */
  text: string;
  type: EntityType;
}

/** What an item is about: the validated result every provider must produce. */
export interface Extraction {
  language: ExtractionLanguage;
  /** One of CATEGORIES, or null when nothing fits. */
  category: Category | null;
  entities: Entity[];
  /** A short summary (≤ 300 characters) when the item had none; else null. */
  summary: string | null;
}

/** What a provider is asked about: one item's text. */
export interface ExtractInput {
  title: string;
  summary?: string | null;
  /** The feed's own language tag, a hint only ("en-US", "bn"). */
  languageHint?: string | null;
}

/** What the ledger ties a call to: the item it was for (absent for `cli extract`). */
export interface ExtractSubject {
  entryKey: string;
  itemVersion: number;
  sourceId: string;
}

/**
 * Why an attempt failed, as stable codes (shown on the dashboard, stored on provider_calls and
 * on the dead letter). Which of them fall over to the next provider: all but bad_input (the
 * input itself is unusable: no provider would do better).
 */
export const EXTRACT_FAILURE_CODES = [
  "rate_limited", // 429 after the provider's retries, or Retry-After past the cap
  "timeout", // no complete answer within the attempt's timeout
  "provider_error", // 5xx, refused or reset connection, after the provider's retries
  "breaker_open", // the provider's breaker is open: not called
  "skipped", // held back until a Retry-After passes: not called
  "budget_exhausted", // the provider's daily budget is spent: not called
  "malformed", // the answer is not JSON (or not the chat completion's shape)
  "schema_violation", // JSON that does not satisfy the declared schema
  "unavailable", // 401/403/404: wrong key, URL or model name; not configured
  "bad_input", // an empty title, a text over the cap
] as const;
export type ExtractFailureCode = (typeof EXTRACT_FAILURE_CODES)[number];

/** Usage and timing of one provider call (a failed one too, when it was billed). */
export interface CallUsage {
  tokensIn: number;
  tokensOut: number;
  /** tokens × the price table's price for the model (prices.ts); 0 for the local provider. */
  costUsd: number;
  latencyMs: number;
  /** The HTTP status, or null (no answer, or not over HTTP). */
  status: number | null;
}

/** A provider's raw answer: the candidate JSON, unvalidated, and the text it came as. */
export type ProviderAnswer =
  | ({ ok: true; candidate: unknown; rawText: string } & CallUsage)
  | ({
      ok: false;
      code: ExtractFailureCode;
      message: string;
      /** What the provider sent, truncated to 4 KiB, for the dead letter. */
      rawText?: string;
      /** From a 429's (or 503's) Retry-After: the chain skips this provider until then. */
      retryAfterMs?: number;
    } & CallUsage);

/** When the answer before was invalid: what it said and why it was refused. */
export interface Correction {
  previousRaw: string;
  errors: string[];
}

export interface ProviderCallOptions {
  signal?: AbortSignal;
  correction?: Correction;
  /**
   * Told of each failed attempt the provider retried itself (a 429, a 5xx, a timeout), before
   * the next: the answer `call()` returns is the last attempt's, and the ledger records every one.
   */
  onRetried?: (failed: Extract<ProviderAnswer, { ok: false }>) => void;
}

export interface ExtractionProvider {
  /** The provider's name in the chain and the ledger: "local", "llm". */
  readonly name: string;
  /** The model it answers with ("local-rules@1", "gpt-4o-mini"). */
  readonly model: string;
  readonly promptVersion: string;
  /** Costs money: subject to the daily budget. */
  readonly paid: boolean;
  /**
   * One call (the provider's own HTTP retries with full jitter inside it). Never throws: every
   * failure is a `{ ok: false, code }` answer.
   */
  call(input: ExtractInput, options?: ProviderCallOptions): Promise<ProviderAnswer>;
  close?(): Promise<void>;
}

/** One attempt of the chain, as the ledger and the dead letter record it. */
export interface ExtractAttempt extends CallUsage {
  provider: string;
  model: string;
  promptVersion: string;
  ok: boolean;
  /** "ok", or the failure's code. */
  outcome: "ok" | ExtractFailureCode;
  error: string | null;
  /** This attempt was the correction retry. */
  correction: boolean;
  /** The raw answer (≤ 4 KiB) when it was refused. */
  rawText: string | null;
}

/** A valid extraction and what it took to get it. */
export interface ExtractResult {
  extraction: Extraction;
  provider: string;
  model: string;
  promptVersion: string;
  /** Answered by a provider after the first of the chain. */
  fellOver: boolean;
  /** Every attempt of this call, in order (the valid one last). */
  attempts: ExtractAttempt[];
  tokensIn: number;
  tokensOut: number;
  costUsd: number;
}

/**
 * Every provider of the chain failed: the job retries with growing delay, then dead-letters in
 * stage `extract` with `attempts` (raw answers and errors) attached.
 */
export class ExtractionFailedError extends Error {
  constructor(
    message: string,
    readonly attempts: ExtractAttempt[],
    /** The input itself is unusable (bad_input): retrying cannot help. */
    readonly permanent = false,
  ) {
    super(message);
    this.name = "ExtractionFailedError";
  }
}

/** The chain the extract stage and `cli extract` call. */
export interface Extractor {
  /**
   * The configured chain, e.g. "llm:gpt-4o-mini/extract-v2>local:local-rules@1/local-v1": stored
   * with every result; another id (a model or prompt change) starts a backfill.
   */
  readonly id: string;
  readonly providers: readonly ExtractionProvider[];
  /** Throws ExtractionFailedError when no provider gave a valid answer. */
  extract(
    input: ExtractInput,
    options?: { signal?: AbortSignal; subject?: ExtractSubject },
  ): Promise<ExtractResult>;
  close(): Promise<void>;
}
