import type { Database } from "@/lib/db";
import { Prisma } from "@/lib/generated/prisma/client";
import { numberArray, textArray } from "./arrayLiteral";
import { queueQuery } from "./sql";
import type { Lease } from "./types";

/**
 * Finishes jobs: each is deleted only if the caller still holds its lease (same id, attempt and
 * token), so a worker whose lease was taken over changes nothing. One statement for the batch;
 * returns the ids that were finished (the others were not this caller's to finish).
 */
export async function complete(db: Database, leases: Lease[]): Promise<string[]> {
  if (leases.length === 0) return [];
  // The ids come back only when some lease was not held: a worker reads one row for a batch that
  // all went well (the usual case) instead of parsing a row per job.
  const [row] = await queueQuery<{ n: number; finished: string[] | null }>(
    db,
    Prisma.sql`
    WITH done AS (
      DELETE FROM jobs j
      USING unnest(${textArray(leases.map((l) => l.id))}::bigint[],
                   ${numberArray(leases.map((l) => l.attempt))}::int[],
                   ${textArray(leases.map((l) => l.token))}::uuid[]) AS held(id, attempt, token)
      WHERE j.id = held.id AND j.attempts = held.attempt AND j.lease_token = held.token
        AND j.state = 'leased'
      RETURNING j.id
    )
    SELECT count(*)::int AS n,
           CASE WHEN count(*) < ${leases.length}::int THEN array_agg(id::text) END AS finished
    FROM done`,
  );
  if (row && row.n === leases.length) return leases.map((l) => l.id);
  return row?.finished ?? [];
}
