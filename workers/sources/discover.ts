import { canonicalizeUrl } from "@/lib/canonical";
import type { Database } from "@/lib/db";
import { type Attempt, attemptGet, header } from "@/workers/fetcher/attempt";
import { FetchError } from "@/workers/fetcher/classify";
import type { HttpLimits, HttpResponse } from "@/workers/fetcher/httpGet";
import { resolveChecked } from "@/workers/fetcher/resolveChecked";
import { robotsRefusal } from "@/workers/fetcher/robots";
import { fetcherDeps, guardedGet } from "@/workers/fetcher/settle";
import { blockedAddressReason, blockedHostnameReason, ipLiteral } from "@/workers/fetcher/ssrf";
import type { FetcherDeps } from "@/workers/fetcher/types";
import { parseFeed } from "@/workers/parser/parseFeed";

/**
 * What the dashboard's "add a source" asks before anything is saved: which feeds a pasted site
 * or feed URL leads to (discoverFeeds), and what one of them would ingest (previewFeed). Both go
 * through the fetcher's guarded transport: the SSRF check on every resolved address and every
 * redirect, robots.txt (cached per origin in robots_cache, as polls use it), the per-host rate
 * budget shared with the polls, timeouts and a byte cap. Neither writes a source, a job or a
 * fetch_attempts row: nothing is a source yet, so there is no breaker to judge.
 */

/** The feed types a page advertises with <link rel="alternate" type=…> (RSS, Atom, JSON Feed). */
export const FEED_LINK_TYPES = new Set([
  "application/rss+xml",
  "application/atom+xml",
  "application/rdf+xml",
  "application/feed+json",
  "application/json",
  "text/xml",
  "application/xml",
]);

/**
 * Where sites put their feed when the page names none, in the order tried: WordPress (/feed),
 * the static-site generators (Hugo /index.xml, Jekyll /feed.xml, others /rss.xml, /atom.xml),
 * and JSON Feed's /feed.json. Seven requests at most, at the host's rate budget.
 */
export const COMMON_FEED_PATHS = [
  "/feed",
  "/rss.xml",
  "/atom.xml",
  "/feed.xml",
  "/index.xml",
  "/rss",
  "/feed.json",
] as const;

// The fetcher's own Accept for feeds (workers/fetcher/index.ts), with HTML for a site's page.
const DISCOVER_ACCEPT =
  "application/rss+xml, application/atom+xml, application/rdf+xml, application/feed+json, application/xml;q=0.9, text/xml;q=0.8, text/html;q=0.7, application/json;q=0.5, */*;q=0.1";
const FEED_ACCEPT =
  "application/rss+xml, application/atom+xml, application/rdf+xml, application/feed+json, application/xml;q=0.9, text/xml;q=0.8, application/json;q=0.5, */*;q=0.1";

/**
 * An admin waits on these in a form: 10 s a request instead of a poll's 30 s, and 2 MiB for a
 * site's page (front pages run 100–600 KB; the links are in its head). A feed keeps the poll's
 * 10 MiB, since a preview should read what the poll will read.
 */
const PREVIEW_LIMITS: Partial<HttpLimits> = { totalTimeoutMs: 10_000 };
const PAGE_MAX_BYTES = 2 * 1024 * 1024;
/**
 * The common paths together get 20 s, then the rest are not tried: seven 10 s timeouts would
 * keep an admin waiting over a minute for a host that has stopped answering.
 */
const COMMON_PATHS_BUDGET_MS = 20_000;
/** The preview lists this many entries; the count covers them all. */
const PREVIEW_ENTRIES = 10;
const MAX_URL_LENGTH = 2_048;

export interface InspectOptions {
  /** The source would reach loopback/private addresses (the simulator, an intranet feed). */
  allowPrivate: boolean;
  deps?: Partial<FetcherDeps>;
  limits?: Partial<HttpLimits>;
  /** false skips robots.txt (tests of other things only). */
  robots?: false;
}

export interface Problem {
  code: string;
  message: string;
}

/**
 * A URL pasted into the form, checked before any request: absolute http(s), no user or password
 * (it would be shown on the Sources page and written into exports), at most 2,048 characters,
 * and, unless private addresses are allowed, not an internal name or a non-global IP literal.
 * Names are resolved and checked at each request (resolveChecked), not here.
 */
