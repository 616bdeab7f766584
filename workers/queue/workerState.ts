import { hostname } from "node:os";
import type { WorkerCounters } from "@/lib/dashboard/workers";
import type { Database } from "@/lib/db";

export type { WorkerCounters };

/** Writes a worker's state row (created on first report), stamped with the database clock. */
export async function workerSeen(
  db: Database,
  id: string,
  queues: string[],
  state: "running" | "draining",
  c: WorkerCounters,
): Promise<void> {
  await db.prisma.$executeRaw`
    INSERT INTO queue_workers (id, host, pid, queues, state, claimed, completed, failed, in_flight,
                               last_claim_at, last_error, last_error_at)
    VALUES (${id}, ${hostname()}, ${process.pid}, ${queues}::text[], ${state}, ${c.claimed},
            ${c.completed}, ${c.failed}, ${c.inFlight}, ${c.lastClaimAt}, ${c.lastError},
            ${c.lastErrorAt})
    ON CONFLICT (id) DO UPDATE
    SET state = excluded.state, seen_at = now(), claimed = excluded.claimed,
        completed = excluded.completed, failed = excluded.failed, in_flight = excluded.in_flight,
        last_claim_at = excluded.last_claim_at, last_error = excluded.last_error,
        last_error_at = excluded.last_error_at`;
}

/**
 * Worker processes serving each of `queues` now: running, and reported within `freshSeconds`
 * (a process killed without stopping drops out once its reports stop).
 */
export async function workersServing(
  db: Database,
  queues: string[],
  freshSeconds: number,
): Promise<Map<string, number>> {
  const rows = await db.prisma.$queryRaw<{ queue: string; n: number }[]>`
    SELECT q AS queue, count(*)::int AS n
    FROM queue_workers, unnest(queues) AS q
    WHERE state = 'running' AND seen_at > now() - make_interval(secs => ${freshSeconds})
      AND q = ANY(${queues}::text[])
    GROUP BY q`;
  return new Map(rows.map((r) => [r.queue, r.n]));
}

/** Marks a worker stopped with its final counts. */
export async function workerStopped(db: Database, id: string, c: WorkerCounters): Promise<void> {
  await db.prisma.$executeRaw`
    UPDATE queue_workers
    SET state = 'stopped', stopped_at = now(), seen_at = now(), in_flight = 0,
        claimed = ${c.claimed}, completed = ${c.completed}, failed = ${c.failed},
        last_error = ${c.lastError}, last_error_at = ${c.lastErrorAt}
    WHERE id = ${id}`;
}
