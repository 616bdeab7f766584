import type { Database } from "@/lib/db";
import { pageHeadlines } from "@/workers/collectors/pageHeadlines";
import { pollOnce, type RefreshOutcome } from "@/workers/collectors/pollOnce";
import type { SourceRef } from "@/workers/collectors/sourceRef";
import type { FetchSourceOptions } from "@/workers/fetcher";
import type { Writer } from "@/workers/store";

const HTML_ACCEPT = "text/html, application/xhtml+xml;q=0.9, */*;q=0.1";

/**
 * One look at a rendered page by the fallback observer (seed 000): the polite fetch → the
 * headlines' titles and links (nothing else is visible there) → the writer with origin
 * `fallback`, under the source the page observes, so a headline the page shows first creates
 * the row the primary stream then upgrades, and a late page view never changes it.
 */
export function refreshPage(
  db: Database,
  source: SourceRef,
  collector: string,
  previousBodyHash: string | null,
  fetchOptions: FetchSourceOptions = {},
  write?: Writer,
): Promise<RefreshOutcome> {
  const options = { accept: HTML_ACCEPT, ...fetchOptions };
  return pollOnce(
    db,
    source,
    collector,
    previousBodyHash,
    options,
    (fetched) => {
      const html = fetched.body.toString("utf8");
      if (!/<(html|body|article|a)\b/i.test(html)) {
        return { unreadable: "page observer: the body is not an HTML page" };
      }
      const observedAt = new Date();
      return {
        deliveries: pageHeadlines(html, fetched.finalUrl).map((h) => ({
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
      };
    },
    write,
  );
}
