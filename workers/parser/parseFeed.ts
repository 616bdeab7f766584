import { readAtom } from "./atom";
import { decodeBody } from "./decode";
import { FeedParseError } from "./errors";
import { stripSafeProlog } from "./hostile";
import { NS } from "./namespaces";
import { readRss } from "./rss";
import type { FeedFormat, ParsedFeed } from "./types";
import { child, parseXml, type XmlElement } from "./xmlTree";

export { FeedParseError } from "./errors";
export type { FeedFormat, ParsedEntry, ParsedFeed } from "./types";

export interface ParseFeedOptions {
  /** The URL the feed was fetched from: the base for relative links. */
  url?: string;
  /** The HTTP Content-Type, whose charset outranks the XML declaration (see decode.ts). */
  contentType?: string;
}

/** Which feed format a root element is; throws FeedParseError when it is none. */
export function formatOf(root: XmlElement): FeedFormat {
  if (root.local === "rss" && (root.ns === "" || !root.ns.includes("w3.org"))) {
    return /^0\.9/.test(root.attrs.version?.trim() ?? "") ? "rss09x" : "rss2";
  }
  if (root.local === "RDF" && root.ns === NS.rdf) {
    return child(root, NS.rss090, "channel") ? "rss09x" : "rss1";
  }
  if (root.local === "feed") {
    if (root.ns === NS.atom03 || (root.ns === "" && root.attrs.version === "0.3")) return "atom03";
    if (root.ns === NS.atom10 || root.ns === "") return "atom1";
  }
  const ns = root.ns ? ` in namespace ${root.ns}` : "";
  throw new FeedParseError(
    `not a feed: the root element is <${root.local}>${ns}, not <rss>, <rdf:RDF> or <feed>`,
  );
}

/**
 * Bytes (or text) to a feed: decode (decode.ts), refuse entity declarations and drop the prolog (hostile.ts), parse
 * the XML with limits (xmlTree.ts), then read it as RSS or Atom. Throws FeedParseError for
 * anything that is not a feed.
 */
export function parseFeed(body: Buffer | string, opts: ParseFeedOptions = {}): ParsedFeed {
  const { text } = decodeBody(body, opts.contentType);
  if (!text.trim()) throw new FeedParseError("empty document");
  const root = parseXml(stripSafeProlog(text), opts.url);
  const format = formatOf(root);
  const read = format === "atom1" || format === "atom03" ? readAtom(root) : readRss(root);
  return { format, ...read };
}
