import type { FetchCode } from "@/lib/codes";
import type { Database } from "@/lib/db";
import { emit } from "@/lib/events";

/**
 * 404/410: the feed is gone, which is an answer, not a failure: the source is disabled (it stays
 * configured; an admin re-enables it by clearing disabled_at) without touching the breaker. The
 * first reason is kept: WHERE disabled_at IS NULL makes a second worker's report a no-op, and
 * only the statement that disabled it emits breaker:disabled.
 */
export async function disableSource(
  db: Database,
  sourceId: string,
  code: FetchCode,
  message = "",
): Promise<boolean> {
  const reason = `${code}: ${message}`.trim();
  const rows = await db.prisma.$queryRaw<{ source_id: string }[]>`
    UPDATE source_state
    SET disabled_reason = ${reason}, disabled_at = now(), updated_at = now()
    WHERE source_id = ${sourceId} AND disabled_at IS NULL
    RETURNING source_id`;
  if (rows.length > 0) emit("breaker:disabled", { source: sourceId, code });
  return rows.length > 0;
}
