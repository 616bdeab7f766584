import type { SimStory } from "../newsroom";
import type { FeedFormat, Outlet } from "../outlets";
import { esc, iso, rfc822 } from "./xml";

export interface FeedContext {
  outlet: Outlet;
  selfUrl: string;
  homeUrl: string;
  items: SimStory[];
  /** Last change of the feed's content, so the body (and its ETag) only changes with it. */
  updated: number;
}

export const FEED_CONTENT_TYPE: Record<FeedFormat, string> = {
  rss2: "application/rss+xml; charset=utf-8",
  rdf: "application/rdf+xml; charset=utf-8",
  atom: "application/atom+xml; charset=utf-8",
};

// Instruments and the breaking flag have no element of their own in these formats; they ride on
// categories with a domain/scheme, which is how real wires carry tickers in RSS.
const INSTRUMENT_SCHEME = "urn:wirewatch:instrument";
const FLAG_SCHEME = "urn:wirewatch:flag";

const HEADER = '<?xml version="1.0" encoding="UTF-8"?>\n';

/**
 * The guid and link a feed of this format serves for a story, which is what the collector keys
 * the item by: RSS 2.0 adds its tracking parameter to the link (unless the link has one
 * already: an aggregator's listing), RSS 1.0 has no guid element wirewatch reads.
 */
export function servedIdentity(
  format: FeedFormat,
  s: SimStory,
): { guid: string | null; link: string } {
  if (format === "rdf") return { guid: null, link: s.link };
  if (format === "atom") return { guid: s.guid, link: s.link };
  const u = new URL(s.link);
  if (!u.searchParams.has("utm_source")) u.searchParams.set("utm_source", "rss");
  return { guid: s.guid, link: u.toString() };
}

export function renderFeed(format: FeedFormat, ctx: FeedContext): string {
  if (format === "rdf") return rdf(ctx);
  if (format === "atom") return atom(ctx);
  return rss2(ctx);
}

function language(outlet: Outlet): string {
  return outlet.languages.length === 1 ? (outlet.languages[0] as string) : "en";
}

function rss2({ outlet, selfUrl, homeUrl, items, updated }: FeedContext): string {
  const entries = items.map((s) => {
    const cats = [
      `<category>${esc(s.category)}</category>`,
      ...s.instruments.map((i) => `<category domain="${INSTRUMENT_SCHEME}">${esc(i)}</category>`),
      ...(s.breaking ? [`<category domain="${FLAG_SCHEME}">breaking</category>`] : []),
    ];
    // Feed links carry a tracking parameter, as many publishers' do; canonicalisation drops it.
    return `<item>
<title>${esc(s.title)}</title>
<link>${esc(servedIdentity("rss2", s).link)}</link>
<guid isPermaLink="${s.guid === s.link}">${esc(s.guid)}</guid>
<description>${esc(s.summary)}</description>
${cats.join("\n")}
<pubDate>${rfc822(s.publishedAt)}</pubDate>
</item>`;
  });
  return `${HEADER}<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom">
<channel>
<title>${esc(outlet.name)}</title>
<link>${esc(homeUrl)}</link>
<description>${esc(`Latest from ${outlet.name}`)}</description>
<language>${language(outlet)}</language>
<lastBuildDate>${rfc822(updated)}</lastBuildDate>
<atom:link href="${esc(selfUrl)}" rel="self" type="application/rss+xml"/>
${entries.join("\n")}
</channel>
</rss>
`;
}

function rdf({ outlet, selfUrl, homeUrl, items, updated }: FeedContext): string {
  const seq = items.map((s) => `<rdf:li rdf:resource="${esc(s.link)}"/>`);
  const entries = items.map(
    (s) => `<item rdf:about="${esc(s.link)}">
<title>${esc(s.title)}</title>
<link>${esc(s.link)}</link>
<description>${esc(s.summary)}</description>
<dc:identifier>${esc(s.guid)}</dc:identifier>
<dc:subject>${esc(s.category)}</dc:subject>
<dc:language>${s.language}</dc:language>
<dc:date>${iso(s.publishedAt)}</dc:date>
</item>`,
  );
  return `${HEADER}<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/">
<channel rdf:about="${esc(selfUrl)}">
<title>${esc(outlet.name)}</title>
<link>${esc(homeUrl)}</link>
<description>${esc(`Latest from ${outlet.name}`)}</description>
<dc:language>${language(outlet)}</dc:language>
<dc:date>${iso(updated)}</dc:date>
<items><rdf:Seq>${seq.join("")}</rdf:Seq></items>
</channel>
${entries.join("\n")}
</rdf:RDF>
`;
}

function atom({ outlet, selfUrl, homeUrl, items, updated }: FeedContext): string {
  const entries = items.map((s) => {
    const cats = [
      `<category term="${esc(s.category)}"/>`,
      ...s.instruments.map((i) => `<category scheme="${INSTRUMENT_SCHEME}" term="${esc(i)}"/>`),
      ...(s.breaking ? [`<category scheme="${FLAG_SCHEME}" term="breaking"/>`] : []),
    ];
    return `<entry xml:lang="${s.language}">
<id>${esc(s.guid)}</id>
<title>${esc(s.title)}</title>
<link rel="alternate" href="${esc(s.link)}"/>
<published>${iso(s.publishedAt)}</published>
<updated>${iso(s.updatedAt)}</updated>
<summary>${esc(s.summary)}</summary>
${cats.join("\n")}
</entry>`;
  });
  return `${HEADER}<feed xmlns="http://www.w3.org/2005/Atom" xml:lang="${language(outlet)}">
<id>${esc(selfUrl)}</id>
<title>${esc(outlet.name)}</title>
<updated>${iso(updated)}</updated>
<link rel="self" href="${esc(selfUrl)}"/>
<link rel="alternate" href="${esc(homeUrl)}"/>
<author><name>${esc(outlet.name)}</name></author>
${entries.join("\n")}
</feed>
`;
}

/** A body that breaks mid-item with a bare ampersand: what a crashed CMS template serves. */
export function malform(xml: string): string {
  return `${xml.slice(0, Math.floor(xml.length * 0.6))}<title>Markets & more</ti`;
}
