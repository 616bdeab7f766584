import { toIsoDate } from "./dates";
import { finishEntry } from "./entry";
import { alternateLink, hrefOf, linkText } from "./links";
import { ITUNES, NS, RSS_PLAIN } from "./namespaces";
import { personName, plainText, titleText } from "./text";
import type { ParsedEntry, ParsedFeed } from "./types";
import { child, childrenNamed, textOf, type XmlElement } from "./xmlTree";

// RSS 0.9x, 2.0 and 1.0 (RDF) share one reader: their item elements have the same names in
// different namespaces (RSS_PLAIN), and RDF keeps items beside the channel instead of inside it.

type Candidates = readonly (readonly [ns: string | readonly string[], local: string])[];

// Where each field may be, in order of preference (the first with content wins).
const TITLE: Candidates = [
  [RSS_PLAIN, "title"],
  [NS.dc, "title"],
];
const PUBLISHED: Candidates = [
  [RSS_PLAIN, "pubDate"],
  [NS.dc, "date"],
  [NS.atom10, "published"],
  [NS.dcterms, "issued"],
  [NS.dcterms, "created"],
];
const UPDATED: Candidates = [
  [NS.atom10, "updated"],
  [NS.dcterms, "modified"],
];
const SUMMARY: Candidates = [
  [RSS_PLAIN, "description"],
  [NS.content, "encoded"],
  [ITUNES, "summary"],
];
const AUTHOR: Candidates = [
  [RSS_PLAIN, "author"],
  [NS.dc, "creator"],
  [NS.dc, "author"],
  [ITUNES, "author"],
];
const ATOM_NAME: Candidates = [[NS.atom10, "name"]];
const CHANNEL_UPDATED: Candidates = [
  [RSS_PLAIN, "lastBuildDate"],
  [RSS_PLAIN, "pubDate"],
  [NS.dc, "date"],
  [NS.atom10, "updated"],
  [NS.dcterms, "modified"],
];
const TTL: Candidates = [[RSS_PLAIN, "ttl"]];
const CATEGORY: Candidates = [
  [RSS_PLAIN, "category"],
  [NS.dc, "subject"],
];

// Podcast tools write iTunes elements in capitals (`itunes:AUTHOR`, `itunes:Summary`) often
// enough to matter; only there is a name compared without case (the length check first keeps
// it off the common path).
const named = (c: XmlElement, ns: string | readonly string[], local: string) =>
  (c.local === local ||
    (ns === ITUNES && c.local.length === local.length && c.local.toLowerCase() === local)) &&
  (typeof ns === "string" ? c.ns === ns : ns.includes(c.ns));

function firstText(el: XmlElement, candidates: Candidates) {
  for (const [ns, local] of candidates) {
    for (const c of el.children) {
      if (typeof c === "string" || !named(c, ns, local)) continue;
      const text = textOf(c).trim();
      if (text) return text;
    }
  }
  return undefined;
}

function firstDate(el: XmlElement, candidates: Candidates) {
  for (const [ns, local] of candidates) {
    for (const c of el.children) {
      if (typeof c === "string" || !named(c, ns, local)) continue;
      const date = toIsoDate(textOf(c));
      if (date) return date;
    }
  }
  return undefined;
}

function plain(raw: string | undefined): string | undefined {
  return raw === undefined ? undefined : plainText(raw) || undefined;
}

/** An RSS `<link href="…"/>` written Atom's way, when it points to the page (no rel, or alternate). */
function pageHref(link: XmlElement): string | undefined {
  if (link.attrs.href === undefined) return undefined;
  return (link.attrs.rel?.trim() || "alternate") === "alternate" ? hrefOf(link) : undefined;
}

/**
 * The page of a channel or item. RSS allows one <link>; of several, the last that points to a
 * page wins, because gofeed, feedparser and miniflux each let a later <link> overwrite an
 * earlier one, so that is the link publishers see in the readers built on them (rss-parser
 * alone keeps the first). Empty links and non-page rels (self, enclosure) overwrite nothing.
 */
