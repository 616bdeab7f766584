import type { Database } from "@/lib/db";
import { Prisma } from "@/lib/generated/prisma/client";
import { queueQuery } from "./sql";
import type { Lease } from "./types";

/**
 * Finishes jobs: each is deleted only if the caller still holds its lease (same id, attempt and
 * token), so a worker whose lease was taken over changes nothing. One statement for the batch;
 * returns the ids that were finished (the others were not this caller's to finish).
 */
export async function complete(db: Database, leases: Lease[]): Promise<string[]> {
  if (leases.length === 0) return [];
  const rows = await queueQuery<{ id: string }>(
    db,
    Prisma.sql`
    DELETE FROM jobs j
    USING unnest(${leases.map((l) => l.id)}::bigint[], ${leases.map((l) => l.attempt)}::int[],
                 ${leases.map((l) => l.token)}::uuid[]) AS held(id, attempt, token)
    WHERE j.id = held.id AND j.attempts = held.attempt AND j.lease_token = held.token
      AND j.state = 'leased'
    RETURNING j.id::text AS id`,
  );
  return rows.map((r) => r.id);
}
