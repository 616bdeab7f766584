import type { Database } from "@/lib/db";
import type { Lease } from "./types";

/**
 * Hands leased jobs back, due at once, without counting a failure: a worker stopping (SIGTERM)
 * releases what it will not finish so another takes it now rather than after the lease. Fenced;
 * returns the ids released. The attempt stays counted: it was one.
 */
export async function release(db: Database, workerId: string, leases: Lease[]): Promise<string[]> {
  if (leases.length === 0) return [];
  const rows = await db.prisma.$queryRaw<{ id: string }[]>`
    WITH held AS (
      SELECT j.id, j.leased_at FROM jobs j
      JOIN unnest(${leases.map((l) => l.id)}::bigint[], ${leases.map((l) => l.attempt)}::int[],
                  ${leases.map((l) => l.token)}::uuid[]) AS h(id, attempt, token)
        ON j.id = h.id AND j.attempts = h.attempt AND j.lease_token = h.token
      WHERE j.state = 'leased'
      FOR UPDATE OF j
    ), released AS (
      UPDATE jobs j
      SET state = 'ready', run_at = now(), lease_token = NULL, lease_owner = NULL,
          leased_at = NULL, lease_expires_at = NULL
      FROM held WHERE j.id = held.id
      RETURNING j.id, j.queue, j.attempts, held.leased_at
    ), recorded AS (
      INSERT INTO lease_events (job_id, queue, attempt, worker_id, kind, lease_age_ms)
      SELECT id, queue, attempts, ${workerId}, 'released',
             floor(extract(epoch FROM now() - leased_at) * 1000)::int
      FROM released
    )
    SELECT id::text AS id FROM released`;
  return rows.map((r) => r.id);
}
