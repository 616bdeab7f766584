import robotsParser from "robots-parser";
import type { Database } from "@/lib/db";
import { type FetchCode, FetchError } from "./classify";
import { type HttpResponse, ROBOTS_AGENT } from "./httpGet";

/**
 * robots.txt, per origin, cached in robots_cache. What an answer means follows Google's
 * documented behaviour (developers.google.com/search/docs/crawling-indexing/robots/robots_txt):
 * - 2xx: the rules apply, for 24 h (Google caches up to 24 h).
 * - 4xx except 429: no robots.txt, everything allowed, for 24 h.
 * - 429, 5xx, an unusable answer (stored as status 0): everything disallowed, but only for 10 min, then
 *   asked again. Google treats a failing robots.txt as "disallow all" too; the short TTL keeps a
 *   blip from silencing a feed for a day.
 * The parser gets at most 500 KiB, Google's limit for robots.txt.
 */
export interface RobotsPolicy {
  ttlMs: number;
  errorTtlMs: number;
  maxBytes: number;
}

export const DEFAULT_ROBOTS: RobotsPolicy = {
  ttlMs: 24 * 3_600_000,
  errorTtlMs: 10 * 60_000,
  maxBytes: 500 * 1024,
};

/** The guarded GET, bound to the source's SSRF settings and the host's rate budget. */
export type GuardedGet = (url: string, maxBytes: number) => Promise<HttpResponse>;

interface Cached {
  status: number;
  body: string;
}

export async function robotsAllows(
  db: Database,
  target: URL,
  get: GuardedGet,
  policy: RobotsPolicy = DEFAULT_ROBOTS,
): Promise<boolean> {
  const robotsUrl = `${target.origin}/robots.txt`;
  const cached = await db.prisma.$queryRaw<Cached[]>`
    SELECT status, body FROM robots_cache WHERE origin = ${target.origin} AND expires_at > now()`;
  const entry = cached[0] ?? (await refresh(db, target.origin, robotsUrl, get, policy));
  if (entry.status >= 200 && entry.status < 300) {
    return robotsParser(robotsUrl, entry.body).isAllowed(target.href, ROBOTS_AGENT) !== false;
  }
  return entry.status >= 400 && entry.status < 500 && entry.status !== 429;
}

/**
 * Fetches and stores robots.txt. Two workers refreshing one origin at once both fetch and the
 * later upsert wins; both answers are fresh, so either is right.
 *
 * Not cached but thrown, so the poll ends with that code: an SSRF refusal (no request at all),
 * and network-level failures (DNS, refused, reset, timeout, TLS). Those are the host failing, or
 * our own network: the poll must count for the breaker and the outage watch like any failed
 * fetch, not hide for 10 min behind a cached "disallow".
 */
const UNCACHED = new Set<FetchCode>(["blocked_ssrf", "dns", "connect", "reset", "timeout", "tls"]);

async function refresh(
  db: Database,
  origin: string,
  robotsUrl: string,
  get: GuardedGet,
  policy: RobotsPolicy,
): Promise<Cached> {
  let entry: Cached;
  try {
    const res = await get(robotsUrl, policy.maxBytes);
    entry = { status: res.status, body: res.status < 300 ? res.body.toString("utf8") : "" };
  } catch (err) {
    if (err instanceof FetchError && UNCACHED.has(err.code)) throw err;
    // An oversized or mangled robots.txt: treated as unreachable (disallow) for the short TTL.
    entry = { status: 0, body: "" };
  }
  const ok = entry.status >= 200 && entry.status < 500 && entry.status !== 429;
  const ttl = ok ? policy.ttlMs : policy.errorTtlMs;
  await db.prisma.$executeRaw`
    INSERT INTO robots_cache (origin, status, body, fetched_at, expires_at)
    VALUES (${origin}, ${entry.status}::int, ${entry.body}, now(),
            now() + ${ttl}::double precision * interval '1 millisecond')
    ON CONFLICT (origin) DO UPDATE SET status = excluded.status, body = excluded.body,
      fetched_at = excluded.fetched_at, expires_at = excluded.expires_at`;
  return entry;
}

/**
 * robots.txt's word on one URL, as a poll outcome: null to go ahead; blocked_robots; or the
 * failure that kept robots.txt from being read (blocked_ssrf, dns, timeout …), which is the
 * poll's outcome too.
 */
export async function robotsRefusal(
  db: Database,
  url: string,
  get: GuardedGet,
  policy: RobotsPolicy = DEFAULT_ROBOTS,
): Promise<{ code: FetchCode; message: string } | null> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return { code: "blocked_ssrf", message: `fetcher: not a valid URL: ${url.slice(0, 200)}` };
  }
  try {
    if (await robotsAllows(db, target, get, policy)) return null;
    return { code: "blocked_robots", message: `fetcher: robots.txt disallows ${url}` };
  } catch (err) {
    if (err instanceof FetchError) return { code: err.code, message: err.message };
    throw err;
  }
}
