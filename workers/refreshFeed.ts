import { createHash } from "node:crypto";
import type { Database } from "@/lib/db";
import { recordActivity, recordContent } from "@/workers/collectors/collectorStatus";
import { reportParseError } from "@/workers/collectors/reportParseError";
import type { SourceRef } from "@/workers/collectors/sourceRef";
import { type FetchSourceOptions, fetchSource } from "@/workers/fetcher";
import { FeedParseError, type ParsedEntry, parseFeed } from "@/workers/parser/parseFeed";
import { maxAgeFrom } from "@/workers/schedule/nextPoll";
import { type WriteOutcome, writeBatch } from "@/workers/store";

export interface RefreshOutcome {
  code: string;
  /** Items the writer stored or improved (inserted, upgraded, updated). */
  changed: number;
  entries: number;
  /** The source's hints for the next poll, seconds: Cache-Control max-age, RSS ttl, Retry-After. */
  maxAgeSeconds: number | null;
  ttlMinutes: number | null;
  retryAfterSeconds: number | null;
  bodyHash: string | null;
}

/**
 * One poll of one feed by one collector, top to bottom: the polite fetch (breaker, robots, rate
 * budget, conditional GET, retries, recorded) → 304: activity, done → parse (a body that is not
 * a feed is the source's fault, recorded and held against its breaker) → every entry through the
 * writer in one batch (origin `poll`; the entry's updated date is the source's revision) →
 * activity, and content when the body changed since this collector last saw it.
 */
export async function refreshFeed(
  db: Database,
  source: SourceRef,
  collector: string,
  previousBodyHash: string | null,
  fetchOptions: FetchSourceOptions = {},
): Promise<RefreshOutcome> {
  const fetched = await fetchSource(db, source, collector, fetchOptions);
  const outcome: RefreshOutcome = {
    code: fetched.code,
    changed: 0,
    entries: 0,
    maxAgeSeconds: maxAgeFrom(fetched.cacheControl),
    ttlMinutes: null,
    retryAfterSeconds: fetched.retryAfterSeconds ?? null,
    bodyHash: previousBodyHash,
  };
  if (fetched.code === "not_modified") {
    await recordActivity(db, source.id, collector, "not_modified");
    return outcome;
  }
  if (fetched.code !== "ok" || !fetched.body) return outcome;

  await recordActivity(db, source.id, collector, "fetch");
  outcome.bodyHash = createHash("sha256").update(fetched.body).digest("hex");
  let entries: ParsedEntry[];
  try {
    const feed = parseFeed(fetched.body, {
      url: fetched.finalUrl,
      contentType: fetched.contentType,
    });
    entries = feed.entries;
    outcome.ttlMinutes = feed.feed.ttlMinutes ?? null;
  } catch (err) {
    if (!(err instanceof FeedParseError)) throw err;
    await reportParseError(db, source.id, collector, err.message);
    return { ...outcome, code: "parse_error" };
  }
  const observedAt = new Date();
  const written = await writeBatch(
    db,
    entries.map((e) => ({
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
  );
  outcome.entries = entries.length;
  outcome.changed = countChanged(written);
  if (outcome.bodyHash !== previousBodyHash && (previousBodyHash !== null || outcome.changed > 0)) {
    await recordContent(db, source.id, collector);
  }
  return outcome;
}

export function countChanged(outcomes: WriteOutcome[]): number {
  return outcomes.filter((o) => ["inserted", "upgraded", "updated"].includes(o.result)).length;
}
