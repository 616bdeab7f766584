import { isIP } from "node:net";
import ipaddr from "ipaddr.js";

/**
 * The SSRF guard (OWASP SSRF prevention cheat sheet): may this address be dialled for a source
 * that is not explicitly allowed private? An allow-list: only global unicast passes. IPv6 forms
 * that embed an IPv4 address (mapped ::ffff:0:0/96, compatible ::/96, SIIT ::ffff:0:0:0/96,
 * NAT64 64:ff9b::/96 and 64:ff9b:1::/48, 6to4 2002::/16) are judged by the IPv4 address inside,
 * so [::ffff:7f00:1] is loopback. Teredo (2001::/32) hides its client address behind an XOR, so
 * it is refused outright.
 */
export function blockedAddressReason(address: string): string | null {
  if (!ipaddr.isValid(address)) return `"${address}" is not an IP address`;
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === "ipv4") {
    const range = (parsed as ipaddr.IPv4).range();
    return range === "unicast" ? null : `${address} is ${range}`;
  }
  const v6 = parsed as ipaddr.IPv6;
  const embedded = embeddedIPv4(v6);
  if (embedded) {
    const inner = blockedAddressReason(embedded.toString());
    return inner ? `${address} embeds ${inner}` : null;
  }
  const range = v6.range();
  return range === "unicast" ? null : `${address} is ${range}`;
}

function embeddedIPv4(v6: ipaddr.IPv6): ipaddr.IPv4 | null {
  const range = v6.range();
  const p = v6.parts;
  const last32 = () =>
    new ipaddr.IPv4([(p[6] ?? 0) >> 8, (p[6] ?? 0) & 0xff, (p[7] ?? 0) >> 8, (p[7] ?? 0) & 0xff]);
  if (range === "ipv4Mapped" || range === "rfc6145" || range === "rfc6052") return last32();
  if (range === "6to4") {
    return new ipaddr.IPv4([
      (p[1] ?? 0) >> 8,
      (p[1] ?? 0) & 0xff,
      (p[2] ?? 0) >> 8,
      (p[2] ?? 0) & 0xff,
    ]);
  }
  // ::/96, "IPv4-compatible" (deprecated), except :: and ::1, which range() names itself.
  if (range === "unicast" && p.slice(0, 6).every((x) => x === 0)) return last32();
  return null;
}

/**
 * Host names that reach cloud metadata services or this machine whatever DNS says. Names are
 * lower-cased and stripped of a trailing dot by the URL parser before they get here.
 */
const BLOCKED_NAMES = new Set([
  "localhost",
  "metadata",
  "metadata.google.internal",
  "metadata.goog",
  "metadata.azure.internal",
  "instance-data",
  "instance-data.ec2.internal",
  "kubernetes.default.svc",
]);
const BLOCKED_SUFFIXES = [".localhost", ".internal", ".local"];

export function blockedHostnameReason(hostname: string): string | null {
  const name = hostname.toLowerCase().replace(/\.$/, "");
  if (BLOCKED_NAMES.has(name) || BLOCKED_SUFFIXES.some((s) => name.endsWith(s))) {
    return `host name ${name} is internal`;
  }
  return null;
}

/** The URL's host as an IP literal ("[::1]" → "::1"), or null when it is a name. */
export function ipLiteral(url: URL): string | null {
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  return isIP(host) ? host : null;
}
