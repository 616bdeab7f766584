import type { Database } from "@/lib/db";

/** What a poll needs to know about its source before it goes out. */
export interface SourceFetchState {
  etag: string | null;
  lastModified: string | null;
  bodySha256: string | null;
  trustsValidators: boolean;
  /** Time for the unconditional fetch that checks the source's 304s are honest. */
  honestyDue: boolean;
  disabled: boolean;
}

/**
 * Reads the source's state, creating its row on the first poll. One statement: the INSERT …
 * ON CONFLICT DO NOTHING returns the new row, or nothing when the row exists, and the second arm
 * reads the existing one (it cannot see a row inserted by this same statement, so exactly one
 * arm answers). Two workers creating it at once: one inserts, the other conflicts and reads again.
 */
export async function loadSourceState(
  db: Database,
  sourceId: string,
  honestyIntervalMs: number,
): Promise<SourceFetchState> {
  const due = honestyIntervalMs;
  // The loser of a race to create the row waits for the winner's commit, inserts nothing, and
  // cannot see the winner's row in its own statement's snapshot: a second statement (a new
  // snapshot under READ COMMITTED) does.
  for (let tries = 0; tries < 2; tries++) {
    const rows = await db.prisma.$queryRaw<SourceFetchState[]>`
      WITH created AS (
        INSERT INTO source_state (source_id) VALUES (${sourceId})
        ON CONFLICT (source_id) DO NOTHING
        RETURNING *
      ), current AS (
        SELECT * FROM created
        UNION ALL
        SELECT * FROM source_state WHERE source_id = ${sourceId}
      )
      SELECT etag, last_modified AS "lastModified", body_sha256 AS "bodySha256",
             trusts_validators AS "trustsValidators",
             (last_full_fetch_at IS NULL
               OR last_full_fetch_at <= now() - ${due}::double precision * interval '1 millisecond') AS "honestyDue",
             disabled_at IS NOT NULL AS disabled
      FROM current LIMIT 1`;
    if (rows[0]) return rows[0];
  }
  throw new Error(`fetcher: could not create source_state for ${sourceId}`);
}

/**
 * The honesty check caught the source answering 304 to validators of a body it had changed:
 * from now on it is fetched in full. Kept until an admin resets it; a liar once is a liar.
 */
export async function distrustValidators(db: Database, sourceId: string): Promise<void> {
  await db.prisma.$executeRaw`
    UPDATE source_state SET trusts_validators = false, updated_at = now()
    WHERE source_id = ${sourceId}`;
}
