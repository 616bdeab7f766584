import type { Database } from "@/lib/db";
import { claimWindows } from "./claimStats";

/**
 * What went through each queue over time, and the jobs waiting to retry: the Queues page's
 * throughput charts and its retry list.
 *
 * Finished jobs are deleted (workers/queue/complete.ts), so "processed" is not counted directly:
 * it is a bucket's claims (queue_claim_stats, one row per queue and minute) less its failed
 * attempts (job_failures, every failed attempt, lease expiries included, by failed_at). A job
 * claimed at the end of one bucket and failing in the next shifts one count between them; over a
 * window the sums agree. Dead-lettered is jobs.dead_at (dead and archived rows, so a dead letter
 * archived later still counts where it died). Each read is a range scan of an index on its time
 * column: queue_claim_stats_minute_idx, job_failures_failed_at_idx; dead_at goes through
 * jobs_dead_idx for the dead, and for archived rows (14 days after dying, housekeeping.ts) reads
 * only what a window of at most 24 hours can hold.
 */
export interface FlowPoint {
  /** Start of the bucket, epoch ms. */
  t: number;
  claimed: number;
  processed: number;
  failed: number;
  deadLettered: number;
}

export interface QueueFlow {
  queue: string;
  points: FlowPoint[];
  totals: { claimed: number; processed: number; failed: number; deadLettered: number };
}

export interface RetryingJob {
  id: string;
  queue: string;
  key: string | null;
  sourceId: string | null;
  /** Attempts made so far, of maxAttempts. */
  attempts: number;
  maxAttempts: number;
  /** When it is due again. */
  runAt: Date;
  lastFailedAt: Date | null;
  /** The last error's code and message (workers/queue/jobError.ts), when it had them. */
  error: string | null;
}

const bucketOf = (at: Date | number, bucketSeconds: number) =>
  Math.floor(new Date(at).getTime() / 1000 / bucketSeconds) * bucketSeconds * 1000;

/** Per queue, one point per bucket of `bucketSeconds` in [from, now] (empty buckets as zeros). */
export async function queueFlow(
  db: Database,
  { from, now, bucketSeconds }: { from: Date; now: Date; bucketSeconds: number },
): Promise<QueueFlow[]> {
  const [claims, failures, dead] = await Promise.all([
    claimWindows(db, { from, now, bucketSeconds }),
    db.prisma.$queryRaw<{ queue: string; at: Date; n: number }[]>`
      SELECT queue, date_trunc('minute', failed_at) AS at, count(*)::int AS n FROM job_failures
      WHERE failed_at >= ${from} AND failed_at <= ${now}
      GROUP BY 1, 2`,
    db.prisma.$queryRaw<{ queue: string; at: Date; n: number }[]>`
      SELECT queue, date_trunc('minute', dead_at) AS at, count(*)::int AS n FROM jobs
      WHERE state IN ('dead', 'archived') AND dead_at >= ${from} AND dead_at <= ${now}
      GROUP BY 1, 2`,
  ]);
  const first = bucketOf(from, bucketSeconds);
  const last = bucketOf(now, bucketSeconds);
  const byQueue = new Map<string, Map<number, FlowPoint>>();
  const point = (queue: string, t: number): FlowPoint => {
    let points = byQueue.get(queue);
    if (!points) {
      points = new Map();
      for (let b = first; b <= last; b += bucketSeconds * 1000) {
        points.set(b, { t: b, claimed: 0, processed: 0, failed: 0, deadLettered: 0 });
      }
      byQueue.set(queue, points);
    }
    let p = points.get(t);
    if (!p) {
      p = { t, claimed: 0, processed: 0, failed: 0, deadLettered: 0 };
      points.set(t, p);
    }
    return p;
  };
  for (const c of claims) point(c.queue, c.t).claimed += c.claims;
  for (const f of failures) point(f.queue, bucketOf(f.at, bucketSeconds)).failed += f.n;
  for (const d of dead) point(d.queue, bucketOf(d.at, bucketSeconds)).deadLettered += d.n;
  return [...byQueue]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([queue, points]) => {
      const sorted = [...points.values()].sort((a, b) => a.t - b.t);
      const totals = { claimed: 0, processed: 0, failed: 0, deadLettered: 0 };
      for (const p of sorted) {
        p.processed = Math.max(0, p.claimed - p.failed);
        totals.claimed += p.claimed;
        totals.processed += p.processed;
        totals.failed += p.failed;
        totals.deadLettered += p.deadLettered;
      }
      return { queue, points: sorted, totals };
    });
}

/**
 * Jobs that failed and wait for another attempt (ready, with a failure since they were last
 * enqueued: reschedule and requeue clear last_failed_at), soonest due first, at most `limit`,
 * and how many there are in all.
 */
export async function retryingJobs(
  db: Database,
  { limit = 50 }: { limit?: number } = {},
): Promise<{ total: number; jobs: RetryingJob[] }> {
  const [rows, count] = await Promise.all([
    db.prisma.$queryRaw<
      {
        id: string;
        queue: string;
        key: string | null;
        source_id: string | null;
        attempts: number;
        max_attempts: number;
        run_at: Date;
        last_failed_at: Date | null;
        error: string | null;
      }[]
    >`
      SELECT id::text AS id, queue, key, source_id, attempts, max_attempts, run_at, last_failed_at,
             nullif(concat_ws(': ', last_error->>'code', last_error->>'message'), '') AS error
      FROM jobs WHERE state = 'ready' AND last_failed_at IS NOT NULL
      ORDER BY run_at, id LIMIT ${limit}`,
    db.prisma.$queryRaw<{ n: number }[]>`
      SELECT count(*)::int AS n FROM jobs WHERE state = 'ready' AND last_failed_at IS NOT NULL`,
  ]);
  return {
    total: count[0]?.n ?? 0,
    jobs: rows.map((r) => ({
      id: r.id,
      queue: r.queue,
      key: r.key,
      sourceId: r.source_id,
      attempts: r.attempts,
      maxAttempts: r.max_attempts,
      runAt: r.run_at,
      lastFailedAt: r.last_failed_at,
      error: r.error,
    })),
  };
}