export function checkSourceUrl(raw: string, allowPrivate: boolean): { url: URL } | Problem {
  if (raw.length > MAX_URL_LENGTH) {
    return { code: "invalid_url", message: `the URL is over ${MAX_URL_LENGTH} characters` };
  }
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return { code: "invalid_url", message: `"${raw.slice(0, 200)}" is not an absolute URL` };
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return { code: "invalid_url", message: `${url.protocol} is not http or https` };
  }
  if (url.username || url.password) {
    return { code: "invalid_url", message: "the URL carries a user name or password" };
  }
  if (!allowPrivate) {
    const literal = ipLiteral(url);
    const reason = literal ? blockedAddressReason(literal) : blockedHostnameReason(url.hostname);
    if (reason) return { code: "blocked_ssrf", message: `${url.host} refused: ${reason}` };
  }
  return { url };
}

export interface SsrfVerdict {
  allowed: boolean;
  /** The address the fetch would dial, once it passed. */
  address: string | null;
  message: string;
}

/** The SSRF guard's answer for the URL's host, resolved now, as a poll would resolve it. */
export async function ssrfVerdict(url: URL, options: InspectOptions): Promise<SsrfVerdict> {
  const deps = fetcherDeps({ deps: options.deps });
  try {
    const address = await resolveChecked(
      url,
      { allowPrivate: options.allowPrivate, resolver: deps.resolver },
      5_000,
    );
    const isPrivate = blockedAddressReason(address) !== null;
    return {
      allowed: true,
      address,
      message: isPrivate
        ? `${url.hostname} resolves to ${address}, a private address this source is allowed to reach`
        : `${url.hostname} resolves to ${address}, a public address`,
    };
  } catch (err) {
    if (!(err instanceof FetchError)) throw err;
    return { allowed: false, address: null, message: err.message };
  }
}

export interface RobotsVerdict {
  allowed: boolean;
  message: string;
}

type Get = (
  url: string,
  headers: Record<string, string>,
  maxBytes?: number,
) => Promise<HttpResponse>;

function transport(url: URL, options: InspectOptions): Get {
  const deps = fetcherDeps({ deps: options.deps });
  return guardedGet(
    { id: "(preview)", url: url.href, allowPrivate: options.allowPrivate },
    { limits: { ...PREVIEW_LIMITS, ...options.limits } },
    deps,
  );
}

async function robotsVerdict(
  db: Database,
  url: string,
  get: Get,
  options: InspectOptions,
): Promise<RobotsVerdict> {
  if (options.robots === false) return { allowed: true, message: "not checked" };
  const refused = await robotsRefusal(db, url, (u, maxBytes) =>
    get(u, { accept: "text/plain, */*;q=0.5" }, maxBytes),
  );
  return refused
    ? { allowed: false, message: `${refused.code}: ${refused.message}` }
    : { allowed: true, message: `robots.txt of ${new URL(url).origin} allows it` };
}

export interface FeedCandidate {
  url: string;
  title: string | null;
  /** The advertised or served type. */
  type: string | null;
  /** How it was found: the URL is a feed, a <link rel="alternate">, or a common path. */
  via: "direct" | "link" | "path";
  /** The source that already polls this feed (same canonical URL), if one does. */
  existingId?: string;
}

export interface Discovery {
  url: string;
  /** Where the page ended after redirects, when it was fetched. */
  finalUrl: string | null;
  candidates: FeedCandidate[];
  ssrf: SsrfVerdict;
  robots: RobotsVerdict | null;
  /** Why nothing was found: the fetch failed, robots refused, or the page advertises no feed. */
  problem: Problem | null;
}

/**
 * A pasted URL to the feeds it leads to, as Miniflux's subscription finder does: the URL itself
 * when it is a feed; else the feeds its HTML advertises (<link rel="alternate"> of a feed type);
 * else the common paths on its origin that answer with a feed.
 */
export async function discoverFeeds(
  db: Database,
  raw: string,
  options: InspectOptions,
): Promise<Discovery> {
  const found = await findFeeds(db, raw, options);
  if (found.candidates.length === 0) return found;
  const sources = await db.prisma.source.findMany({ select: { id: true, url: true } });
  const byKey = new Map(sources.flatMap((s) => (s.url ? [[sameFeedKey(s.url), s.id]] : [])));
  return {
    ...found,
    candidates: found.candidates.map((c) => {
      const existingId = byKey.get(sameFeedKey(c.url));
      return existingId ? { ...c, existingId } : c;
    }),
  };
}

/** "The same feed" as the OPML import judges it: lib/canonical's form of the URL. */
function sameFeedKey(url: string): string {
  try {
    return canonicalizeUrl(url);
  } catch {
    return url;
  }
}

