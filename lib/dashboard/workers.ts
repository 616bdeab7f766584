import { WORKER_STATES, type WorkerState } from "@/lib/codes";
import type { Database } from "@/lib/db";

/**
 * The queue workers as their queue_workers rows read (the queue's state reporter writes them,
 * workers/queue/workerState.ts): for the Queues page and the wirewatch_queue_workers gauge.
 *
 * A running or draining worker reports every 5 s; one not heard from for 30 s has missed 6
 * reports in a row: killed (kill -9, OOM, a lost machine) or cut off from the database, and
 * either way not doing its work. Derived when read, on the database clock, so nothing has to run
 * for a dead worker to be seen as dead, and a worker that comes back reads as running again.
 */
export const LOST_AFTER_SECONDS = 30;

/** What a worker counts and reports on its queue_workers row (workers/queue/workerState.ts). */
export interface WorkerCounters {
  claimed: number;
  completed: number;
  failed: number;
  inFlight: number;
  lastClaimAt: Date | null;
  lastError: string | null;
  lastErrorAt: Date | null;
}

export interface WorkerRow extends WorkerCounters {
  id: string;
  host: string;
  pid: number;
  queues: string[];
  state: WorkerState;
  startedAt: Date;
  seenAt: Date;
  stoppedAt: Date | null;
  /** As reported; for a lost worker, the leases still in its name (swept once they run out). */
  inFlight: number;
}

/** The most recently seen workers (at most `limit`), with their derived state. */
export async function listWorkers(
  db: Database,
  { limit = 100, lostAfterSeconds = LOST_AFTER_SECONDS } = {},
): Promise<WorkerRow[]> {
  // The lost workers' leases are counted on the jobs table's partial index of leased rows,
  // which holds only what is in flight now (tens to hundreds of rows).
  const rows = await db.prisma.$queryRaw<
    (Omit<WorkerRow, "claimed" | "completed" | "failed"> & {
      claimed: bigint;
      completed: bigint;
      failed: bigint;
    })[]
  >`
    WITH w AS (
      SELECT *,
             CASE WHEN state IN ('running', 'draining')
                       AND seen_at < now() - make_interval(secs => ${lostAfterSeconds}::float8)
                  THEN 'lost' ELSE state END AS derived
      FROM queue_workers ORDER BY seen_at DESC LIMIT ${limit}
    )
    SELECT id, host, pid, queues, derived AS state, started_at AS "startedAt",
           seen_at AS "seenAt", stopped_at AS "stoppedAt", claimed, completed, failed,
           CASE WHEN derived = 'lost'
                THEN (SELECT count(*) FROM jobs j
                      WHERE j.state = 'leased' AND j.lease_owner = w.id)::int
                ELSE in_flight END AS "inFlight",
           last_claim_at AS "lastClaimAt", last_error AS "lastError", last_error_at AS "lastErrorAt"
    FROM w ORDER BY seen_at DESC`;
  return rows.map((r) => ({
    ...r,
    claimed: Number(r.claimed),
    completed: Number(r.completed),
    failed: Number(r.failed),
  }));
}

/** Workers by derived state, every state present (0 when none). */
export async function countWorkers(
  db: Database,
  lostAfterSeconds = LOST_AFTER_SECONDS,
): Promise<Record<WorkerState, number>> {
  const rows = await db.prisma.$queryRaw<{ state: WorkerState; n: number }[]>`
    SELECT CASE WHEN state IN ('running', 'draining')
                     AND seen_at < now() - make_interval(secs => ${lostAfterSeconds}::float8)
                THEN 'lost' ELSE state END AS state,
           count(*)::int AS n
    FROM queue_workers GROUP BY 1`;
  const counts = Object.fromEntries(WORKER_STATES.map((s) => [s, 0])) as Record<
    WorkerState,
    number
  >;
  for (const r of rows) if (r.state in counts) counts[r.state] = r.n;
  return counts;
}
