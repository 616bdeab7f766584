import type { Database } from "@/lib/db";
import { emit } from "@/lib/events";
import { logger } from "@/lib/logger";
import type { Story } from "./events";

/** The channel a "story became strong" notification goes out on (Postgres NOTIFY). */
export const STORIES_CHANNEL = "wirewatch_stories";

export interface StrongNotification {
  sourceId: string;
  story: Pick<Story, "id" | "ticker" | "title" | "version">;
}

/** Carries a notification out (the default: NOTIFY on wirewatch_stories). May throw. */
export type Sender = (db: Database, notification: StrongNotification) => Promise<void>;

export const notifyChannel: Sender = async (db, n) => {
  // A NOTIFY payload must stay under 8,000 bytes: the title is cut, listeners read the rest.
  const { id, ticker, version } = n.story;
  const payload = JSON.stringify({
    type: "story.became_strong",
    source: n.sourceId,
    id,
    ticker,
    version,
    title: n.story.title.slice(0, 500),
  });
  await db.prisma.$executeRaw`SELECT pg_notify(${STORIES_CHANNEL}, ${payload})`;
};

export const strongKey = (sourceId: string, storyId: string) => `strong:${sourceId}/${storyId}`;

/**
 * A one-time side effect (seed 001): claimed with one insert, carried out only if this call made
 * the claim, and claimed BEFORE it is carried out, so a crash in between loses one notification
 * rather than sending it twice. `sent_at` records that it went out; a claim without it is the one
 * a crash cost (the dashboard shows them).
 */
export async function notifyOnce(
  db: Database,
  notification: StrongNotification,
  send: Sender = notifyChannel,
): Promise<"sent" | "already_claimed" | "failed"> {
  const { sourceId, story } = notification;
  const key = strongKey(sourceId, story.id);
  const claimed = await db.prisma.$queryRaw<{ key: string }[]>`
    INSERT INTO claimed (key, source_id) VALUES (${key}, ${sourceId})
    ON CONFLICT DO NOTHING
    RETURNING key`;
  if (claimed.length === 0) {
    emit("story:notification", { source: sourceId, outcome: "already_claimed" });
    return "already_claimed";
  }
  try {
    await send(db, notification);
  } catch (err) {
    // Claimed but not sent: at most once, as the seed accepts. Not retried, or a send that did go
    // out before failing to answer would go out twice.
    logger().warn({ err, key }, "story notification claimed but not sent");
    emit("story:notification", { source: sourceId, outcome: "failed" });
    return "failed";
  }
  await db.prisma.$executeRaw`UPDATE claimed SET sent_at = now() WHERE key = ${key}`;
  emit("story:notification", { source: sourceId, outcome: "sent" });
  return "sent";
}
