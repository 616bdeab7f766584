/**
 * Embeddings as a supplier (seed 002): every vector records the model that made it, so several
 * models coexist and a model change is a backfill, never a stop-the-world migration.
 */

/** Where a model comes from. */
export type EmbeddingProvider = "shipped" | "onnx" | "http" | "lexical";

/**
 * "meaning": a sentence model. "lexical": hashed character n-grams, a fallback that is always
 * labelled lexical (UI, API) and never presented as meaning.
 */
export type EmbeddingKind = "meaning" | "lexical";

/** What is stored with every vector (embedding_models), and printed by `cli embed`. */
export interface ModelInfo {
  /** The id: "<provider>:<name>@<version>", e.g. "shipped:use-lite@0.2.0". */
  model: string;
  provider: EmbeddingProvider;
  name: string;
  version: string;
  dims: number;
  kind: EmbeddingKind;
  /** Languages it understands ('en', 'bn'). */
  languages: string[];
  /** A Bangla text and its English translation land near each other. */
  crossLingual: boolean;
  /**
   * Stage 4 (meaning), calibrated on labelled pairs for this model: cosine ≥ meaningThreshold
   * links a grey-band pair; < distinctThreshold: not a duplicate, no review. Absent: this model
   * gives no stage-4 verdict (the lexical fallback never does).
   */
  meaningThreshold?: number;
  distinctThreshold?: number;
  /** How the thresholds were fitted: corpus, pairs, accuracy, F1. */
  calibration?: Record<string, unknown>;
}

/** What a query or a stored item is: some models embed the two differently (e5's prefixes). */
export type EmbedPurpose = "query" | "passage";

export interface EmbedOptions {
  purpose?: EmbedPurpose;
  signal?: AbortSignal;
}

/** Vectors of one call, all by one model (a failover may answer with its fallback's model). */
export interface EmbedBatch {
  model: ModelInfo;
  /** One unit-length (L2-normalised) vector per input text, in order, each `model.dims` long. */
  vectors: Float32Array[];
}

export interface Embedder {
  /** The model this embedder answers with when it is healthy. */
  readonly info: ModelInfo;
  embed(texts: string[], options?: EmbedOptions): Promise<EmbedBatch>;
  /** Frees a worker thread, a model session. Safe to call twice. */
  close(): Promise<void>;
}

/** One call to a supplier, for the cost ledger (provider_calls). */
export interface ProviderCallRecord {
  at?: Date;
  purpose: "embed" | "extract";
  provider: string;
  model: string;
  ok: boolean;
  status?: number | null;
  error?: string | null;
  items: number;
  inputTokens?: number;
  outputTokens?: number;
  costUsd?: number;
  latencyMs: number;
  attempt?: number;
  /** Extraction: the prompt's version. */
  promptVersion?: string | null;
  /** "ok" or the failure's code (lib/extract/types.ts EXTRACT_FAILURE_CODES). */
  outcome?: string | null;
  /** Extraction: this call was the correction retry. */
  correction?: boolean;
  /** Extraction: the item the call was for. */
  entryKey?: string | null;
  itemVersion?: number | null;
  sourceId?: string | null;
}

/** Where provider calls are recorded. Must not throw into the caller. */
export interface CallLedger {
  record(call: ProviderCallRecord): void;
}

/** Errors a caller can tell apart: a provider down or refusing, against an answer we refuse. */
export class EmbeddingError extends Error {
  constructor(
    message: string,
    readonly code:
      | "unavailable" // not loaded, not installed, directory missing
      | "rate_limited" // 429 after its retries
      | "provider_error" // 5xx, timeout, connection refused after retries; breaker open
      | "invalid_answer" // malformed JSON, wrong count, wrong dimensions, non-finite numbers
      | "bad_input", // empty list, text too long
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "EmbeddingError";
  }
}
