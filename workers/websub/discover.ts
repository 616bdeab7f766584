import { decodeBody } from "@/workers/parser/decode";
import { parseXml, type XmlElement } from "@/workers/parser/xmlTree";

/** What a feed advertises for WebSub: its hub and its own canonical address (the topic). */
export interface Advertised {
  hub: string | null;
  /** rel="self": the topic to subscribe to; null when the feed does not say (use its URL). */
  self: string | null;
}

/**
 * WebSub §4 discovery: HTTP `Link` headers first, then the document's own links (`<atom:link
 * rel="hub">` / `rel="self"` at the feed or channel level, or a JSON Feed's `hubs` and
 * `feed_url`). Relative addresses are resolved against the feed's URL. Only http(s) hubs count:
 * the hub is dialled through the same SSRF checks as any fetch, but a `javascript:` or `file:`
 * value is not worth a request.
 */
export function discoverHub(
  feedUrl: string,
  linkHeader: string | string[] | undefined,
  body: Buffer | null,
  contentType?: string,
): Advertised {
  const fromHeaders = linksFromHeader(linkHeader, feedUrl);
  const fromBody =
    fromHeaders.hub && fromHeaders.self
      ? { hub: null, self: null }
      : linksFromBody(body, feedUrl, contentType);
  return {
    hub: fromHeaders.hub ?? fromBody.hub,
    self: fromHeaders.self ?? fromBody.self,
  };
}

/** `<https://hub.example/>; rel="hub", <https://feed.example/rss>; rel="self"` (RFC 8288). */
export function linksFromHeader(header: string | string[] | undefined, base: string): Advertised {
  const found: Advertised = { hub: null, self: null };
  const values = Array.isArray(header) ? header : header ? [header] : [];
  for (const value of values) {
    for (const m of value.matchAll(/<([^>]*)>((?:\s*;\s*[^;,]+)*)/g)) {
      const rel = /;\s*rel\s*=\s*(?:"([^"]*)"|([^;,\s]+))/i.exec(m[2] ?? "");
      const rels = (rel?.[1] ?? rel?.[2] ?? "").toLowerCase().split(/\s+/);
      const href = absolute(m[1] ?? "", base);
      if (!href) continue;
      if (rels.includes("hub")) found.hub ??= href;
      if (rels.includes("self")) found.self ??= href;
    }
  }
  return found;
}

function linksFromBody(body: Buffer | null, base: string, contentType?: string): Advertised {
  const found: Advertised = { hub: null, self: null };
  if (!body || body.length === 0) return found;
  let text: string;
  try {
    text = decodeBody(body, contentType).text;
  } catch {
    return found;
  }
  if (text.trimStart().startsWith("{")) return linksFromJsonFeed(text, base);
  let root: XmlElement;
  try {
    // Entries are dropped as they close: only the feed-level links are wanted.
    root = parseXml(text, base, (el) => el.local === "item" || el.local === "entry");
  } catch {
    return found; // not XML we can read: the poll reports that; discovery just finds nothing
  }
  const levels = [root, ...root.children.filter(isElement).filter((e) => e.local === "channel")];
  for (const level of levels) {
    for (const el of level.children.filter(isElement)) {
      if (el.local !== "link" || !el.attrs.href || !el.attrs.rel) continue;
      const rels = el.attrs.rel.toLowerCase().split(/\s+/);
      const href = absolute(el.attrs.href, el.base ?? base);
      if (!href) continue;
      if (rels.includes("hub")) found.hub ??= href;
      if (rels.includes("self")) found.self ??= href;
    }
  }
  return found;
}

function linksFromJsonFeed(text: string, base: string): Advertised {
  try {
    const feed = JSON.parse(text) as { hubs?: unknown; feed_url?: unknown };
    const hubs = Array.isArray(feed.hubs) ? feed.hubs : [];
    const hub = hubs
      .map((h) => (h && typeof h === "object" ? (h as { url?: unknown }).url : null))
      .find((u): u is string => typeof u === "string");
    return {
      hub: hub ? absolute(hub, base) : null,
      self: typeof feed.feed_url === "string" ? absolute(feed.feed_url, base) : null,
    };
  } catch {
    return { hub: null, self: null };
  }
}

function absolute(href: string, base: string): string | null {
  try {
    const u = new URL(href.trim(), base);
    return u.protocol === "http:" || u.protocol === "https:" ? u.href : null;
  } catch {
    return null;
  }
}

function isElement(node: unknown): node is XmlElement {
  return typeof node === "object" && node !== null && "local" in node;
}
