import { config } from "@/lib/config";
import type { Database } from "@/lib/db";
import { emit } from "@/lib/events";
import { pollOnce, type RefreshOutcome } from "@/workers/collectors/pollOnce";
import type { SourceRef } from "@/workers/collectors/sourceRef";
import type { FetchSourceOptions } from "@/workers/fetcher";
import { FeedParseError } from "@/workers/parser/parseFeed";
import { readFeedInSlices, type SlicedRead } from "@/workers/parser/readFeedInSlices";
import type { Writer } from "@/workers/store";

export type { RefreshOutcome } from "@/workers/collectors/pollOnce";

export interface ReadOptions {
  /** Entries read from one document at most (FEED_MAX_ENTRIES by default). */
  maxEntries?: number;
}

/**
 * One poll of one feed by one collector: the polite fetch (breaker, robots, rate budget,
 * conditional GET, retries, recorded; see collectors/pollOnce.ts) → parse, in slices that leave
 * the event loop free, at most FEED_MAX_ENTRIES entries (a body that is not a feed is the
 * source's fault, recorded and held against its breaker; entries past the cap are recorded on
 * the source) → every entry through the writer, origin `poll`, with the entry's updated date as
 * the source's revision.
 */
export function refreshFeed(
  db: Database,
  source: SourceRef,
  collector: string,
  previousBodyHash: string | null,
  fetchOptions: FetchSourceOptions = {},
  write?: Writer,
  readOptions: ReadOptions = {},
): Promise<RefreshOutcome> {
  return pollOnce(
    db,
    source,
    collector,
    previousBodyHash,
    fetchOptions,
    async (fetched) => {
      let feed: SlicedRead;
      try {
        feed = await readFeedInSlices(fetched.body, {
          url: fetched.finalUrl,
          contentType: fetched.contentType,
          maxEntries: readOptions.maxEntries ?? config().FEED_MAX_ENTRIES,
        });
      } catch (err) {
        if (err instanceof FeedParseError) return { unreadable: err.message };
        throw err;
      }
      await recordEntriesLeftOut(db, source.id, feed);
      const observedAt = new Date();
      return {
        ttlMinutes: feed.feed.ttlMinutes,
        deliveries: feed.entries.map((e) => ({
          kind: "observe" as const,
          input: {
            sourceId: source.id,
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
        })),
      };
    },
    write,
  );
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
