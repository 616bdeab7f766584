import type { Database, Unlisten } from "@/lib/db";
import { logger } from "@/lib/logger";
import { enqueue } from "@/workers/queue/enqueue";
import { NEWS_CHANNEL } from "@/workers/store/writeObservation";
import { type ItemJob, itemJobKey } from "./stage";

/** What the writer's NOTIFY on wirewatch_news says: the item, its source, what happened. */
interface NewsNotice {
  entryKey?: unknown;
  sourceId?: unknown;
  result?: unknown;
  version?: unknown;
}

/** Writer results that made a new version of an item (a tombstone included). */
const NEW_VERSION = new Set(["inserted", "upgraded", "updated", "tombstoned"]);

export interface Feeder {
  /** Enqueues what was heard and not yet enqueued. */
  flush(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Wakes the line's first stages as the writer commits: each notification is an item@version
 * job for every stage fed from news. Notifications are gathered for one turn of the event loop
 * (the writer notifies a 250-row statement at once) and enqueued in one statement per stage.
 * Nothing here is needed for correctness: a notification lost (no listener, a dropped
 * connection, an enqueue that failed) is found by the sweep; the feeder only makes the line
 * react in milliseconds instead of at the next sweep.
 */
export async function startFeeder(db: Database, queues: readonly string[]): Promise<Feeder> {
  const log = logger().child({ part: "line" });
  let heard = new Map<string, ItemJob & { sourceId: string | null }>();
  let scheduled = false;
  let stopped = false;
  let inFlight: Promise<void> = Promise.resolve();

  const flush = async () => {
    scheduled = false;
    const jobs = [...heard.values()];
    heard = new Map();
    if (jobs.length === 0) return;
    const input = jobs.map((j) => ({
      key: itemJobKey(j),
      payload: { entryKey: j.entryKey, version: j.version },
      sourceId: j.sourceId,
    }));
    for (const queue of queues) {
      try {
        await enqueue(db, queue, input);
      } catch (err) {
        log.warn(
          { err, queue, jobs: jobs.length },
          "could not enqueue notified items; the sweep will",
        );
      }
    }
  };
  const schedule = () => {
    if (scheduled || stopped) return;
    scheduled = true;
    setImmediate(() => {
      inFlight = inFlight.then(flush);
    });
  };

  let unlisten: Unlisten | null = null;
  try {
    unlisten = await db.listen(NEWS_CHANNEL, (payload) => {
      const job = parseNotice(payload);
      if (!job) return;
      heard.set(itemJobKey(job), job);
      schedule();
    });
  } catch (err) {
    log.warn({ err }, "cannot LISTEN for news; the line runs on its sweep alone");
  }
  return {
    flush: async () => {
      await inFlight;
      inFlight = inFlight.then(flush);
      await inFlight;
    },
    stop: async () => {
      await unlisten?.().catch(() => undefined);
      // What was heard is enqueued now (the database is still open); nothing is scheduled after.
      stopped = true;
      await inFlight;
      await flush();
    },
  };
}

/** The job a notification asks for; null for anything else on the channel (test sentinels). */
export function parseNotice(payload: string): (ItemJob & { sourceId: string | null }) | null {
  let n: NewsNotice;
  try {
    n = JSON.parse(payload) as NewsNotice;
  } catch {
    return null;
  }
  if (typeof n !== "object" || n === null) return null;
  if (typeof n.entryKey !== "string" || n.entryKey.length === 0) return null;
  if (typeof n.result !== "string" || !NEW_VERSION.has(n.result)) return null;
  if (typeof n.version !== "number" || !Number.isInteger(n.version) || n.version < 1) return null;
  return {
    entryKey: n.entryKey,
    version: n.version,
    sourceId: typeof n.sourceId === "string" ? n.sourceId : null,
  };
}
