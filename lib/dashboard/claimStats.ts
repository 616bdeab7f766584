import { addClaimWaits, CLAIM_WAIT_BUCKET_COUNT, claimWaitQuantile } from "@/lib/claimWaits";
import type { Database } from "@/lib/db";

/** Buckets of ~30 per window: 2 min for the hour, up to 48 min for a day. */
export function bucketSecondsFor(hours: number): number {
  return Math.max(60, Math.round((hours * 3600) / 30 / 60) * 60);
}

export interface ClaimWindow {
  queue: string;
  /** Start of the time bucket (epoch ms); the window's start when not bucketed. */
  t: number;
  claims: number;
  /** Wait percentiles (ms), estimated from the wait histogram (lib/claimWaits.ts). */
  p50Ms: number;
  p99Ms: number;
}

/**
 * Claims and their waits per queue from queue_claim_stats (one row per queue and minute, written
 * by the claim statement), over the minutes that overlap [from, now]: a range scan of
 * queue_claim_stats_minute_idx, at most 60 rows per queue for an hour, 1,440 for a day, however
 * many jobs ran. With `bucketSeconds`, minutes are grouped into buckets of that length (a
 * multiple of 60); without, the whole window is one bucket per queue. Ordered by queue, then time.
 */
export async function claimWindows(
  db: Database,
  { from, now, bucketSeconds }: { from: Date; now: Date; bucketSeconds?: number },
): Promise<ClaimWindow[]> {
  const rows = await db.prisma.$queryRaw<
    { queue: string; minute: Date; claims: bigint; wait_buckets: bigint[] }[]
  >`
    SELECT queue, minute, claims, wait_buckets FROM queue_claim_stats
    WHERE minute > ${from}::timestamptz - interval '1 minute' AND minute <= ${now}
    ORDER BY queue, minute`;
  const groups = new Map<string, { queue: string; t: number; claims: number; waits: number[] }>();
  for (const r of rows) {
    const minute = new Date(r.minute).getTime();
    const t = bucketSeconds
      ? Math.floor(minute / 1000 / bucketSeconds) * bucketSeconds * 1000
      : from.getTime();
    const key = `${r.queue}\u0000${t}`;
    let g = groups.get(key);
    if (!g) {
      g = { queue: r.queue, t, claims: 0, waits: new Array(CLAIM_WAIT_BUCKET_COUNT).fill(0) };
      groups.set(key, g);
    }
    g.claims += Number(r.claims);
    addClaimWaits(g.waits, r.wait_buckets);
  }
  return [...groups.values()]
    .filter((g) => g.claims > 0)
    .map((g) => ({
      queue: g.queue,
      t: g.t,
      claims: g.claims,
      p50Ms: Math.round(claimWaitQuantile(g.waits, 0.5) ?? 0),
      p99Ms: Math.round(claimWaitQuantile(g.waits, 0.99) ?? 0),
    }));
}
