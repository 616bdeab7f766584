import { toIsoDate } from "./dates";
import { finishEntry } from "./entry";
import { FeedParseError } from "./errors";
import { personName, plainText, titleText } from "./text";
import type { FeedFormat, ParsedEntry, ParsedFeed } from "./types";
import { resolveUrl } from "./urls";

// JSON Feed 1.0 and 1.1 (jsonfeed.org/version/1.1) read into the same ParsedFeed as RSS and
// Atom: an item's `id` is its guid (identity then falls back through entry.ts as for XML),
// `url` (else `external_url`) its link, made absolute against the feed's home page, its feed_url
// or the fetch URL; `title` is read like an XML title, and the summary is `summary`, else
// `content_html` or `content_text` as plain text, the way Atom's summary falls back to content.
// Authors are 1.1's `authors` or 1.0's `author`, an item without any inheriting the feed's (the
// spec says so, as RFC 4287 does for Atom).

// The XML path allows 256 levels of elements; a JSON Feed needs 4 (feed, items, item, author),
// extensions a few more. V8's JSON.parse does not overflow the stack on deep input, but 2 MB of
// nested brackets took ~400 ms here (Node 20), so nesting is checked by a linear scan first.
const MAX_DEPTH = 256;

/** `https://jsonfeed.org/version/1` or `/1.1`; gofeed's test data writes the bare "1.0" / "1.1". */
const VERSION = /^(?:https?:\/\/jsonfeed\.org\/version\/(1(?:\.1)?)\/?|(1)(?:\.0)?|(1\.1))$/;
const JSON_TYPE = /^\s*application\/(?:feed\+)?json\s*(?:;|$)/i;

type Json = Record<string, unknown>;

/**
 * Whether a decoded body is to be read as JSON: it starts with `{`, or the server says it is
 * JSON and it does not start with `<` (a JSON label on an XML body is a mislabelled XML feed).
 */
export function isJsonBody(text: string, contentType: string | undefined): boolean {
  const first = text.trimStart()[0];
  if (first === "{") return true;
  return first !== "<" && contentType !== undefined && JSON_TYPE.test(contentType);
}

/** Throws FeedParseError when brackets outside strings nest deeper than MAX_DEPTH. */
function checkDepth(text: string): void {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) {
      // a string: skip to its closing quote, escapes included
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === 92) i++;
        else if (d === 34) break;
      }
    } else if (c === 123 || c === 91) {
      if (++depth > MAX_DEPTH) {
        throw new FeedParseError(`JSON nests deeper than ${MAX_DEPTH} levels`);
      }
    } else if (c === 125 || c === 93) {
      depth--;
    }
  }
}

export interface JsonFeedDocument {
  format: Extract<FeedFormat, "json10" | "json11">;
  feed: Json;
  items: unknown[];
}

/** Parses and checks the document: throws FeedParseError unless it is a JSON Feed. */
export function jsonFeedDocument(text: string): JsonFeedDocument {
  checkDepth(text);
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new FeedParseError(`malformed JSON: ${(err as Error).message}`);
  }
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) {
    throw new FeedParseError("not a JSON Feed: the document is not a JSON object");
  }
  const feed = doc as Json;
  const version = typeof feed.version === "string" ? VERSION.exec(feed.version.trim()) : null;
  if (!version) {
    const said = typeof feed.version === "string" ? ` (${feed.version.slice(0, 100)})` : "";
    throw new FeedParseError(
      `not a JSON Feed: no jsonfeed.org version${said}; expected "https://jsonfeed.org/version/1.1"`,
    );
  }
  // `items` is required (an empty feed says `"items": []`)
  if (!Array.isArray(feed.items)) {
    throw new FeedParseError("not a JSON Feed: items is missing or not an array");
  }
  const minor = version[1] ?? version[2] ?? version[3];
  return {
    format: minor === "1.1" ? "json11" : "json10",
    feed,
    items: feed.items,
  };
}

const text = (v: unknown): string | undefined =>
  typeof v === "string" && v.trim() ? v : undefined;

/** Where relative URLs in the feed resolve: its home page, its own URL, then the fetch URL. */
export function jsonFeedBase(
  doc: JsonFeedDocument,
  fetchUrl: string | undefined,
): string | undefined {
  const home = text(doc.feed.home_page_url);
  const self = text(doc.feed.feed_url);
  return (home && resolveUrl(home, fetchUrl)) || (self && resolveUrl(self, fetchUrl)) || fetchUrl;
}

function link(v: unknown, base: string | undefined): string | undefined {
  const raw = text(v)?.trim();
  if (!raw) return undefined;
  return resolveUrl(raw, base) ?? raw;
}

/** Names of 1.1's `authors` or, failing that, 1.0's `author`, joined like Atom's bylines. */
function authorNames(holder: Json): string | undefined {
  const list = Array.isArray(holder.authors) ? holder.authors : [holder.author];
  const names = list
    .map((a) =>
      a && typeof a === "object" ? personName(plainText(text((a as Json).name) ?? "")) : undefined,
    )
    .filter((n): n is string => Boolean(n));
  return [...new Set(names)].join(", ") || undefined;
}

/** The feed's own fields. */
export function jsonFeedFields(
  doc: JsonFeedDocument,
  base: string | undefined,
): ParsedFeed["feed"] {
  const feed: ParsedFeed["feed"] = { title: titleText(text(doc.feed.title) ?? "") };
  const home = link(doc.feed.home_page_url, base);
  if (home) feed.link = home;
  const language = text(doc.feed.language)?.trim();
  if (language) feed.language = language;
  return feed;
}

/** One item as an entry; undefined for an item that is not an object (skipped, not fatal). */
export function jsonFeedEntry(
  item: unknown,
  base: string | undefined,
  feedAuthor: string | undefined,
): ParsedEntry | undefined {
  if (!item || typeof item !== "object" || Array.isArray(item)) return undefined;
  const it = item as Json;
  // 1.0 allowed a number as the id ("coerce it to a string"); 1.1 says string.
  const id = typeof it.id === "number" ? String(it.id) : text(it.id)?.trim();
  const summary =
    plainText(text(it.summary) ?? "") ||
    plainText(text(it.content_html) ?? "") ||
    plainText(text(it.content_text) ?? "");
  const tags = Array.isArray(it.tags) ? it.tags : [];
  return finishEntry({
    guid: id || undefined,
    title: titleText(text(it.title) ?? ""),
    link: link(it.url, base) ?? link(it.external_url, base),
    published: toIsoDate(text(it.date_published)),
    updated: toIsoDate(text(it.date_modified)),
    summary: summary || undefined,
    author: authorNames(it) ?? feedAuthor,
    categories: [
      ...new Set(
        tags.map((t) => (typeof t === "string" ? plainText(t) : "")).filter((t) => t !== ""),
      ),
    ],
  });
}

/** The feed's author, which items without their own inherit. */
export const jsonFeedAuthor = (doc: JsonFeedDocument) => authorNames(doc.feed);

/** A whole JSON Feed document read at once (readFeedInSlices reads its items in turns). */
export function readJsonFeed(text: string, fetchUrl?: string): ParsedFeed {
  const doc = jsonFeedDocument(text);
  const base = jsonFeedBase(doc, fetchUrl);
  const author = jsonFeedAuthor(doc);
  const entries: ParsedEntry[] = [];
  for (const item of doc.items) {
    const entry = jsonFeedEntry(item, base, author);
    if (entry) entries.push(entry);
  }
  return { format: doc.format, feed: jsonFeedFields(doc, base), entries };
}
