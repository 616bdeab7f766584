import type { Database } from "@/lib/db";
import { type PageHeadline, pageHeadlines } from "@/workers/collectors/pageHeadlines";
import { type PageLook, recordPageLook } from "@/workers/collectors/pageLooks";
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
import {
  BrowserUnavailableError,
  beginPoll,
  browserAnswers,
  type Fetched,
  type FetchSourceOptions,
  type RenderLimits,
  renderPage,
  sharedBrowserPool,
} from "@/workers/fetcher";
import { type BrowserPool, RenderDeadlineError } from "@/workers/fetcher/browser";
import { type Delivery, type Writer, writeBatch } from "@/workers/store";

const HTML_ACCEPT = "text/html, application/xhtml+xml;q=0.9, */*;q=0.1";

export interface PageReadOptions {
  /** The browser pool a rendered page uses (the process's shared one by default). */
  browser?: BrowserPool;
  renderLimits?: Partial<RenderLimits>;
}

/**
 * One look at a rendered page by the fallback observer (seed 000), the whole path:
 * fetch (as politely as a feed, asking for HTML) → the headlines' titles and links (nothing else
 * is visible there; a body that is not an HTML page is a `parse_error`), read from the HTML as
 * served or, for a source marked `render: "browser"`, from the DOM after headless Chromium ran
 * the page's scripts (seed 002: the browser only as the fallback) → the writer with origin
 * `fallback`, under the source the page observes, so a headline the page shows first creates
 * the row the primary stream then upgrades, and a late page view never changes it → the poll's
 * one breaker verdict → the hints for the next look and content arrival when the page changed.
 * Every look that got a body is recorded with its cost (page_looks).
 */
export async function refreshPage(
  db: Database,
  source: SourceRef,
  collector: string,
  previousBodyHash: string | null,
  fetchOptions: FetchSourceOptions = {},
  write: Writer = (deliveries) => writeBatch(db, deliveries),
  readOptions: PageReadOptions = {},
): Promise<RefreshOutcome> {
  const rendered = source.render === "browser";
  const poll = await beginPoll(db, source, collector, {
    accept: HTML_ACCEPT,
    ...fetchOptions,
    // The shell of a page built by scripts rarely changes when its headlines do.
    ...(rendered ? { validators: false as const } : {}),
  });
  const fetched = fetchedOutcome(poll.fetched, previousBodyHash);
  const body = poll.fetched.body;
  if (!body) return settleWithoutBody(db, poll, source.id, collector, fetched);

  const read = await readBody(poll, () =>
    rendered
      ? readRendered(db, source, poll.fetched, body, fetchOptions, readOptions)
      : readServed(body, poll.fetched),
  );
  if (isUnreadable(read)) return settleUnreadable(poll, fetched, read);
  // What the page showed decides "changed": the DOM the scripts built, for a rendered page.
  const outcome = await bodyArrived(db, source.id, collector, read.shown, fetched);
  await recordPageLook(db, source.id, collector, {
    ...read.look,
    headlines: isUnreadable(read.headlines) ? 0 : read.headlines.length,
    code: isUnreadable(read.headlines) ? "parse_error" : "ok",
    ...(isUnreadable(read.headlines) ? { message: read.headlines.unreadable } : {}),
  });
  if (isUnreadable(read.headlines)) return settleUnreadable(poll, outcome, read.headlines);

  const observedAt = new Date();
  const deliveries: Delivery[] = read.headlines.map((h) => ({
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

interface PageRead {
  headlines: PageHeadline[] | Unreadable;
  /** What the page showed, hashed to tell whether it changed since the last look. */
  shown: Buffer;
  look: Omit<PageLook, "headlines" | "code" | "message">;
}

function headlinesOf(html: string, pageUrl: string): PageHeadline[] | Unreadable {
  if (!/<(html|body|article|a)\b/i.test(html)) {
    return { unreadable: "page observer: the body is not an HTML page" };
  }
  return pageHeadlines(html, pageUrl);
}

/** The HTML as served; its CPU cost is this process's, measured around the synchronous read. */
function readServed(body: Buffer, fetched: Fetched): PageRead {
  const wall = performance.now();
  const cpu = process.cpuUsage();
  const headlines = headlinesOf(body.toString("utf8"), fetched.finalUrl);
  const used = process.cpuUsage(cpu);
  return {
    headlines,
    shown: body,
    look: {
      mode: "http",
      wallMs: fetched.durationMs + (performance.now() - wall),
      cpuMs: (used.user + used.system) / 1000,
      requests: fetched.attempts,
      blocked: 0,
      blockedDetail: [],
      bytes: body.length,
    },
  };
}

/**
 * The page rendered in headless Chromium: the document the poll fetched is handed to the browser
 * (not fetched twice), every further request goes out through the fetcher (browserAnswers), and
 * the headlines are read off the DOM once the network is quiet. A page that crashes the renderer
 * or never loads is the source's fault (unreadable); a machine without Chromium is not, and
 * throws, so the job fails and retries with the reason instead of the source's breaker opening.
 */
async function readRendered(
  db: Database,
  source: SourceRef,
  fetched: Fetched,
  body: Buffer,
  fetchOptions: FetchSourceOptions,
  readOptions: PageReadOptions,
): Promise<PageRead> {
  const pool = readOptions.browser ?? sharedBrowserPool();
  try {
    const page = await renderPage(
      pool,
      { url: fetched.finalUrl, body, contentType: fetched.contentType },
      browserAnswers(db, source, fetchOptions),
      readOptions.renderLimits,
    );
    return {
      headlines: headlinesOf(page.html, fetched.finalUrl),
      shown: Buffer.from(page.html),
      look: {
        mode: "browser",
        wallMs: fetched.durationMs + page.wallMs,
        cpuMs: page.cpuMs,
        requests: fetched.attempts + page.requests - 1,
        blocked: page.blocked,
        blockedDetail: page.blockedDetail,
        bytes: page.bytes,
      },
    };
  } catch (err) {
    if (err instanceof BrowserUnavailableError) throw err;
    return {
      headlines: { unreadable: `browser: ${(err as Error).message.split("\n")[0]}` },
      shown: body,
      look: {
        mode: "browser",
        wallMs: fetched.durationMs + (err instanceof RenderDeadlineError ? err.wallMs : 0),
        // Cut off at its deadline, the renderer was busy all along: its wall time is its CPU.
        cpuMs: err instanceof RenderDeadlineError ? err.wallMs : 0,
        requests: fetched.attempts,
        blocked: 0,
        blockedDetail: [],
        bytes: body.length,
      },
    };
  }
}
