import ipaddr from "ipaddr.js";
import { config } from "../config";
import { peerAddress } from "./peer";

function parseAddress(address: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  try {
    return ipaddr.process(address.trim().replace(/^\[|\]$/g, ""));
  } catch {
    return null;
  }
}

/** Whether an address is one of the trusted proxies (addresses or CIDRs). */
export function isTrustedProxy(address: string, trusted: readonly string[]): boolean {
  const parsed = parseAddress(address);
  if (!parsed) return false;
  return trusted.some((entry) => {
    try {
      if (!entry.includes("/")) return parseAddress(entry)?.toString() === parsed.toString();
      const [range, bits] = ipaddr.parseCIDR(entry);
      const candidate =
        parsed.kind() === range.kind()
          ? parsed
          : parsed.kind() === "ipv4"
            ? (parsed as ipaddr.IPv4).toIPv4MappedAddress()
            : null;
      return candidate ? candidate.match(range, bits) : false;
    } catch {
      return false;
    }
  });
}

function forwardedHops(request: Request): string[] {
  return (request.headers.get("x-forwarded-for") ?? "")
    .split(",")
    .map((h) => h.trim())
    .filter(Boolean);
}

/**
 * Who is asking (docs/decisions/013). The socket's peer address (stamped on the request by
 * lib/auth/peer.ts, since route handlers never see the socket) unless that peer is one of the
 * trusted proxies (WIREWATCH_TRUSTED_PROXIES, none by default): then X-Forwarded-For is read
 * from the right, skipping trusted proxies, and the first address that is not one is the
 * client. Everything left of it was written by the client and is never believed. A request with
 * no stamp (it reached the server before the stamp was installed, or a test built it) falls back
 * to the last X-Forwarded-For hop.
 */
export function clientAddress(
  request: Request,
  trusted: readonly string[] = config().WIREWATCH_TRUSTED_PROXIES,
): string {
  const peer = peerAddress(request);
  const hops = forwardedHops(request);
  if (peer === null) return hops.at(-1) ?? "unknown";
  let client = peer;
  while (isTrustedProxy(client, trusted)) {
    const next = hops.pop();
    if (next === undefined) break;
    client = next;
  }
  return parseAddress(client)?.toString() ?? client;
}

function isLoopbackAddress(address: string): boolean {
  return parseAddress(address)?.range() === "loopback";
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
 * site cannot reach us through DNS rebinding: its Host would be its own name), the client
 * (clientAddress) is a loopback address, and so is every X-Forwarded-For hop there is (a proxy
 * on this machine forwarding someone else's request says who in that header). Without a peer
 * stamp both headers are the client's to write, so a non-browser client that can reach the
 * port could claim to be local: the loopback-only mode is for a machine whose port is not
 * reachable by others (docs/decisions/009).
 */
export function isLoopbackRequest(request: Request): boolean {
  if (!isLoopbackHost(request.headers.get("host") ?? new URL(request.url).host)) return false;
  const peer = peerAddress(request);
  if (peer !== null && !isLoopbackAddress(peer)) return false;
  return forwardedHops(request).every(isLoopbackAddress);
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
