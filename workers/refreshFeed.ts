import { config } from "@/lib/config";
import type { Database } from "@/lib/db";
import { emit } from "@/lib/events";
import {
  bodyArrived,
  fetchedOutcome,
  isUnreadable,
  type RefreshOutcome,
  readBody,
  recordWritten,
  settleUnreadable,
  settleWithoutBody,
  type Unreadable,
  writeAndSettle,
} from "@/workers/collectors/pollSteps";
import type { SourceRef } from "@/workers/collectors/sourceRef";
import { beginPoll, type Fetched, type FetchSourceOptions } from "@/workers/fetcher";
import { FeedParseError } from "@/workers/parser/parseFeed";
import { readFeedInSlices, type SlicedRead } from "@/workers/parser/readFeedInSlices";
import { type Delivery, type Writer, writeBatch } from "@/workers/store";

export type { RefreshOutcome } from "@/workers/collectors/pollSteps";

export interface ReadOptions {
  /** Entries read from one document at most (FEED_MAX_ENTRIES by default). */
  maxEntries?: number;
}

/**
 * One poll of one feed by one collector, the whole path of its headlines:
 * fetch (breaker, robots, rate budget, conditional GET, retries, every attempt recorded) →
 * parse, in slices that leave the event loop free, at most FEED_MAX_ENTRIES entries (a body
 * that is not a feed is the source's fault: a `parse_error`, held against its breaker) → every
 * entry through the writer, origin `poll`, with the entry's updated date as the source's
 * revision → the poll's one breaker verdict → entries past the cap noted on the source → the
 * hints for the next poll (max-age, ttl, Retry-After) and content arrival when the body changed.
 */
export async function refreshFeed(
  db: Database,
  source: SourceRef,
  collector: string,
  previousBodyHash: string | null,
  fetchOptions: FetchSourceOptions = {},
  write: Writer = (deliveries) => writeBatch(db, deliveries),
  readOptions: ReadOptions = {},
): Promise<RefreshOutcome> {
  const poll = await beginPoll(db, source, collector, fetchOptions);
  const fetched = fetchedOutcome(poll.fetched, previousBodyHash);
  const body = poll.fetched.body;
  if (!body) return settleWithoutBody(db, poll, source.id, collector, fetched);
  const outcome = await bodyArrived(db, source.id, collector, body, fetched);

  const feed = await readBody(poll, () => parseFeedBody(body, poll.fetched, readOptions));
  if (isUnreadable(feed)) return settleUnreadable(poll, outcome, feed);

  const observedAt = new Date();
  const written = await writeAndSettle(
    poll,
    write,
    feed.entries.map((e) => observation(source.id, collector, e, observedAt)),
  );
  await recordEntriesLeftOut(db, source.id, feed);
  return recordWritten(
    db,
    source.id,
    collector,
    { ...outcome, ttlMinutes: feed.feed.ttlMinutes ?? null },
    written,
    previousBodyHash,
  );
}

async function parseFeedBody(
  body: Buffer,
  fetched: Fetched,
  readOptions: ReadOptions,
): Promise<SlicedRead | Unreadable> {
  try {
    return await readFeedInSlices(body, {
      url: fetched.finalUrl,
      contentType: fetched.contentType,
      maxEntries: readOptions.maxEntries ?? config().FEED_MAX_ENTRIES,
    });
  } catch (err) {
    if (err instanceof FeedParseError) return { unreadable: err.message };
    throw err;
  }
}

/** A poll's observation of one feed entry (a WebSub push makes the same, workers/websub). */
export function observation(
  sourceId: string,
  collector: string,
  e: SlicedRead["entries"][number],
  observedAt: Date,
): Delivery {
  return {
    kind: "observe",
    input: {
      sourceId,
      collector,
      origin: "poll",
      guid: e.guid,
      atomId: e.atomId,
      link: e.link,
      title: e.title,
      summary: e.summary,
      category: e.categories[0],
      publishedAt: e.published,
      // A feed's own order of versions: the entry's updated date. Without one there is none,
      // and the writer only fills what is empty (it never guesses which version is newer).
      revision: e.updated,
      observedAt,
    },
  };
}

/**
 * Entries past the cap are not silently dropped: the source's state says how many of how many
 * the latest document left out, and when (shown on its page), and the metric counts them. A
 * document that fits again clears the note.
 */
async function recordEntriesLeftOut(db: Database, sourceId: string, feed: SlicedRead) {
  if (feed.entriesLeftOut > 0) {
    await db.prisma.sourceState.updateMany({
      where: { sourceId },
      data: {
        entriesLeftOut: feed.entriesLeftOut,
        entriesInDocument: feed.entriesInDocument,
        entriesLeftOutAt: new Date(),
      },
    });
    emit("feed:capped", { source: sourceId, count: feed.entriesLeftOut });
  } else {
    await db.prisma.sourceState.updateMany({
      where: { sourceId, entriesLeftOut: { gt: 0 } },
      data: { entriesLeftOut: 0, entriesInDocument: feed.entriesInDocument },
    });
  }
}
