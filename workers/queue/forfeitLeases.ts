import type { Database } from "@/lib/db";

/**
 * Ends every held lease now, for the sweeper to take back (sweep.ts: due again, or dead when out
 * of attempts, with an 'expired' lease event each). Only for the embedded database at start:
 * its data directory is locked to one process, so every lease still held belongs to a process
 * that is gone, and waiting out a stream's lease would leave it unwatched that long.
 *
 * Not fenced on purpose (no id, attempt or token): no live holder exists. Moving
 * lease_expires_at into the past is exactly what the lease running out would do, so the sweep's
 * own fencing (state = 'leased' AND lease_expires_at < now()) then applies unchanged.
 */
export async function forfeitLeases(db: Database): Promise<number> {
  return db.prisma.$executeRaw`
    UPDATE jobs SET lease_expires_at = now() - interval '1 millisecond' WHERE state = 'leased'`;
}
