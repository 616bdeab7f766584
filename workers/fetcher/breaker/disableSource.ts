import type { Database } from "@/lib/db";

/**
 * 404/410: the feed is gone, which is an answer, not a failure: the source is disabled (it stays
 * configured; an admin re-enables it by clearing disabled_at) without touching the breaker. The
 * first reason is kept: WHERE disabled_at IS NULL makes a second worker's report a no-op.
 */
export async function disableSource(
  db: Database,
  sourceId: string,
  reason: string,
): Promise<boolean> {
  const rows = await db.prisma.$queryRaw<{ source_id: string }[]>`
    UPDATE source_state
    SET disabled_reason = ${reason}, disabled_at = now(), updated_at = now()
    WHERE source_id = ${sourceId} AND disabled_at IS NULL
    RETURNING source_id`;
  return rows.length > 0;
}
