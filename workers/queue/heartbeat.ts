import type { Database } from "@/lib/db";
import type { Lease } from "./types";

/**
 * Extends held leases to `leaseSeconds` from now (database clock). Fenced: returns the ids still
 * held; a lease missing from the answer was lost (swept and maybe claimed by another worker), and
 * its handler must stop. Nothing is recorded: an extension is the normal case, and a row per
 * extension (every lease, every third of a lease) said nothing an expiry or a release does not.
 */
export async function heartbeat(
  db: Database,
  leases: Lease[],
  leaseSeconds: number,
): Promise<Set<string>> {
  if (leases.length === 0) return new Set();
  const rows = await db.prisma.$queryRaw<{ id: string }[]>`
    UPDATE jobs j
    SET lease_expires_at = now() + make_interval(secs => ${leaseSeconds}::float8)
    FROM unnest(${leases.map((l) => l.id)}::bigint[], ${leases.map((l) => l.attempt)}::int[],
                ${leases.map((l) => l.token)}::uuid[]) AS held(id, attempt, token)
    WHERE j.id = held.id AND j.attempts = held.attempt AND j.lease_token = held.token
      AND j.state = 'leased'
    RETURNING j.id::text AS id`;
  return new Set(rows.map((r) => r.id));
}
