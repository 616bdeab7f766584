import { Prisma } from "@/lib/generated/prisma/client";

/**
 * A paused queue is a marker row in `jobs` itself: a ready job of the queue PAUSED_MARKER_QUEUE
 * keyed by the paused queue's name, due in the year 9999 (not 'infinity', which a Date cannot hold) so nothing ever claims it (no worker serves
 * that queue). A row in `jobs` and not a table of its own: the pause needs no migration, the
 * unique index on live keys (jobs_live_key_idx: queue, key, ready or leased) makes a second pause
 * a no-op, and the claim statement checks it with one probe of that index.
 *
 * What a pause means: no new claims in that queue, by any worker, from the next claim statement
 * on. Jobs already leased finish (or fail) as usual; enqueues go on, so the backlog grows and is
 * worked off on resume. The admin actions that set and clear it are workers/admin/queues.ts.
 */
export const PAUSED_MARKER_QUEUE = "queue:paused";

/**
 * The claim statement's condition: the queue has no pause marker. Uncorrelated with the jobs
 * being picked, so PostgreSQL evaluates it once per statement (a one-time filter), not per row.
 */
export function notPausedSql(queue: string): Prisma.Sql {
  return Prisma.sql`NOT EXISTS (
    SELECT 1 FROM jobs paused
    WHERE paused.queue = ${PAUSED_MARKER_QUEUE} AND paused.key = ${queue} AND paused.state = 'ready')`;
}

/** Sets the marker (a CTE of the caller's statement); returns a row only when it was not set. */
export function pauseQueueSql(queue: string): Prisma.Sql {
  return Prisma.sql`
    INSERT INTO jobs (queue, key, run_at, max_attempts)
    VALUES (${PAUSED_MARKER_QUEUE}, ${queue}, '9999-12-31T00:00:00Z', 1)
    ON CONFLICT (queue, key) WHERE key IS NOT NULL AND state IN ('ready', 'leased') DO NOTHING
    RETURNING id, key AS queue`;
}

/** Clears the marker (a CTE of the caller's statement); returns a row only when it was set. */
export function resumeQueueSql(queue: string): Prisma.Sql {
  return Prisma.sql`
    DELETE FROM jobs
    WHERE queue = ${PAUSED_MARKER_QUEUE} AND key = ${queue} AND state = 'ready'
    RETURNING id, key AS queue`;
}
