import { atomEntryFields, isAtomEntry, readAtom } from "./atom";
import { isCdfRoot, readCdf } from "./cdf";
import { decodeBody } from "./decode";
import { detach } from "./entry";
import { FeedParseError } from "./errors";
import { readProlog } from "./hostile";
import { isJsonBody, readJsonFeed } from "./jsonFeed";
import { NS } from "./namespaces";
import { isRssEntry, readItem, readRss } from "./rss";
import type { EntryFields, FeedFormat, ParsedEntry, ParsedFeed } from "./types";
import { child, type EntryReader, parseXml, type XmlElement } from "./xmlTree";

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
  if (isCdfRoot(root)) return "cdf";
  const ns = root.ns ? ` in namespace ${root.ns}` : "";
  throw new FeedParseError(
    `not a feed: the root element is <${root.local}>${ns}, not <rss>, <rdf:RDF>, <feed> or a CDF <CHANNEL>`,
  );
}

/**
 * Bytes (or text) to a feed: decode (decode.ts); a JSON body is read as a JSON Feed
 * (jsonFeed.ts); otherwise read the prolog, refusing dangerous entity declarations, and drop it
 * (hostile.ts), parse the XML with limits (xmlTree.ts), reading each entry as RSS or Atom as soon
 * as it closes, then the feed's own fields. Throws FeedParseError for anything that is not a feed.
 */
export function parseFeed(body: Buffer | string, opts: ParseFeedOptions = {}): ParsedFeed {
  const { text } = decodeBody(body, opts.contentType);
  if (!text.trim()) throw new FeedParseError("empty document");
  if (isJsonBody(text, opts.contentType)) {
    const json = readJsonFeed(text, opts.url);
    return { ...json, feed: detachFeed(json.feed) };
  }
  const entries = entryReader();
  const prolog = readProlog(text);
  const root = parseXml(text.slice(prolog.end), opts.url, entries.read, prolog.entities);
  const format = formatOf(root);
  const read =
    format === "atom1" || format === "atom03"
      ? readAtom(root, entries.atom)
      : format === "cdf"
        ? readCdf(root)
        : readRss(root, { inChannel: entries.inChannel, beside: entries.beside });
  return { format, feed: detachFeed(read.feed), entries: read.entries };
}

/** The feed's own fields as copies, like the entries' (entry.ts, detach). */
export function detachFeed(feed: ParsedFeed["feed"]): ParsedFeed["feed"] {
  const out: ParsedFeed["feed"] = { ...feed, title: detach(feed.title) };
  if (feed.link) out.link = detach(feed.link);
  if (feed.id) out.id = detach(feed.id);
  return out;
}

/**
 * Reads entries while the document is parsed, so each entry's elements die young instead of
 * living (and being copied by the collector) until the whole tree is built: 25–33 % of a parse
 * was garbage collection when the tree was read at the end. Which elements are entries is
 * decided by the same rules the readers apply to a whole tree (isRssEntry, isAtomEntry); the
 * feed's format is known from the root, which is open by then.
 */
function entryReader() {
  const atom: EntryFields[] = [];
  const inChannel: ParsedEntry[] = [];
  const beside: ParsedEntry[] = [];
  let kind: "rss" | "atom" | "none" | undefined;
  const read: EntryReader = (el, parent, root) => {
    kind ??= kindOf(root);
    if (kind === "atom" && isAtomEntry(el, parent, root)) {
      atom.push(atomEntryFields(el, root.ns));
      return true;
    }
    if (kind === "rss" && isRssEntry(el, parent, root)) {
      (parent === root ? beside : inChannel).push(readItem(el));
      return true;
    }
    return false;
  };
  return { read, atom, inChannel, beside };
}

function kindOf(root: XmlElement): "rss" | "atom" | "none" {
  try {
    const format = formatOf(root);
    if (format === "cdf") return "none"; // rare and small: read from the whole tree
    return format === "atom1" || format === "atom03" ? "atom" : "rss";
  } catch {
    return "none"; // not a feed: parseFeed says so once the document is read
  }
}
