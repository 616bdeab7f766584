import type { Database } from "@/lib/db";
import { pageHeadlines } from "@/workers/collectors/pageHeadlines";
import {
  bodyArrived,
  fetchedOutcome,
  isUnreadable,
  type RefreshOutcome,
  readBody,
  recordWritten,
  settleUnreadable,
  settleWithoutBody,
  writeAndSettle,
} from "@/workers/collectors/pollSteps";
import type { SourceRef } from "@/workers/collectors/sourceRef";
import { beginPoll, type FetchSourceOptions } from "@/workers/fetcher";
import { type Delivery, type Writer, writeBatch } from "@/workers/store";

const HTML_ACCEPT = "text/html, application/xhtml+xml;q=0.9, */*;q=0.1";

/**
 * One look at a rendered page by the fallback observer (seed 000), the whole path:
 * fetch (as politely as a feed, asking for HTML) → the headlines' titles and links (nothing else
 * is visible there; a body that is not an HTML page is a `parse_error`) → the writer with origin
 * `fallback`, under the source the page observes, so a headline the page shows first creates
 * the row the primary stream then upgrades, and a late page view never changes it → the poll's
 * one breaker verdict → the hints for the next look and content arrival when the page changed.
 */
export async function refreshPage(
  db: Database,
  source: SourceRef,
  collector: string,
  previousBodyHash: string | null,
  fetchOptions: FetchSourceOptions = {},
  write: Writer = (deliveries) => writeBatch(db, deliveries),
): Promise<RefreshOutcome> {
  const poll = await beginPoll(db, source, collector, { accept: HTML_ACCEPT, ...fetchOptions });
  const fetched = fetchedOutcome(poll.fetched, previousBodyHash);
  const body = poll.fetched.body;
  if (!body) return settleWithoutBody(db, poll, source.id, collector, fetched);
  const outcome = await bodyArrived(db, source.id, collector, body, fetched);

  const headlines = await readBody(poll, () => {
    const html = body.toString("utf8");
    if (!/<(html|body|article|a)\b/i.test(html)) {
      return { unreadable: "page observer: the body is not an HTML page" };
    }
    return pageHeadlines(html, poll.fetched.finalUrl);
  });
  if (isUnreadable(headlines)) return settleUnreadable(poll, outcome, headlines);

  const observedAt = new Date();
  const deliveries: Delivery[] = headlines.map((h) => ({
    kind: "observe",
    input: {
      sourceId: source.observes ?? source.id,
      collector,
      origin: "fallback",
      link: h.link,
      title: h.title,
      observedAt,
    },
  }));
  const written = await writeAndSettle(poll, write, deliveries);
  return recordWritten(db, source.id, collector, outcome, written, previousBodyHash);
}
