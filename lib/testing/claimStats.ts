import { CLAIM_WAIT_BUCKET_COUNT, claimWaitBucket } from "@/lib/claimWaits";
import type { Database } from "@/lib/db";

/**
 * Claims as the claim statement records them (queue_claim_stats: one row per queue and minute),
 * for tests of what reads them: `waitsMs` are the claimed jobs' waits, added to the row of the
 * minute `at` falls in (created if missing), `reclaimed` of them after an expired lease.
 */
export async function seedClaimStats(
  db: Database,
  {
    queue,
    at,
    waitsMs,
    reclaimed = 0,
  }: { queue: string; at: Date; waitsMs: number[]; reclaimed?: number },
): Promise<void> {
  const minute = new Date(Math.floor(at.getTime() / 60_000) * 60_000);
  const buckets: number[] = new Array(CLAIM_WAIT_BUCKET_COUNT).fill(0);
  for (const w of waitsMs) buckets[claimWaitBucket(w)] = (buckets[claimWaitBucket(w)] ?? 0) + 1;
  const sum = waitsMs.reduce((a, b) => a + b, 0);
  const max = Math.max(0, ...waitsMs);
  await db.prisma.$executeRaw`
    INSERT INTO queue_claim_stats AS s (queue, minute, claims, reclaimed, wait_ms_sum, wait_ms_max, wait_buckets)
    VALUES (${queue}, ${minute}, ${waitsMs.length}, ${reclaimed}, ${sum}, ${max}, ${buckets}::bigint[])
    ON CONFLICT (queue, minute) DO UPDATE
    SET claims = s.claims + excluded.claims, reclaimed = s.reclaimed + excluded.reclaimed,
        wait_ms_sum = s.wait_ms_sum + excluded.wait_ms_sum,
        wait_ms_max = greatest(s.wait_ms_max, excluded.wait_ms_max),
        wait_buckets = ARRAY(SELECT a + b FROM unnest(s.wait_buckets, excluded.wait_buckets) AS u(a, b))`;
}
