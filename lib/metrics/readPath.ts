/**
 * This process's read path as the dashboard shows it: the store in use (from readmodel:store)
 * and the requests answered since the process started, by outcome, with a time-to-first-byte
 * histogram on the same edges as wirewatch_read_request_seconds. Counted beside the Prometheus
 * counters by ./subscriptions.ts, kept on globalThis like the event bus (Next bundles route
 * handlers apart, one process). Per process: with several app instances each counts its own.
 */
/** lib/readmodel/types.ts ReadOutcome, plus the public rate limit's refusals. */
export const READ_OUTCOMES = [
  "hit",
  "miss",
  "stale",
  "not_modified",
  "not_found",
  "error",
  "rate_limited",
] as const;
export const READ_STORE_KINDS = ["redis", "memory"] as const;
export type ReadOutcomeName = (typeof READ_OUTCOMES)[number];
export type StoreKind = (typeof READ_STORE_KINDS)[number];

/** The TTFB edges in seconds (the last bucket is everything past 5 s). */
export const TTFB_EDGES = [
  0.001, 0.002, 0.005, 0.01, 0.015, 0.02, 0.03, 0.05, 0.1, 0.25, 0.5, 0.8, 1, 2, 5,
] as const;

export interface ReadPathProcess {
  /** When this process started counting. */
  since: Date;
  /** The last store state announced in this process; null before the first announcement. */
  store: { kind: StoreKind; fallback: boolean; error: string | null; at: Date } | null;
  requests: Record<ReadOutcomeName, number>;
  /** Counts per TTFB bucket (TTFB_EDGES, then past the last edge). */
  ttfb: number[];
}

const globalForReadPath = globalThis as unknown as { wirewatchReadPath?: ReadPathProcess };

function empty(): ReadPathProcess {
  return {
    since: new Date(),
    store: null,
    requests: Object.fromEntries(READ_OUTCOMES.map((o) => [o, 0])) as Record<
      ReadOutcomeName,
      number
    >,
    ttfb: new Array(TTFB_EDGES.length + 1).fill(0),
  };
}

function state(): ReadPathProcess {
  globalForReadPath.wirewatchReadPath ??= empty();
  return globalForReadPath.wirewatchReadPath;
}

export function countReadRequest(outcome: string, seconds: number): void {
  const s = state();
  const o = (READ_OUTCOMES as readonly string[]).includes(outcome)
    ? (outcome as ReadOutcomeName)
    : "error";
  s.requests[o] += 1;
  if (!Number.isFinite(seconds) || seconds < 0) return;
  const i = TTFB_EDGES.findIndex((edge) => seconds <= edge);
  const bucket = i === -1 ? TTFB_EDGES.length : i;
  s.ttfb[bucket] = (s.ttfb[bucket] ?? 0) + 1;
}

export function noteReadStore(kind: string, fallback: boolean, error: string | null): void {
  if (!(READ_STORE_KINDS as readonly string[]).includes(kind)) return;
  // Only the error's first line, cut short: it is shown on the dashboard, never a label.
  const message = error === null ? null : (error.split("\n")[0] ?? "").slice(0, 300);
  state().store = { kind: kind as StoreKind, fallback, error: message, at: new Date() };
}

/**
 * (hit + not_modified) / (hit + not_modified + miss + stale + error): a 304 was answered from
 * the stored ETag; not_found and rate_limited are neither a hit nor a miss. Null before any.
 */
export function hitRatio(r: Record<ReadOutcomeName, number>): number | null {
  const hits = r.hit + r.not_modified;
  const lookups = hits + r.miss + r.stale + r.error;
  return lookups > 0 ? hits / lookups : null;
}

/**
 * A quantile of the TTFB buckets, interpolated linearly inside its bucket as Prometheus's
 * histogram_quantile does (the first bucket from 0; past the last edge: the last edge).
 */
export function ttfbQuantile(counts: readonly number[], q: number): number | null {
  const total = counts.reduce((n, c) => n + c, 0);
  if (total === 0) return null;
  const rank = q * total;
  let below = 0;
  for (const [i, c] of counts.entries()) {
    if (c > 0 && below + c >= rank) {
      const hi = TTFB_EDGES[i];
      if (hi === undefined) return TTFB_EDGES[TTFB_EDGES.length - 1] ?? null;
      const lo = i === 0 ? 0 : (TTFB_EDGES[i - 1] ?? 0);
      return lo + (hi - lo) * ((rank - below) / c);
    }
    below += c;
  }
  return TTFB_EDGES[TTFB_EDGES.length - 1] ?? null;
}

/** A copy of this process's read path state. */
export function readPathProcess(): ReadPathProcess {
  const s = state();
  return {
    since: s.since,
    store: s.store ? { ...s.store } : null,
    requests: { ...s.requests },
    ttfb: [...s.ttfb],
  };
}

/** Tests only: start counting again. */
export function resetReadPathProcess(): void {
  globalForReadPath.wirewatchReadPath = empty();
}
