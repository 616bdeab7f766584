import { on } from "@/lib/events";

/**
 * Search latency as the Meaning page shows it: the last searches this server process answered
 * ("search:done" on the bus), kept in a ring. In-process on purpose: a search is answered by the
 * process that took the request, so each process knows its own; the fleet-wide figure is the
 * wirewatch_search_seconds histogram that Prometheus adds up. 500 searches are a few minutes of
 * a busy dashboard, or a day of a quiet one, and sorting 500 numbers per page poll is nothing.
 */
export const SEARCH_LATENCY_KEPT = 500;

export interface SearchLatency {
  /** Searches in the ring (at most `kept`). */
  count: number;
  kept: number;
  /** Searches answered since this process started, the ring's and those it has dropped. */
  seen: number;
  p50Ms: number | null;
  p95Ms: number | null;
  maxMs: number | null;
  /** Of `count`, answered by full text only (no meaning model in use). */
  fullTextOnly: number;
  oldestAt: string | null;
  newestAt: string | null;
}

/** The last `capacity` latencies, oldest overwritten first. */
export class LatencyRing {
  private readonly seconds: Float64Array;
  private readonly at: Float64Array;
  private readonly fullText: Uint8Array;
  private next = 0;
  private size = 0;
  private total = 0;

  constructor(readonly capacity = SEARCH_LATENCY_KEPT) {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new RangeError(`a latency ring holds at least one search, not ${capacity}`);
    }
    this.seconds = new Float64Array(capacity);
    this.at = new Float64Array(capacity);
    this.fullText = new Uint8Array(capacity);
  }

  /** A search's time; one that is not a finite, non-negative number of seconds is not kept. */
  add(seconds: number, fullTextOnly: boolean, at = Date.now()): void {
    if (!Number.isFinite(seconds) || seconds < 0) return;
    this.seconds[this.next] = seconds;
    this.at[this.next] = at;
    this.fullText[this.next] = fullTextOnly ? 1 : 0;
    this.next = (this.next + 1) % this.capacity;
    this.size = Math.min(this.size + 1, this.capacity);
    this.total += 1;
  }

  summary(): SearchLatency {
    const ms = Array.from(this.seconds.subarray(0, this.size), (s) => s * 1000).sort(
      (a, b) => a - b,
    );
    let oldest = Number.POSITIVE_INFINITY;
    let newest = Number.NEGATIVE_INFINITY;
    let fullTextOnly = 0;
    for (let i = 0; i < this.size; i++) {
      oldest = Math.min(oldest, this.at[i] as number);
      newest = Math.max(newest, this.at[i] as number);
      fullTextOnly += this.fullText[i] as number;
    }
    const empty = this.size === 0;
    return {
      count: this.size,
      kept: this.capacity,
      seen: this.total,
      p50Ms: percentile(ms, 0.5),
      p95Ms: percentile(ms, 0.95),
      maxMs: empty ? null : (ms.at(-1) as number),
      fullTextOnly,
      oldestAt: empty ? null : new Date(oldest).toISOString(),
      newestAt: empty ? null : new Date(newest).toISOString(),
    };
  }
}

/** Linear between the two nearest ranks, as PostgreSQL's percentile_cont (the other tiles). */
export function percentile(sorted: readonly number[], q: number): number | null {
  if (sorted.length === 0) return null;
  const rank = (sorted.length - 1) * q;
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  const a = sorted[lo] as number;
  return a + ((sorted[hi] as number) - a) * (rank - lo);
}

// On globalThis, like the bus: Next.js bundles instrumentation and route handlers separately,
// and one ring per bundle would leave the page reading one that hears nothing.
const processRing = globalThis as unknown as {
  wirewatchSearchLatency?: { ring: LatencyRing; unsubscribe: () => void };
};

/**
 * Starts keeping this process's search latencies; called at server start (so searches before
 * the first page view count) and again, harmlessly, by every read.
 */
export function trackSearchLatency(): LatencyRing {
  if (!processRing.wirewatchSearchLatency) {
    const ring = new LatencyRing();
    const unsubscribe = on("search:done", (e) => ring.add(e.seconds, e.model === null));
    processRing.wirewatchSearchLatency = { ring, unsubscribe };
  }
  return processRing.wirewatchSearchLatency.ring;
}

/** The last searches this process answered: p50, p95, max, how many. */
export function searchLatency(): SearchLatency {
  return trackSearchLatency().summary();
}

/** Forgets the ring and stops listening (tests). */
export function stopTrackingSearchLatency(): void {
  processRing.wirewatchSearchLatency?.unsubscribe();
  processRing.wirewatchSearchLatency = undefined;
}
