import type { Database } from "@/lib/db";
import { attemptGet } from "./attempt";
import type { BrowserAnswer, BrowserRequest } from "./browser";
import { DEFAULT_ROBOTS, robotsRefusal } from "./robots";
import { fetcherDeps, guardedGet } from "./settle";
import type { FetchSourceOptions, FetchTarget } from "./types";

/**
 * Subresources are smaller than pages and a render waits on each: 1 MiB and 10 s, not the
 * page's 10 MiB and 30 s.
 */
const SUBRESOURCE_LIMITS = { maxBytes: 1024 * 1024, totalTimeoutMs: 10_000 };

/** Request headers a page may set that are passed on; the rest are the fetcher's own. */
const PASSED_HEADERS = ["accept", "accept-language", "content-type"];

/**
 * How the browser's requests for one page source go out: each one as the fetcher sends its own
 * (robots.txt of its origin, the per-host rate budget shared with every HTTP fetch of this
 * process, the SSRF check on the address it resolves to and pins, timeouts, a byte cap).
 *
 * A source allowed private addresses is allowed them for its own origin only: the operator vouched
 * for the site's address, not for whatever its scripts name, so a script asking for loopback, the
 * intranet or a metadata address on another origin is refused like any public source's would be.
 */
export function browserAnswers(
  db: Database,
  source: FetchTarget,
  options: FetchSourceOptions = {},
): (request: BrowserRequest) => Promise<BrowserAnswer> {
  const deps = fetcherDeps(options);
  const sourceOrigin = new URL(source.url).origin;
  const robotsPolicy = options.robots === false ? null : { ...DEFAULT_ROBOTS, ...options.robots };
  return async (request) => {
    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      return { refused: "not a valid URL" };
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      return { refused: `${url.protocol} is not fetched` };
    }
    const sameOrigin = url.origin === sourceOrigin;
    const target = { ...source, allowPrivate: sameOrigin && source.allowPrivate };
    const get = guardedGet(
      target,
      {
        ...options,
        allowPrivateHosts: sameOrigin ? options.allowPrivateHosts : [],
        limits: { ...options.limits, ...SUBRESOURCE_LIMITS },
      },
      deps,
    );
    if (robotsPolicy) {
      const refusal = await robotsRefusal(
        db,
        url.href,
        (robotsUrl, maxBytes) => get(robotsUrl, { accept: "text/plain, */*;q=0.5" }, maxBytes),
        robotsPolicy,
      );
      if (refusal) return { refused: `${refusal.code}: ${refusal.message}` };
    }
    const headers: Record<string, string> = {};
    for (const name of PASSED_HEADERS) {
      const value = request.headers[name];
      if (value) headers[name] = value;
    }
    const attempt = await attemptGet(() => get(url.href, headers), deps.now());
    if (attempt.code === "blocked_ssrf") return { refused: `blocked_ssrf: ${attempt.message}` };
    if (!attempt.res) return { failed: `${attempt.code}: ${attempt.message ?? ""}` };
    const responseHeaders: Record<string, string> = {};
    for (const [name, value] of Object.entries(attempt.res.headers)) {
      if (value !== undefined)
        responseHeaders[name] = Array.isArray(value) ? value.join(", ") : value;
    }
    return { status: attempt.res.status, headers: responseHeaders, body: attempt.res.body };
  };
}
