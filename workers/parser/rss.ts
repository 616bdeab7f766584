import { toIsoDate } from "./dates";
import { finishEntry } from "./entry";
import { alternateLink, linkText } from "./links";
import { ITUNES, NS, RSS_PLAIN } from "./namespaces";
import { personName, plainText } from "./text";
import type { ParsedFeed } from "./types";
import { child, childrenNamed, textOf, type XmlElement } from "./xmlTree";

// RSS 0.9x, 2.0 and 1.0 (RDF) share one reader: their item elements have the same names in
// different namespaces (RSS_PLAIN), and RDF keeps items beside the channel instead of inside it.

function firstText(el: XmlElement, candidates: [ns: string | readonly string[], local: string][]) {
  for (const [ns, local] of candidates) {
    for (const found of childrenNamed(el, ns, local)) {
      const text = textOf(found).trim();
      if (text) return text;
    }
  }
  return undefined;
}

function firstDate(el: XmlElement, candidates: [string | readonly string[], string][]) {
  for (const [ns, local] of candidates) {
    for (const found of childrenNamed(el, ns, local)) {
      const date = toIsoDate(textOf(found));
      if (date) return date;
    }
  }
  return undefined;
}

function plain(raw: string | undefined): string | undefined {
  return raw === undefined ? undefined : plainText(raw) || undefined;
}

function pageLink(el: XmlElement): string | undefined {
  for (const link of childrenNamed(el, RSS_PLAIN, "link")) {
    const url = linkText(link);
    if (url) return url;
  }
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
  const found = [
    ...childrenNamed(item, RSS_PLAIN, "category"),
    ...childrenNamed(item, NS.dc, "subject"),
  ].map((c) => plainText(textOf(c)));
  return [...new Set(found.filter(Boolean))];
}

function readItem(item: XmlElement) {
  const guidEl = child(item, RSS_PLAIN, "guid");
  const authorEl = child(item, NS.atom10, "author");
  return finishEntry({
    guid: textOf(guidEl).trim() || undefined,
    title: plainText(
      firstText(item, [
        [RSS_PLAIN, "title"],
        [NS.dc, "title"],
      ]) ?? "",
    ),
    link: itemLink(item, guidEl),
    published: firstDate(item, [
      [RSS_PLAIN, "pubDate"],
      [NS.dc, "date"],
      [NS.atom10, "published"],
      [NS.dcterms, "issued"],
    ]),
    updated: firstDate(item, [
      [NS.atom10, "updated"],
      [NS.dcterms, "modified"],
    ]),
    summary: plain(
      firstText(item, [
        [RSS_PLAIN, "description"],
        [NS.content, "encoded"],
        [ITUNES, "summary"],
      ]),
    ),
    author: personName(
      plain(
        firstText(item, [
          [RSS_PLAIN, "author"],
          [NS.dc, "creator"],
          [NS.dc, "author"],
          [ITUNES, "author"],
        ]) ?? (authorEl ? firstText(authorEl, [[NS.atom10, "name"]]) : undefined),
      ),
    ),
    categories: categories(item),
  });
}

export function readRss(root: XmlElement): Omit<ParsedFeed, "format"> {
  // An <rss> with no <channel> is still recognisably a feed, just an empty one; gofeed and
  // miniflux read it that way too.
  const channel = child(root, RSS_PLAIN, "channel") ?? root;
  const items = [
    ...(channel !== root ? childrenNamed(channel, RSS_PLAIN, "item") : []),
    ...childrenNamed(root, RSS_PLAIN, "item"),
  ];
  return {
    feed: {
      title: plainText(
        firstText(channel, [
          [RSS_PLAIN, "title"],
          [NS.dc, "title"],
        ]) ?? "",
      ),
      link: pageLink(channel),
      updated: firstDate(channel, [
        [RSS_PLAIN, "lastBuildDate"],
        [RSS_PLAIN, "pubDate"],
        [NS.dc, "date"],
        [NS.atom10, "updated"],
      ]),
      ttlMinutes: ttlMinutes(firstText(channel, [[RSS_PLAIN, "ttl"]])),
    },
    entries: items.map(readItem),
  };
}

/** RSS <ttl>: minutes the channel may be cached; a positive whole number or nothing. */
function ttlMinutes(raw: string | undefined): number | undefined {
  const n = Number(raw?.trim());
  return Number.isInteger(n) && n > 0 ? n : undefined;
}
