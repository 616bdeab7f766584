import type { Database } from "@/lib/db";
import { DEFAULT_BREAKER } from "@/workers/fetcher/breaker/config";
import { recordFailure } from "@/workers/fetcher/breaker/recordFailure";

/**
 * The fetch succeeded but the body is not a feed (or not a page we can read): a fault of the
 * source like any other. The poll's attempt row is corrected to say so (it was written as `ok`
 * before the body was parsed), the error is kept on the source, and it counts toward the
 * breaker, so a feed that stays broken is polled less until it recovers.
 */
export async function reportParseError(
  db: Database,
  sourceId: string,
  collector: string,
  message: string,
): Promise<void> {
  const text = message.slice(0, 2_000);
  await db.prisma.$executeRaw`
    UPDATE fetch_attempts SET code = 'parse_error', message = ${text}
    WHERE id = (SELECT max(id) FROM fetch_attempts
                WHERE source_id = ${sourceId} AND collector = ${collector} AND code = 'ok')`;
  await db.prisma.$executeRaw`
    UPDATE source_state
    SET last_error_code = 'parse_error', last_error_message = ${text}, last_error_at = now(),
        updated_at = now()
    WHERE source_id = ${sourceId}`;
  await recordFailure(db, sourceId, DEFAULT_BREAKER);
}