function pageLink(el: XmlElement): string | undefined {
  let page: string | undefined;
  let atomLinks = false;
  for (const c of el.children) {
    if (typeof c === "string" || c.local !== "link") continue;
    if (RSS_PLAIN.includes(c.ns)) {
      page = linkText(c) ?? pageHref(c) ?? page;
    } else if (c.ns === NS.atom10) {
      atomLinks = true;
    }
  }
  if (page || !atomLinks) return page;
  return alternateLink(childrenNamed(el, NS.atom10, "link"));
}

function itemLink(item: XmlElement, guid: XmlElement | undefined): string | undefined {
  const link = pageLink(item);
  if (link) return link;
  // RSS 2.0: a guid is a permalink unless isPermaLink="false".
  const guidText = textOf(guid).trim();
  if (guid && guid.attrs.isPermaLink !== "false" && /^https?:\/\//i.test(guidText)) {
    return guidText;
  }
  const about = item.attrs["rdf:about"]?.trim();
  return about && /^https?:\/\//i.test(about) ? about : undefined;
}

function categories(item: XmlElement): string[] {
  const found = new Set<string>();
  for (const [ns, local] of CATEGORY) {
    for (const c of item.children) {
      if (typeof c === "string" || !named(c, ns, local)) continue;
      const text = plainText(textOf(c));
      if (text) found.add(text);
    }
  }
  return [...found];
}

/** One RSS item as an entry; it needs nothing from the channel around it. */
export function readItem(item: XmlElement): ParsedEntry {
  const guidEl = child(item, RSS_PLAIN, "guid");
  const authorEl = child(item, NS.atom10, "author");
  return finishEntry({
    guid: textOf(guidEl).trim() || undefined,
    title: titleText(firstText(item, TITLE) ?? ""),
    link: itemLink(item, guidEl),
    published: firstDate(item, PUBLISHED),
    updated: firstDate(item, UPDATED),
    summary: plain(firstText(item, SUMMARY)),
    author: personName(
      plain(firstText(item, AUTHOR) ?? (authorEl ? firstText(authorEl, ATOM_NAME) : undefined)),
    ),
    categories: categories(item),
  });
}

// An <rss> with no <channel> is still recognisably a feed, just an empty one; gofeed and
// miniflux read it that way too.
const channelOf = (root: XmlElement) => child(root, RSS_PLAIN, "channel") ?? root;

/** The items that are the feed's entries: its (first) channel's, then any beside it (RDF). */
export function isRssEntry(el: XmlElement, parent: XmlElement, root: XmlElement): boolean {
  if (el.local !== "item" || !RSS_PLAIN.includes(el.ns)) return false;
  return parent === root || parent === channelOf(root);
}

export function readRss(
  root: XmlElement,
  entries?: { inChannel: ParsedEntry[]; beside: ParsedEntry[] },
): Omit<ParsedFeed, "format"> {
  const channel = channelOf(root);
  const inChannel = channel !== root ? childrenNamed(channel, RSS_PLAIN, "item").map(readItem) : [];
  const beside = childrenNamed(root, RSS_PLAIN, "item").map(readItem);
  return {
    feed: {
      title: titleText(firstText(channel, TITLE) ?? ""),
      link: pageLink(channel),
      updated: firstDate(channel, CHANNEL_UPDATED),
      ttlMinutes: ttlMinutes(firstText(channel, TTL)),
    },
    entries: entries
      ? [...entries.inChannel, ...inChannel, ...entries.beside, ...beside]
      : [...inChannel, ...beside],
  };
}

/** RSS <ttl>: minutes the channel may be cached; a positive whole number or nothing. */
function ttlMinutes(raw: string | undefined): number | undefined {
  const n = Number(raw?.trim());
  return Number.isInteger(n) && n > 0 ? n : undefined;
}
