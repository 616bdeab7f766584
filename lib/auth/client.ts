import ipaddr from "ipaddr.js";

/**
 * Who is asking, as far as a Next.js route handler can tell. Route handlers do not see the socket:
 * `next start` puts its peer address in `x-forwarded-for` only when the request did not carry
 * one, so a client can write this header itself. Good enough to key a rate limit; for the
 * loopback-only mode it is one of several checks (see isLoopbackRequest), never the only one.
 */
export function clientAddress(request: Request): string {
  const forwarded = request.headers.get("x-forwarded-for");
  const hops = forwarded
    ?.split(",")
    .map((h) => h.trim())
    .filter(Boolean);
  // The last hop is the one the nearest proxy (or Next itself) wrote.
  return hops?.at(-1) ?? "unknown";
}

function isLoopbackAddress(address: string): boolean {
  try {
    const parsed = ipaddr.process(address.replace(/^\[|\]$/g, ""));
    return parsed.range() === "loopback";
  } catch {
    return false;
  }
}

/** The host name of a Host header value ("localhost:3000", "[::1]:3000"), lower-cased. */
function hostName(host: string): string {
  const trimmed = host.trim().toLowerCase();
  if (trimmed.startsWith("[")) return trimmed.slice(1, trimmed.indexOf("]"));
  return trimmed.replace(/:\d+$/, "");
}

function isLoopbackHost(host: string | null): boolean {
  if (!host) return false;
  const name = hostName(host);
  return name === "localhost" || name.endsWith(".localhost") || isLoopbackAddress(name);
}

/**
 * A request from this machine: the Host it was sent to is a loopback name (so a page on another
 * site cannot reach us through DNS rebinding: its Host would be its own name) and every
 * `x-forwarded-for` hop, when there is one, is a loopback address. Both headers are the client's
 * to write, so a non-browser client that can reach the port could claim to be local: the
 * loopback-only mode is for a machine whose port is not reachable by others (docs/decisions/009).
 */
export function isLoopbackRequest(request: Request): boolean {
  if (!isLoopbackHost(request.headers.get("host") ?? new URL(request.url).host)) return false;
  const forwarded = request.headers.get("x-forwarded-for");
  if (!forwarded) return true;
  return forwarded
    .split(",")
    .map((h) => h.trim())
    .every((h) => h !== "" && isLoopbackAddress(h));
}

/** Served over https, directly or behind a proxy that says so. */
export function isHttps(request: Request): boolean {
  const proto = request.headers.get("x-forwarded-proto")?.split(",")[0]?.trim();
  return proto ? proto === "https" : new URL(request.url).protocol === "https:";
}

/**
 * Same-origin check for mutations: `Sec-Fetch-Site: same-origin`, or an `Origin` whose host is
 * the host the request was sent to (Host, the proxy's X-Forwarded-Host, or the URL Next built).
 * A browser's `Sec-Fetch-Site` decides when present (a page cannot set it). The scheme is not compared: behind
 * a TLS-terminating proxy Next sees http while the browser says https.
 */
export function isSameOrigin(request: Request): boolean {
  const site = request.headers.get("sec-fetch-site");
  if (site) return site === "same-origin"; // set by the browser; a page cannot forge it
  const origin = request.headers.get("origin");
  if (!origin || origin === "null") return false;
  let originHost: string;
  try {
    originHost = new URL(origin).host.toLowerCase();
  } catch {
    return false;
  }
  const candidates = [
    request.headers.get("host"),
    request.headers.get("x-forwarded-host")?.split(",")[0],
    new URL(request.url).host,
  ];
  return candidates.some((c) => c && c.trim().toLowerCase() === originHost);
}
