import type { Database } from "@/lib/db";
import { Prisma } from "@/lib/generated/prisma/client";

/**
 * Deletes waiting jobs that are no longer wanted (a paused source's polls, the frontier's jobs
 * of sources removed or switched off). `where` narrows them (over jobs' columns); only ready
 * jobs go, never a leased one (its handler finds its source unwanted and ends itself) and never a
 * dead letter (an admin decides those).
 *
 * Safe beside claims: a claim row-locks what it takes (FOR UPDATE SKIP LOCKED); this DELETE
 * waits for that lock and re-checks state = 'ready' on the claimed row version, which is
 * 'leased' by then, so a job is either deleted before any worker has it or claimed and left
 * alone, never both. enqueue's uniqueness on (queue, key) over live rows means a key deleted
 * here can be enqueued again at once.
 */
export function dropWaitingSql(where: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`
    DELETE FROM jobs
    WHERE state = 'ready' AND (${where})
    RETURNING id, queue`;
}

/** dropWaitingSql as its own statement; returns how many jobs were deleted. */
export async function dropWaiting(db: Database, where: Prisma.Sql): Promise<number> {
  const [row] = await db.prisma.$queryRaw<{ n: number }[]>`
    WITH dropped AS (${dropWaitingSql(where)}) SELECT count(*)::int AS n FROM dropped`;
  return row?.n ?? 0;
}