async function findFeeds(db: Database, raw: string, options: InspectOptions): Promise<Discovery> {
  const checked = checkSourceUrl(raw, options.allowPrivate);
  if (!("url" in checked)) throw new DiscoverInputError(checked);
  const url = checked.url;
  const ssrf = await ssrfVerdict(url, options);
  const base = { url: url.href, finalUrl: null, candidates: [], ssrf, robots: null };
  if (!ssrf.allowed) return { ...base, problem: { code: "blocked_ssrf", message: ssrf.message } };
  const get = transport(url, options);
  const robots = await robotsVerdict(db, url.href, get, options);
  if (!robots.allowed)
    return { ...base, robots, problem: { code: "blocked_robots", message: robots.message } };

  const page = await attemptGet(
    () => get(url.href, { accept: DISCOVER_ACCEPT }, PAGE_MAX_BYTES),
    Date.now(),
  );
  if (page.code !== "ok" || !page.res) {
    return { ...base, robots, problem: failure(page) };
  }
  const finalUrl = page.res.finalUrl;
  const contentType = header(page.res, "content-type");
  const feed = tryParse(page.res.body, finalUrl, contentType);
  if (feed) {
    const candidate = {
      url: finalUrl,
      title: feed.feed.title || null,
      type: contentType,
      via: "direct" as const,
    };
    return { ...base, finalUrl, robots, candidates: [candidate], problem: null };
  }
  const advertised = advertisedFeeds(page.res.body.toString("utf8"), finalUrl);
  if (advertised.length > 0) {
    return { ...base, finalUrl, robots, candidates: advertised, problem: null };
  }
  const found = await commonPaths(db, new URL(finalUrl), get, options);
  return {
    ...base,
    finalUrl,
    robots,
    candidates: found,
    problem:
      found.length > 0
        ? null
        : {
            code: "no_feed",
            message: `${finalUrl} is not a feed, advertises none (<link rel="alternate">) and none of ${COMMON_FEED_PATHS.join(", ")} answers with one`,
          },
  };
}

/** A URL the form should not have sent: a 400, not a verdict. */
export class DiscoverInputError extends Error {
  constructor(readonly problem: Problem) {
    super(problem.message);
    this.name = "DiscoverInputError";
  }
}

function failure(attempt: Attempt): Problem {
  return { code: attempt.code, message: attempt.message ?? `fetcher: ${attempt.code}` };
}

function tryParse(body: Buffer, url: string, contentType: string | null) {
  try {
    return parseFeed(body, { url, contentType: contentType ?? undefined });
  } catch {
    return null;
  }
}

async function commonPaths(
  db: Database,
  site: URL,
  get: Get,
  options: InspectOptions,
): Promise<FeedCandidate[]> {
  const found: FeedCandidate[] = [];
  const deadline = Date.now() + COMMON_PATHS_BUDGET_MS;
  for (const path of COMMON_FEED_PATHS) {
    if (Date.now() > deadline) break;
    const url = new URL(path, site.origin).href;
    if (!(await robotsVerdict(db, url, get, options)).allowed) continue;
    const attempt = await attemptGet(() => get(url, { accept: FEED_ACCEPT }), Date.now());
    if (attempt.code !== "ok" || !attempt.res) continue;
    const contentType = header(attempt.res, "content-type");
    const feed = tryParse(attempt.res.body, attempt.res.finalUrl, contentType);
    if (!feed) continue;
    // /feed and /feed/ redirecting to one feed is one candidate.
    if (found.some((c) => c.url === attempt.res?.finalUrl)) continue;
    found.push({
      url: attempt.res.finalUrl,
      title: feed.feed.title || null,
      type: contentType,
      via: "path",
    });
  }
  return found;
}

const LINK_TAG = /<link\b[^>]*>/gi;
const ATTRIBUTE = /([^\s=/>"']+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>"']+)))?/g;
const ENTITIES: Record<string, string> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  "#39": "'",
};

/**
 * The feeds an HTML page advertises: <link rel="alternate" type="…" href="…"> whose rel has the
 * token "alternate" and whose type is a feed type, hrefs resolved against the page (or its
 * <base href>), http(s) only, each once, in document order. A tag scan, not a DOM: a page that
 * hides its links in scripts advertises nothing a feed reader would find either.
 */
export function advertisedFeeds(html: string, pageUrl: string): FeedCandidate[] {
  const head = html.slice(0, PAGE_MAX_BYTES);
  const baseHref = /<base\b[^>]*\bhref\s*=\s*["']?([^"'\s>]+)/i.exec(head)?.[1];
  let base = pageUrl;
  if (baseHref) {
    try {
      base = new URL(decodeEntities(baseHref), pageUrl).href;
    } catch {
      // A broken <base> is ignored, as browsers do.
    }
  }
  const out: FeedCandidate[] = [];
  for (const tag of head.match(LINK_TAG) ?? []) {
    const attrs = attributes(tag);
    const rel = (attrs.rel ?? "").toLowerCase().split(/\s+/);
    const type = (attrs.type ?? "").toLowerCase().split(";")[0]?.trim() ?? "";
    if (!rel.includes("alternate") || !FEED_LINK_TYPES.has(type) || !attrs.href) continue;
    let href: URL;
    try {
      href = new URL(attrs.href, base);
    } catch {
      continue;
    }
    if (href.protocol !== "http:" && href.protocol !== "https:") continue;
    if (out.some((c) => c.url === href.href)) continue;
    out.push({ url: href.href, title: attrs.title?.trim() || null, type, via: "link" });
  }
  return out;
}

function attributes(tag: string): Record<string, string> {
  const out: Record<string, string> = {};
  const inner = tag.replace(/^<link\b/i, "").replace(/\/?>$/, "");
  for (const m of inner.matchAll(ATTRIBUTE)) {
    const name = m[1]?.toLowerCase();
    if (!name || name in out) continue;
    out[name] = decodeEntities(m[2] ?? m[3] ?? m[4] ?? "");
  }
  return out;
}

function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, name: string) => {
    if (name.startsWith("#x") || name.startsWith("#X"))
      return safeChar(Number.parseInt(name.slice(2), 16), whole);
    if (name.startsWith("#")) return safeChar(Number.parseInt(name.slice(1), 10), whole);
    return ENTITIES[name.toLowerCase()] ?? whole;
  });
}

