import type { Database } from "@/lib/db";
import type { Story } from "./events";

/**
 * The two writes of seed 001, each one statement that checks and writes at once, so racing
 * handlers, late events and stale reads cannot undo each other and no read-then-write gap exists.
 * These are the only statements that write `stories`.
 */

/**
 * Saves a snapshot only if it is newer than the row and the row is not closed. Returns whether
 * it was written (false: an older or equal version, or a closed story: nothing changed).
 */
export async function saveStory(db: Database, sourceId: string, story: Story): Promise<boolean> {
  const rows = await db.prisma.$queryRaw<{ id: string }[]>`
    INSERT INTO stories (source_id, id, ticker, version, closed, story, updated_at)
    VALUES (${sourceId}, ${story.id}, ${story.ticker}, ${story.version}, false,
            ${JSON.stringify(story)}::jsonb, now())
    ON CONFLICT (source_id, id) DO UPDATE
      SET ticker = excluded.ticker, version = excluded.version, story = excluded.story,
          updated_at = now()
      WHERE NOT stories.closed AND stories.version < excluded.version
    RETURNING id`;
  return rows.length > 0;
}

/**
 * Closes a story for good: `version` is the closing version from story.closed, or 0 when all we
 * know is that the API answered 404. The row keeps the greatest version it has seen. The ticker is
 * kept when known, so a story closed before it was ever seen still counts under its ticker.
 */
export async function closeStory(
  db: Database,
  sourceId: string,
  id: string,
  version: number,
  ticker: string | null,
): Promise<void> {
  await db.prisma.$executeRaw`
    INSERT INTO stories (source_id, id, ticker, version, closed, story, updated_at)
    VALUES (${sourceId}, ${id}, ${ticker}, ${version}, true, NULL, now())
    ON CONFLICT (source_id, id) DO UPDATE
      SET closed = true, story = NULL, ticker = coalesce(stories.ticker, excluded.ticker),
          version = greatest(stories.version, excluded.version),
          updated_at = CASE WHEN stories.closed AND stories.version >= excluded.version
                            THEN stories.updated_at ELSE now() END`;
}
