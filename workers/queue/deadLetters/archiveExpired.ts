import type { Database } from "@/lib/db";

/** How long a dead letter waits for a person before it is archived. */
export const DEAD_LETTER_TTL_DAYS = 14;

/**
 * Archives dead letters older than the TTL: they leave the dead-letter views and depth, but stay
 * in the table (state 'archived', with their error and history) so nothing is silently deleted.
 * Returns how many were archived.
 */
export async function archiveExpiredDeadLetters(
  db: Database,
  ttlDays = DEAD_LETTER_TTL_DAYS,
): Promise<number> {
  return db.prisma.$executeRaw`
    UPDATE jobs SET state = 'archived', archived_at = now()
    WHERE state = 'dead' AND dead_at < now() - make_interval(secs => ${ttlDays * 86_400}::float8)`;
}
