import type { Database } from "@/lib/db";

/**
 * Writes this minute's depth of each of `queues` that has no sample for it yet (one row per
 * queue and minute in queue_depth_samples, the minute by the database clock) and returns the
 * queues it wrote. A queue without a job gets its row of zeros: an empty queue is a point on
 * the chart, not a gap (a gap means no worker served the queue then).
 *
 * Every worker process calls this from its sweeper, every few seconds, for the queues it serves;
 * the first of a minute counts and writes, the others find the row and count nothing (the
 * `wanted` queues are empty, so every count below reads an index for `queue = ANY('{}')`). Two
 * that miss each other's row both count, and ON CONFLICT DO NOTHING keeps the first one
 * committed: one row per queue and minute, whatever the number of processes, and no lock held
 * beyond the statement. The counts read the jobs table's partial indexes per state, as the
 * Queues page's depth does: ready (jobs_claim_idx, queue first), leased (a few hundred at most),
 * dead (jobs_dead_idx).
 */
export async function sampleQueueDepth(db: Database, queues: readonly string[]): Promise<string[]> {
  if (queues.length === 0) return [];
  const rows = await db.prisma.$queryRaw<{ queue: string }[]>`
    WITH minute AS (
      SELECT date_trunc('minute', now()) AS at
    ), wanted AS (
      SELECT q.queue FROM unnest(${queues as string[]}::text[]) AS q(queue), minute
      WHERE NOT EXISTS (
        SELECT 1 FROM queue_depth_samples s WHERE s.queue = q.queue AND s.minute = minute.at)
    ), counts AS (
      SELECT queue,
             count(*) FILTER (WHERE run_at <= now()) AS due,
             0 AS running,
             count(*) FILTER (WHERE run_at > now() AND last_failed_at IS NOT NULL) AS retrying,
             0 AS dead
      FROM jobs WHERE state = 'ready' AND queue = ANY(ARRAY(SELECT queue FROM wanted))
      GROUP BY queue
      UNION ALL
      SELECT queue, 0, count(*), 0, 0
      FROM jobs WHERE state = 'leased' AND queue = ANY(ARRAY(SELECT queue FROM wanted))
      GROUP BY queue
      UNION ALL
      SELECT queue, 0, 0, 0, count(*)
      FROM jobs WHERE state = 'dead' AND queue = ANY(ARRAY(SELECT queue FROM wanted))
      GROUP BY queue
    )
    INSERT INTO queue_depth_samples AS s (queue, minute, due, running, retrying, dead)
    SELECT w.queue, minute.at, coalesce(sum(c.due), 0), coalesce(sum(c.running), 0),
           coalesce(sum(c.retrying), 0), coalesce(sum(c.dead), 0)
    FROM wanted w CROSS JOIN minute LEFT JOIN counts c ON c.queue = w.queue
    GROUP BY w.queue, minute.at
    ON CONFLICT (queue, minute) DO NOTHING
    RETURNING s.queue`;
  return rows.map((r) => r.queue).sort();
}
