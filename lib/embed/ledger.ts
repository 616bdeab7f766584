import { emit } from "@/lib/events";
import type { Database } from "../db";
import type { CallLedger, ProviderCallRecord } from "./types";

/**
 * The cost ledger: every call to a supplier, one provider_calls row each (the Costs page and the
 * cost metrics read them). A provider records and moves on: `record()` only appends to a buffer
 * and never throws, so neither a slow nor a failing database holds up or fails an embedding.
 * Rows are written in batches (one INSERT for up to `batchSize`) when that many wait, or
 * `flushIntervalMs` after the first of them, and on `flush()`.
 *
 * A batch that cannot be written stays buffered for the next flush; past `maxBuffered` the
 * oldest rows are dropped and counted (`stats.dropped`), so a database that stays down costs
 * memory up to a bound, not without one.
 */
export interface DatabaseLedgerOptions {
  /** Rows per INSERT, and the count that starts a flush (default 100). */
  batchSize?: number;
  /** A flush at most this long after the first buffered row (default 2 s). */
  flushIntervalMs?: number;
  /** Rows kept while the database refuses them (default 10,000, about 3 MB). */
  maxBuffered?: number;
  /** Told about a failed write (default: nothing; the stats keep the last error). */
  onError?: (error: unknown, rows: number) => void;
}

export interface LedgerStats {
  recorded: number;
  written: number;
  dropped: number;
  failedFlushes: number;
  lastError: string | null;
}

/** A provider_calls row as Prisma writes it. */
type Nullable =
  | "status"
  | "error"
  | "promptVersion"
  | "outcome"
  | "entryKey"
  | "itemVersion"
  | "sourceId";
type Row = Required<Omit<ProviderCallRecord, Nullable>> & {
  [K in Nullable]: NonNullable<ProviderCallRecord[K]> | null;
};

export class DatabaseCallLedger implements CallLedger {
  readonly stats: LedgerStats = {
    recorded: 0,
    written: 0,
    dropped: 0,
    failedFlushes: 0,
    lastError: null,
  };
  private buffer: Row[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private readonly batchSize: number;
  private readonly flushIntervalMs: number;
  private readonly maxBuffered: number;

  constructor(
    private readonly db: Pick<Database, "prisma">,
    private readonly options: DatabaseLedgerOptions = {},
  ) {
    this.batchSize = options.batchSize ?? 100;
    this.flushIntervalMs = options.flushIntervalMs ?? 2_000;
    this.maxBuffered = options.maxBuffered ?? 10_000;
  }

  record(call: ProviderCallRecord): void {
    try {
      this.buffer.push({
        at: call.at ?? new Date(),
        purpose: call.purpose,
        provider: call.provider,
        model: call.model,
        ok: call.ok,
        status: call.status ?? null,
        error: call.error ? call.error.slice(0, 2_000) : null,
        items: count(call.items),
        inputTokens: count(call.inputTokens),
        outputTokens: count(call.outputTokens),
        costUsd: Number.isFinite(call.costUsd) ? (call.costUsd as number) : 0,
        latencyMs: Number.isFinite(call.latencyMs) ? call.latencyMs : 0,
        attempt: Math.max(1, count(call.attempt ?? 1)),
        promptVersion: call.promptVersion ?? null,
        outcome: call.outcome ?? (call.ok ? "ok" : null),
        correction: call.correction === true,
        entryKey: call.entryKey ?? null,
        itemVersion: call.itemVersion ?? null,
        sourceId: call.sourceId ?? null,
      });
      this.stats.recorded++;
      const row = this.buffer[this.buffer.length - 1] as Row;
      // The cost and call metrics (lib/metrics) count from the event, the Costs page from rows.
      emit("provider:call", {
        purpose: row.purpose,
        provider: row.provider,
        model: row.model,
        ok: row.ok,
        status: row.status,
        costUsd: row.costUsd,
        inputTokens: row.inputTokens,
        outputTokens: row.outputTokens,
        latencyMs: row.latencyMs,
        outcome: row.outcome ?? (row.ok ? "ok" : "error"),
        correction: row.correction,
      });
      this.trim();
      if (this.buffer.length >= this.batchSize) void this.flush();
      else if (!this.timer) {
        this.timer = setTimeout(() => void this.flush(), this.flushIntervalMs);
        // A pending flush must not keep a finished CLI alive; close() flushes what is left.
        this.timer.unref();
      }
    } catch {
      // A ledger never fails its caller; a record it cannot even read is lost, and counted.
      this.stats.dropped++;
    }
  }

  /** Writes everything buffered so far; resolves when done, also when the write failed. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.flushing = this.flushing.then(() => this.writeAll());
    return this.flushing;
  }

  /** The last flush. Recording after it still works (and is flushed by the timer). */
  close(): Promise<void> {
    return this.flush();
  }

  private async writeAll(): Promise<void> {
    while (this.buffer.length > 0) {
      const rows = this.buffer.splice(0, this.batchSize);
      try {
        await this.db.prisma.providerCall.createMany({ data: rows });
      } catch (err) {
        this.stats.failedFlushes++;
        this.stats.lastError = (err as Error).message ?? String(err);
        // Back in front, in order, for the next flush.
        this.buffer.unshift(...rows);
        this.trim();
        try {
          this.options.onError?.(err, rows.length);
        } catch {}
        return;
      }
      this.stats.written += rows.length;
    }
  }

  private trim(): void {
    const over = this.buffer.length - this.maxBuffered;
    if (over > 0) {
      this.buffer.splice(0, over);
      this.stats.dropped += over;
    }
  }
}

/** Keeps the records in memory: `cli embed`, which opens no database, and tests. */
export class MemoryCallLedger implements CallLedger {
  readonly calls: ProviderCallRecord[] = [];

  record(call: ProviderCallRecord): void {
    this.calls.push({ ...call, at: call.at ?? new Date() });
  }

  /** Tokens and cost of everything recorded. */
  totals(): { calls: number; inputTokens: number; costUsd: number } {
    return {
      calls: this.calls.length,
      inputTokens: this.calls.reduce((n, c) => n + (c.inputTokens ?? 0), 0),
      costUsd: this.calls.reduce((n, c) => n + (c.costUsd ?? 0), 0),
    };
  }
}

function count(n: number | undefined): number {
  return Number.isFinite(n) ? Math.max(0, Math.round(n as number)) : 0;
}
