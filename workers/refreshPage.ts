import { createHash } from "node:crypto";
import type { Database } from "@/lib/db";
import { recordActivity, recordContent } from "@/workers/collectors/collectorStatus";
import { pageHeadlines } from "@/workers/collectors/pageHeadlines";
import { reportParseError } from "@/workers/collectors/reportParseError";
import type { SourceRef } from "@/workers/collectors/sourceRef";
import { type FetchSourceOptions, fetchSource } from "@/workers/fetcher";
import { maxAgeFrom } from "@/workers/schedule/nextPoll";
import { writeBatch } from "@/workers/store";
import { countChanged, type RefreshOutcome } from "./refreshFeed";

const HTML_ACCEPT = "text/html, application/xhtml+xml;q=0.9, */*;q=0.1";

/**
 * One look at a rendered page by the fallback observer (seed 000): the polite fetch → the
 * headlines' titles and links (nothing else is visible there) → the writer with origin
 * `fallback`, under the source the page observes, so a headline the page shows first creates
 * the row the primary stream then upgrades, and a late page view never changes it.
 */
export async function refreshPage(
  db: Database,
  source: SourceRef,
  collector: string,
  previousBodyHash: string | null,
  fetchOptions: FetchSourceOptions = {},
): Promise<RefreshOutcome> {
  const fetched = await fetchSource(db, source, collector, {
    accept: HTML_ACCEPT,
    ...fetchOptions,
  });
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
  const html = fetched.body.toString("utf8");
  if (!/<(html|body|article|a)\b/i.test(html)) {
    await reportParseError(db, source.id, collector, "page observer: the body is not an HTML page");
    return { ...outcome, code: "parse_error" };
  }
  const headlines = pageHeadlines(html, fetched.finalUrl);
  const observedAt = new Date();
  const written = await writeBatch(
    db,
    headlines.map((h) => ({
      kind: "observe" as const,
      input: {
        sourceId: source.observes ?? source.id,
        collector,
        origin: "fallback",
        link: h.link,
        title: h.title,
        observedAt,
      },
    })),
  );
  outcome.entries = headlines.length;
  outcome.changed = countChanged(written);
  if (outcome.bodyHash !== previousBodyHash && (previousBodyHash !== null || outcome.changed > 0)) {
    await recordContent(db, source.id, collector);
  }
  return outcome;
}
