import type { Delivery, Writer } from "@/workers/store";

export interface StreamWritesOptions {
  /**
   * Events per batch at most. 200: the write buffer's batch and writeBatch's statement size on
   * PostgreSQL, so a burst of breaking news is one statement per 200 events, not 200 statements.
   */
  maxEvents?: number;
  /**
   * How long the first waiting event waits for others. 20 ms: what a headline gains in company
   * costs it at most this, under the 28 ms by which seed 000's page beats the stream.
   */
  maxWaitMs?: number;
}

/**
 * A stream's events on their way to the writer, in small batches: a batch goes when it holds
 * `maxEvents`, or `maxWaitMs` after its first event, whichever comes first. One batch is in
 * flight at a time and writeBatch applies a batch in order, so an item's events are written in
 * the order they arrived. `lastSeq` (the stream's position) moves only once a batch is written,
 * so a backfill after a drop asks again for whatever was not yet durable. After a failed batch
 * nothing more is written: later events of the same items would otherwise land without the
 * earlier ones; the caller drops the connection and the backfill brings them again.
 */
export class StreamWrites {
  lastSeq: number | null = null;
  private pending: { delivery: Delivery; seq?: number }[] = [];
  private inFlight: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private failure: { error: unknown } | null = null;
  private readonly maxEvents: number;
  private readonly maxWaitMs: number;

  constructor(
    private readonly write: Writer,
    /** After each batch is written (content arrival, the stream:events event). */
    private readonly written: (batch: Delivery[]) => Promise<void>,
    options: StreamWritesOptions = {},
  ) {
    this.maxEvents = Math.max(1, options.maxEvents ?? 200);
    this.maxWaitMs = Math.max(0, options.maxWaitMs ?? 20);
  }

  /** Events handed over and not yet written. */
  get waiting(): number {
    return this.pending.length;
  }

  /** Queues one event; at a full batch, waits for it to be written (the stream's backpressure). */
  async add(delivery: Delivery, seq?: number): Promise<void> {
    this.throwIfFailed();
    this.pending.push({ delivery, seq });
    if (this.pending.length >= this.maxEvents) return this.flush();
    this.timer ??= setTimeout(() => {
      this.flush().catch(() => undefined); // kept in `failure`, thrown by the next add or flush
    }, this.maxWaitMs);
  }

  /** Writes whatever waits, after the batch in flight; throws if any batch failed. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.pending.splice(0);
    const run = this.inFlight.then(async () => {
      if (this.failure || batch.length === 0) return;
      try {
        await this.write(batch.map((b) => b.delivery));
      } catch (error) {
        this.failure = { error };
        return;
      }
      for (const { seq } of batch) {
        if (seq !== undefined) this.lastSeq = Math.max(this.lastSeq ?? 0, seq);
      }
      await this.written(batch.map((b) => b.delivery));
    });
    this.inFlight = run.catch(() => undefined);
    return run.then(() => this.throwIfFailed());
  }

  private throwIfFailed(): void {
    if (this.failure) throw this.failure.error;
  }
}
