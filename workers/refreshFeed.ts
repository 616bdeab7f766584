import type { Database } from "@/lib/db";
import { pollOnce, type RefreshOutcome } from "@/workers/collectors/pollOnce";
import type { SourceRef } from "@/workers/collectors/sourceRef";
import type { FetchSourceOptions } from "@/workers/fetcher";
import { FeedParseError, type ParsedFeed, parseFeed } from "@/workers/parser/parseFeed";
import type { Writer } from "@/workers/store";

export type { RefreshOutcome } from "@/workers/collectors/pollOnce";

/**
 * One poll of one feed by one collector: the polite fetch (breaker, robots, rate budget,
 * conditional GET, retries, recorded; see collectors/pollOnce.ts) → parse (a body that is not a
 * feed is the source's fault, recorded and held against its breaker) → every entry through the
 * writer in one batch, origin `poll`, with the entry's updated date as the source's revision.
 */
export function refreshFeed(
  db: Database,
  source: SourceRef,
  collector: string,
  previousBodyHash: string | null,
  fetchOptions: FetchSourceOptions = {},
  write?: Writer,
): Promise<RefreshOutcome> {
  return pollOnce(
    db,
    source,
    collector,
    previousBodyHash,
    fetchOptions,
    (fetched) => {
      let feed: ParsedFeed;
      try {
        feed = parseFeed(fetched.body, { url: fetched.finalUrl, contentType: fetched.contentType });
      } catch (err) {
        if (err instanceof FeedParseError) return { unreadable: err.message };
        throw err;
      }
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
