import { type EmbedBatch, type Embedder, EmbeddingError, type EmbedOptions } from "./types";

/**
 * A primary embedder with a fallback: when the primary is rate limited or down (rate_limited,
 * provider_error, its breaker open included), the same texts go to the fallback, and the batch
 * says so: its `model` is the fallback's. A batch is always one model's, never a mix; the caller
 * stores each vector under the model on its batch.
 *
 * Other failures are not fallen over from: bad_input would fail the fallback too, and an
 * invalid_answer (wrong dimensions, a malformed body) or unavailable (a wrong key, URL or model
 * name) is a misconfiguration that must be seen, not hidden behind a working fallback.
 */
export interface FailoverOptions {
  /** Told when a call is answered by the fallback, with the primary's error. */
  onFailover?: (error: EmbeddingError, batch: EmbedBatch) => void;
}

const FALLS_OVER: EmbeddingError["code"][] = ["rate_limited", "provider_error"];

export class FailoverEmbedder implements Embedder {
  constructor(
    readonly primary: Embedder,
    readonly fallback: Embedder,
    private readonly options: FailoverOptions = {},
  ) {}

  get info() {
    return this.primary.info;
  }

  async embed(texts: string[], options: EmbedOptions = {}): Promise<EmbedBatch> {
    let primaryError: EmbeddingError;
    try {
      return await this.primary.embed(texts, options);
    } catch (err) {
      if (!(err instanceof EmbeddingError) || !FALLS_OVER.includes(err.code)) throw err;
      primaryError = err;
    }
    options.signal?.throwIfAborted();
    let batch: EmbedBatch;
    try {
      batch = await this.fallback.embed(texts, options);
    } catch (err) {
      if (!(err instanceof EmbeddingError)) throw err;
      throw new EmbeddingError(
        `${primaryError.message}; the fallback ${this.fallback.info.model} failed too: ${err.message}`,
        err.code,
        { cause: err },
      );
    }
    try {
      this.options.onFailover?.(primaryError, batch);
    } catch {}
    return batch;
  }

  async close(): Promise<void> {
    await Promise.all([this.primary.close(), this.fallback.close()]);
  }
}
