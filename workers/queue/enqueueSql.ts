import { Prisma } from "@/lib/generated/prisma/client";

/**
 * Enqueues one keyed job as a CTE of the caller's statement, when `onlyIf` holds: a webhook's
 * story event and its job are written together or not at all (a job without its event row, or
 * an event row whose job was lost, would both break the reconciliation). Like enqueue.ts:
 * idempotent by (queue, key) while a job with that key is ready or leased. Returns id, queue:
 * pass the CTE's name to wakeSql.
 *
 * Safe under concurrency for the same reason as enqueue: the partial unique index on (queue,
 * key) over ready and leased rows makes two concurrent inserts of one key resolve to one row
 * (the second waits on the first's index entry, then does nothing).
 */
export function enqueueSql(
  queue: string,
  job: { key: string; payload: object; sourceId: string | null; maxAttempts: number },
  onlyIf: Prisma.Sql,
): Prisma.Sql {
  return Prisma.sql`
    INSERT INTO jobs (queue, key, payload, source_id, max_attempts)
    SELECT ${queue}, ${job.key}, ${JSON.stringify(job.payload)}::jsonb, ${job.sourceId},
           ${job.maxAttempts}::int
    WHERE ${onlyIf}
    ON CONFLICT (queue, key) WHERE key IS NOT NULL AND state IN ('ready', 'leased') DO NOTHING
    RETURNING id, queue`;
}