function safeChar(code: number, fallback: string): string {
  return Number.isInteger(code) && code > 0 && code <= 0x10ffff
    ? String.fromCodePoint(code)
    : fallback;
}

export interface Preview {
  url: string;
  finalUrl: string | null;
  ssrf: SsrfVerdict;
  robots: RobotsVerdict | null;
  /** The fetch's stable code (ok, http_404, timeout, blocked_ssrf …) and HTTP status. */
  fetch: { code: string; status: number | null; bytes: number; message: string | null } | null;
  /** What the feed says: null when it was not fetched or is not a feed (see problem). */
  feed: {
    title: string;
    format: string;
    link: string | null;
    entryCount: number;
    entries: { title: string; link: string | null; published: string | null }[];
  } | null;
  validators: { etag: string | null; lastModified: string | null };
  /** Everything passed: a poll of this URL would ingest the entries shown. */
  ok: boolean;
  problem: Problem | null;
}

/**
 * One fetch of a feed URL as its polls would make it (same transport, robots.txt, Accept), read
 * by the feed parser: its title, its first entries and their count, the validators it sends
 * (ETag, Last-Modified: without them every poll downloads the whole feed), the robots.txt and
 * SSRF verdicts. Nothing is stored but robots.txt in its cache.
 */
export async function previewFeed(
  db: Database,
  raw: string,
  options: InspectOptions,
): Promise<Preview> {
  const checked = checkSourceUrl(raw, options.allowPrivate);
  if (!("url" in checked)) throw new DiscoverInputError(checked);
  const url = checked.url;
  const ssrf = await ssrfVerdict(url, options);
  const base: Preview = {
    url: url.href,
    finalUrl: null,
    ssrf,
    robots: null,
    fetch: null,
    feed: null,
    validators: { etag: null, lastModified: null },
    ok: false,
    problem: null,
  };
  if (!ssrf.allowed) return { ...base, problem: { code: "blocked_ssrf", message: ssrf.message } };
  const get = transport(url, options);
  const robots = await robotsVerdict(db, url.href, get, options);
  if (!robots.allowed) {
    return { ...base, robots, problem: { code: "blocked_robots", message: robots.message } };
  }
  const attempt = await attemptGet(() => get(url.href, { accept: FEED_ACCEPT }), Date.now());
  const res = attempt.res;
  const fetched = {
    ...base,
    robots,
    finalUrl: res?.finalUrl ?? null,
    fetch: {
      code: attempt.code,
      status: res?.status ?? null,
      bytes: res?.body.length ?? 0,
      message: attempt.message ?? null,
    },
    validators: {
      etag: res ? header(res, "etag") : null,
      lastModified: res ? header(res, "last-modified") : null,
    },
  };
  if (attempt.code !== "ok" || !res) return { ...fetched, problem: failure(attempt) };
  try {
    const feed = parseFeed(res.body, {
      url: res.finalUrl,
      contentType: header(res, "content-type") ?? undefined,
    });
    return {
      ...fetched,
      ok: true,
      feed: {
        title: feed.feed.title,
        format: feed.format,
        link: feed.feed.link ?? null,
        entryCount: feed.entries.length,
        entries: feed.entries.slice(0, PREVIEW_ENTRIES).map((e) => ({
          title: e.title,
          link: e.link ?? null,
          published: e.published ?? null,
        })),
      },
    };
  } catch (err) {
    return {
      ...fetched,
      problem: { code: "parse_error", message: `parser: ${(err as Error).message}` },
    };
  }
}
