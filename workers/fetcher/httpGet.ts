import type http from "node:http";
import { FetchError } from "./classify";
import { exchange } from "./exchange";
import { type AddressPolicy, resolveChecked } from "./resolveChecked";

export type { Resolver } from "./resolveChecked";
export { systemResolver } from "./resolveChecked";
export { ROBOTS_AGENT, USER_AGENT } from "./userAgent";

export interface HttpLimits {
  /** DNS plus TCP connect. 5 s: a healthy host answers in well under 1 s even across oceans. */
  connectTimeoutMs: number;
  /** Request sent → status line and headers. 15 s leaves room for a slow feed generator. */
  headersTimeoutMs: number;
  /** The whole exchange, every redirect hop included: what cuts a 1 byte/s drip off. */
  totalTimeoutMs: number;
  /** Decompressed body bytes. 10 MiB: the largest real feeds we know of are 2–3 MiB. */
  maxBytes: number;
  /** 5 hops, as browsers and the OWASP cheat sheet suggest; real feeds need one or two. */
  maxRedirects: number;
}

export const DEFAULT_LIMITS: HttpLimits = {
  connectTimeoutMs: 5_000,
  headersTimeoutMs: 15_000,
  totalTimeoutMs: 30_000,
  maxBytes: 10 * 1024 * 1024,
  maxRedirects: 5,
};

export interface HttpGetOptions extends AddressPolicy {
  /** Extra request headers (If-None-Match, If-Modified-Since, Accept). */
  headers?: Record<string, string>;
  limits?: Partial<HttpLimits>;
  /** Called before each hop is dialled, e.g. to take a token from the host's rate budget. */
  beforeHop?: (url: URL) => Promise<void>;
  /** Extra trusted CA certificates (PEM), for an intranet feed behind a private CA. */
  ca?: string | Buffer;
  /** Called with the checked address each hop is about to dial (logging, tests). */
  onDial?: (url: URL, address: string) => void;
}

export interface HttpResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** Decompressed; empty for anything but 2xx (the body of an error page is not kept). */
  body: Buffer;
  finalUrl: string;
  /** Set when every hop to finalUrl was permanent (301/308): the caller may store finalUrl. */
  permanentRedirect?: string;
  redirects: number;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * One guarded GET: http/https only, redirects followed by hand and every hop re-validated, the
 * address checked and then pinned (the socket dials exactly the address that passed the SSRF
 * check, so a DNS answer that changes between check and connect cannot move it), explicit
 * timeouts that destroy the socket, and a cap on decompressed bytes. No agent, so no keep-alive
 * pool and no proxy: HTTP(S)_PROXY variables are ignored by design (node:http never reads them,
 * and a proxy would dial addresses we did not check).
 */
export async function httpGet(url: string, options: HttpGetOptions): Promise<HttpResponse> {
  const limits = { ...DEFAULT_LIMITS, ...options.limits };
  let deadline = Date.now() + limits.totalTimeoutMs;
  let current = parseTarget(url);
  let permanent = true;
  for (let hop = 0; ; hop++) {
    // Time spent waiting for the host's rate budget is ours, not the server's: the total timeout
    // pauses, or a queue of polls for one busy host would time out before dialling.
    const waitStart = Date.now();
    await options.beforeHop?.(current);
    deadline += Date.now() - waitStart;
    const dnsWait = Math.min(limits.connectTimeoutMs, deadline - Date.now());
    const address = await resolveChecked(current, options, dnsWait);
    options.onDial?.(current, address);
    const res = await exchange(
      current,
      address,
      options.headers ?? {},
      limits,
      deadline,
      options.ca,
    );
    const location = res.headers.location;
    if (REDIRECTS.has(res.status)) {
      if (!location)
        throw new FetchError("redirect", `${current.host}: ${res.status} without Location`);
      if (hop >= limits.maxRedirects) {
        throw new FetchError("redirect", `more than ${limits.maxRedirects} redirects from ${url}`);
      }
      permanent &&= res.status === 301 || res.status === 308;
      current = parseTarget(location, current);
      continue;
    }
    const settled = (res.status >= 200 && res.status < 300) || res.status === 304;
    return {
      ...res,
      finalUrl: current.href,
      redirects: hop,
      permanentRedirect: hop > 0 && permanent && settled ? current.href : undefined,
    };
  }
}

function parseTarget(raw: string, base?: URL): URL {
  let url: URL;
  try {
    // The WHATWG parser canonicalises odd host spellings: 127.1, 0x7f.0.0.1, 2130706433 and
    // 017700000001 all become 127.0.0.1 before any check sees them.
    url = new URL(raw, base);
  } catch (err) {
    throw new FetchError("blocked_ssrf", `not a valid URL: ${raw.slice(0, 200)}`, { cause: err });
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new FetchError("blocked_ssrf", `scheme ${url.protocol} is not http or https`);
  }
  return url;
}
