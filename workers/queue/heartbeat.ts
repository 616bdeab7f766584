import type { Database } from "@/lib/db";
import type { Lease } from "./types";

/**
 * Extends held leases to `leaseSeconds` from now (database clock), recording 'extended' lease
 * events with the lease's age. Fenced: returns the ids still held; a lease missing from the
 * answer was lost (swept and maybe claimed by another worker), and its handler must stop.
 */
export async function heartbeat(
  db: Database,
  workerId: string,
  leases: Lease[],
  leaseSeconds: number,
): Promise<Set<string>> {
  if (leases.length === 0) return new Set();
  const rows = await db.prisma.$queryRaw<{ id: string }[]>`
    WITH extended AS (
      UPDATE jobs j
      SET lease_expires_at = now() + make_interval(secs => ${leaseSeconds}::float8)
      FROM unnest(${leases.map((l) => l.id)}::bigint[], ${leases.map((l) => l.attempt)}::int[],
                  ${leases.map((l) => l.token)}::uuid[]) AS held(id, attempt, token)
      WHERE j.id = held.id AND j.attempts = held.attempt AND j.lease_token = held.token
        AND j.state = 'leased'
      RETURNING j.id, j.queue, j.attempts, j.leased_at
    ), recorded AS (
      INSERT INTO lease_events (job_id, queue, attempt, worker_id, kind, lease_age_ms)
      SELECT id, queue, attempts, ${workerId}, 'extended',
             floor(extract(epoch FROM now() - leased_at) * 1000)::int
      FROM extended
    )
    SELECT id::text AS id FROM extended`;
  return new Set(rows.map((r) => r.id));
}
