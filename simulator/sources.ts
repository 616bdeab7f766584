import { FEED_FORMATS, FEED_SUFFIX, type FeedFormat, type Outlet } from "./outlets";

/**
 * A source as wirewatch configures it (the shape of wirewatch.config.json's entries), ready to
 * hand over: the simulator listens on 127.0.0.1, hence `allowPrivate`.
 */
export interface SimSource {
  id: string;
  name: string;
  kind: "feed" | "stream" | "page" | "story-api";
  url: string;
  backfillUrl?: string;
  /** A page observes its outlet's stream: the fallback observer of the same items (seed 000). */
  observes?: string;
  /** A page whose headlines only its script puts there: read it in the browser. */
  render?: "browser";
  allowPrivate: true;
  collectors: string[];
  pollIntervalSeconds?: number;
  /** story-api: the tickers to follow (seed 001). */
  tickers?: string[];
  /** story-api: apply the snapshot in each event, or fetch the story when notified. */
  storyMode?: "snapshot" | "fetch";
  /** story-api: the secrets the simulator signs webhook deliveries with ("whsec_…"). */
  webhookSecrets?: string[];
}

/** A source plus what the server needs to answer for it. */
export interface SourceRoute {
  source: SimSource;
  outlet: Outlet;
  format?: FeedFormat;
  /** Listed by sources(); every outlet's page is served, only some are offered as sources. */
  listed: boolean;
}

// Feeds every 30 s and the page every 10 s: lively on a dashboard, yet slower than the stream,
// so the stream stays the authoritative first sight and the page wins only its occasional race.
const FEED_POLL_S = 30;
const PAGE_POLL_S = 10;

export function sourceRoutes(outlets: readonly Outlet[], base: string): Map<string, SourceRoute> {
  const routes = new Map<string, SourceRoute>();
  const add = (route: SourceRoute) => routes.set(route.source.id, route);
  for (const outlet of outlets) {
    if (outlet.stream) {
      add({
        outlet,
        listed: true,
        source: {
          id: outlet.id,
          name: `${outlet.name} (stream)`,
          kind: "stream",
          url: `${base}/s/${outlet.id}/events`,
          backfillUrl: `${base}/s/${outlet.id}/history`,
          allowPrivate: true,
          // Two collectors on the primary stream, as in seed 000, for redundancy.
          collectors: ["A", "B"],
        },
      });
    }
    // Every format is served and advertised on the outlet's page (a site's <link rel="alternate">),
    // only the outlet's own are listed as sources: the others are there to be discovered.
    for (const format of FEED_FORMATS) {
      const id = `${outlet.id}-${FEED_SUFFIX[format]}`;
      add({
        outlet,
        format,
        listed: outlet.feeds.includes(format),
        source: {
          id,
          name: `${outlet.name} (${{ rss2: "RSS 2.0", rdf: "RSS 1.0", atom: "Atom" }[format]})`,
          kind: "feed",
          url: `${base}/s/${id}/feed.xml`,
          allowPrivate: true,
          collectors: ["A"],
          pollIntervalSeconds: FEED_POLL_S,
        },
      });
    }
    const pageId = `${outlet.id}-page`;
    add({
      outlet,
      listed: outlet.listPage === true,
      source: {
        id: pageId,
        name: `${outlet.name} (page)`,
        kind: "page",
        url: `${base}/s/${pageId}/`,
        ...(outlet.stream ? { observes: outlet.id } : {}),
        allowPrivate: true,
        collectors: ["A"],
        pollIntervalSeconds: PAGE_POLL_S,
      },
    });
    // The same front page built by a script from a JSON endpoint, as many sites now are: its
    // HTML has no headlines, so only the browser fetch path finds them. Served for every
    // outlet, listed for none (a test or an operator adds it).
    const scriptedId = `${outlet.id}-js`;
    add({
      outlet,
      listed: false,
      source: {
        id: scriptedId,
        name: `${outlet.name} (scripted page)`,
        kind: "page",
        url: `${base}/s/${scriptedId}/`,
        render: "browser",
        allowPrivate: true,
        collectors: ["A"],
        pollIntervalSeconds: PAGE_POLL_S,
      },
    });
  }
  return routes;
}
