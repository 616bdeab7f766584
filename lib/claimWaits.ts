/**
 * How long claimed jobs had been due, as a histogram: the shape shared by the claim statement
 * (workers/queue/claim.ts adds its jobs to queue_claim_stats.wait_buckets), the lag metric
 * (wirewatch_queue_lag_seconds uses the same edges, so folding is exact) and the dashboard's
 * p50/p99 (estimated from the buckets the way Prometheus' histogram_quantile does).
 *
 * Edges from 50 ms (a NOTIFY-woken claim on an idle queue) to an hour (a stage down for an
 * hour): below 50 ms nobody acts on the difference; above an hour the dead-letter and health
 * views take over.
 */
export const CLAIM_WAIT_BUCKETS_MS: readonly number[] = [
  50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000, 120_000, 300_000, 900_000,
  1_800_000, 3_600_000,
];

/** The same edges in seconds, for prom-client. */
export const CLAIM_WAIT_BUCKETS_SECONDS = CLAIM_WAIT_BUCKETS_MS.map((ms) => ms / 1000);

/** Buckets per histogram row: one per edge, and one for the rest. */
export const CLAIM_WAIT_BUCKET_COUNT = CLAIM_WAIT_BUCKETS_MS.length + 1;

/** The bucket a wait falls in (≤ its edge, above the previous one). */
export function claimWaitBucket(waitMs: number): number {
  for (let i = 0; i < CLAIM_WAIT_BUCKETS_MS.length; i++) {
    if (waitMs <= (CLAIM_WAIT_BUCKETS_MS[i] ?? Infinity)) return i;
  }
  return CLAIM_WAIT_BUCKETS_MS.length;
}

/**
 * The q-quantile (0–1) of a wait histogram, in ms: linear within the bucket it falls in (as
 * Prometheus' histogram_quantile), the last bucket reported at its lower edge. null when empty.
 */
export function claimWaitQuantile(buckets: readonly number[], q: number): number | null {
  const total = buckets.reduce((a, b) => a + b, 0);
  if (total === 0) return null;
  const rank = q * total;
  let seen = 0;
  for (let i = 0; i < buckets.length; i++) {
    const n = buckets[i] ?? 0;
    if (n > 0 && seen + n >= rank) {
      const lower = i === 0 ? 0 : (CLAIM_WAIT_BUCKETS_MS[i - 1] ?? 0);
      const upper = CLAIM_WAIT_BUCKETS_MS[i];
      if (upper === undefined) return lower;
      return lower + (upper - lower) * ((rank - seen) / n);
    }
    seen += n;
  }
  return CLAIM_WAIT_BUCKETS_MS.at(-1) ?? null;
}

/** Adds histograms element by element (rows of a window summed into one). */
export function addClaimWaits(into: number[], more: readonly (number | bigint)[]): number[] {
  for (let i = 0; i < CLAIM_WAIT_BUCKET_COUNT; i++) into[i] = (into[i] ?? 0) + Number(more[i] ?? 0);
  return into;
}
