import { readAtom } from "./atom";
import { readCdf } from "./cdf";
import { decodeBody } from "./decode";
import { FeedParseError } from "./errors";
import { readProlog } from "./hostile";
import {
  isJsonBody,
  jsonFeedAuthor,
  jsonFeedBase,
  jsonFeedDocument,
  jsonFeedEntry,
  jsonFeedFields,
} from "./jsonFeed";
import { detachFeed, formatOf, parseFeed } from "./parseFeed";
import { readRss } from "./rss";
import type { ParsedEntry, ParsedFeed } from "./types";
import { parseXml, type XmlElement } from "./xmlTree";

/**
 * Reads a feed document without holding the event loop: a 4.7 MB, 50,000-entry feed took
 * 9–12 s of one synchronous parse (measured ~0.34 ms per KB here), during which no request,
 * timer or other source's fetch could run. So a big document is cut into slices at entry
 * boundaries by a linear scan, each slice is parsed on its own, and the loop gets a turn
 * between slices:
 *
 *   1. scan the text once, tracking elements (comments, CDATA and quoted attributes skipped),
 *      and note where each entry (<item> or <entry>, a child of the root or of <channel>) starts
 *      and ends; a closing tag that does not match is "not well-formed XML";
 *   2. parse the document without its entries (the skeleton: the feed's own fields);
 *   3. parse the entries in slices of at most SLICE_ENTRIES entries or SLICE_CHARS characters,
 *      each wrapped in the start tags of its ancestors (so namespaces and xml:base are in scope
 *      exactly as in the whole document), and read them with the skeleton around them.
 *
 * At most `maxEntries` entries are read (FEED_MAX_ENTRIES); the rest are counted, not parsed,
 * and the caller records how many were left out. Documents under SLICE_ABOVE_CHARS are read in
 * one go by parseFeed (under ~45 ms), with the same cap.
 */
export interface SlicedRead extends ParsedFeed {
  /** Entries in the document, read or not. */
  entriesInDocument: number;
  /** Entries past maxEntries, counted but not read. */
  entriesLeftOut: number;
}

export interface ReadFeedOptions {
  url?: string;
  contentType?: string;
  maxEntries: number;
}

export const SLICE_ABOVE_CHARS = 128 * 1024;
// ~32 KB parses and reads in ~10 ms here, well under the 50 ms a turn may take, and the
// per-slice overhead (a wrapper, a shallow copy of the skeleton) stays small.
const SLICE_CHARS = 32 * 1024;
const SLICE_ENTRIES = 100;
// The scan checks the clock every this many tags and yields after YIELD_AFTER_MS.
const TAGS_PER_CHECK = 2_000;
const YIELD_AFTER_MS = 20;

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

export async function readFeedInSlices(
  body: Buffer | string,
  opts: ReadFeedOptions,
): Promise<SlicedRead> {
  const max = Math.max(0, opts.maxEntries);
  const { text: decoded } = decodeBody(body, opts.contentType);
  if (isJsonBody(decoded, opts.contentType)) return readJsonFeedInTurns(decoded, opts, max);
  if (decoded.length < SLICE_ABOVE_CHARS) {
    const whole = parseFeed(decoded, opts);
    return {
      ...whole,
      entries: whole.entries.slice(0, max),
      entriesInDocument: whole.entries.length,
      entriesLeftOut: Math.max(0, whole.entries.length - max),
    };
  }
  const prolog = readProlog(decoded);
  const text = decoded.slice(prolog.end);
  await turn();
  const scan = await scanEntries(text);
  const skeleton = parseXml(cutOut(text, scan.entries), opts.url, undefined, prolog.entities);
  const format = formatOf(skeleton);
  if (format === "cdf") {
    // CDF's <ITEM>s are not cut out by the scan, so the skeleton is the whole document
    const cdf = readCdf(skeleton);
    return {
      format,
      feed: detachFeed(cdf.feed),
      entries: cdf.entries.slice(0, max),
      entriesInDocument: cdf.entries.length,
      entriesLeftOut: Math.max(0, cdf.entries.length - max),
    };
  }
  const read = format === "atom1" || format === "atom03" ? readAtom : readRss;
  const feed = detachFeed(read(skeleton).feed);

  const wanted = scan.entries.slice(0, max);
  const entries: ParsedEntry[] = [];
  for (let i = 0; i < wanted.length; ) {
    const first = wanted[i] as EntrySpan;
    let j = i + 1;
    while (
      j < wanted.length &&
      j - i < SLICE_ENTRIES &&
      (wanted[j] as EntrySpan).parent === first.parent &&
      (wanted[j] as EntrySpan).end - first.start <= SLICE_CHARS
    ) {
      j++;
    }
    const last = wanted[j - 1] as EntrySpan;
    const ancestors = first.parent === null ? [scan.root] : [scan.root, first.parent];
    const wrapped =
      ancestors.map((a) => a.open).join("") +
      text.slice(first.start, last.end) +
      ancestors
        .map((a) => `</${a.name}>`)
        .reverse()
        .join("");
    const slice = parseXml(wrapped, opts.url, undefined, prolog.entities);
    const holder = first.parent === null ? slice : firstElement(slice);
    const found = (holder?.children ?? []).filter(
      (c): c is XmlElement => typeof c !== "string" && ENTRY_NAMES.has(c.local),
    );
    entries.push(...read(withEntries(skeleton, first.parent?.name ?? null, found)).entries);
    i = j;
    await turn();
  }
  return {
    format,
    feed,
    entries,
    entriesInDocument: scan.entries.length,
    entriesLeftOut: Math.max(0, scan.entries.length - max),
  };
}

/**
 * A JSON Feed: JSON.parse has no slices to offer (a 6.8 MB, 20,000-item one: ~15 ms, and ~13 ms
 * for the depth scan before it, measured here), but its items are read SLICE_ENTRIES at a time
 * with a turn between, as the XML entries are.
 */
async function readJsonFeedInTurns(
  text: string,
  opts: ReadFeedOptions,
  max: number,
): Promise<SlicedRead> {
  const doc = jsonFeedDocument(text);
  const base = jsonFeedBase(doc, opts.url);
  const author = jsonFeedAuthor(doc);
  const objects = doc.items.filter(
    (item) => item && typeof item === "object" && !Array.isArray(item),
  );
  const entries: ParsedEntry[] = [];
  for (let i = 0; i < Math.min(max, objects.length); i++) {
    const entry = jsonFeedEntry(objects[i], base, author);
    if (entry) entries.push(entry);
    if ((i + 1) % SLICE_ENTRIES === 0) await turn();
  }
  return {
    format: doc.format,
    feed: detachFeed(jsonFeedFields(doc, base)),
    entries,
    entriesInDocument: objects.length,
    entriesLeftOut: Math.max(0, objects.length - max),
  };
}

const ENTRY_NAMES = new Set(["item", "entry"]);

interface OpenTag {
  name: string;
  /** The start tag as written, attributes included. */
  open: string;
}

interface EntrySpan {
  start: number;
  end: number;
  /** The <channel> (or other container under the root) it sits in; null for the root itself. */
  parent: OpenTag | null;
}

const localOf = (name: string) => name.slice(name.indexOf(":") + 1);

/** Step 1: one pass over the text, yielding now and then. */
async function scanEntries(text: string): Promise<{ root: OpenTag; entries: EntrySpan[] }> {
  const stack: (OpenTag & { start: number })[] = [];
  const entries: EntrySpan[] = [];
  let root: OpenTag | null = null;
  let closed = false;
  let tags = 0;
  let since = performance.now();
  let i = text.indexOf("<");
  while (i !== -1 && i < text.length && !closed) {
    if (++tags % TAGS_PER_CHECK === 0 && performance.now() - since > YIELD_AFTER_MS) {
      await turn();
      since = performance.now();
    }
    let end: number;
    if (text.startsWith("<!--", i)) {
      end = closeOf(text, "-->", i + 4);
    } else if (text.startsWith("<![CDATA[", i)) {
      end = closeOf(text, "]]>", i + 9);
    } else if (text.startsWith("<?", i)) {
      end = closeOf(text, "?>", i + 2);
    } else if (text.startsWith("<!", i)) {
      // the same refusal as xmlTree.ts: XML forbids a DOCTYPE here
      throw new FeedParseError("a DOCTYPE appears after the root element started; XML forbids it");
    } else if (text.startsWith("</", i)) {
      end = closeOf(text, ">", i + 2);
      const name = text.slice(i + 2, end - 1).trim();
      const open = stack.pop();
      if (!open || open.name !== name) {
        throw new FeedParseError(
          `not well-formed XML: </${name.slice(0, 100)}> closes ${open ? `<${open.name}>` : "nothing"}`,
        );
      }
      if (stack.length === 0) closed = true;
      else noteEntry(stack, open, end, entries);
    } else {
      end = tagEnd(text, i + 1);
      const raw = text.slice(i, end);
      const name = /^<([^\s/>]+)/.exec(raw)?.[1] ?? "";
      if (!name) throw new FeedParseError(`not well-formed XML: a "<" at ${i} starts no tag`);
      const tag = { name, open: raw, start: i };
      if (raw.endsWith("/>")) {
        if (stack.length === 0) closed = true;
        else noteEntry(stack, tag, end, entries);
      } else {
        if (stack.length === 0) root = tag;
        stack.push(tag);
      }
    }
    i = text.indexOf("<", end);
  }
  if (!root) throw new FeedParseError("not XML: no root element");
  if (!closed) throw new FeedParseError(`the document ends before </${root.name}> (truncated?)`);
  return { root, entries };
}

/** Records `el` (just closed, spanning from its start tag to `end`) when it is an entry. */
function noteEntry(
  stack: (OpenTag & { start: number })[],
  el: OpenTag & { start: number },
  end: number,
  entries: EntrySpan[],
) {
  if (!ENTRY_NAMES.has(localOf(el.name))) return;
  if (stack.length === 1) entries.push({ start: el.start, end, parent: null });
  else if (stack.length === 2 && localOf((stack[1] as OpenTag).name) === "channel") {
    entries.push({ start: el.start, end, parent: stack[1] as OpenTag });
  }
}

function closeOf(text: string, close: string, from: number): number {
  const at = text.indexOf(close, from);
  if (at === -1) throw new FeedParseError("the document ends inside a comment, CDATA or tag");
  return at + close.length;
}

/** Index just past the ">" of a start tag, quoted attribute values skipped. */
function tagEnd(text: string, from: number): number {
  let quote = "";
  for (let i = from; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === quote) quote = "";
    } else if (c === '"' || c === "'") {
      quote = c;
    } else if (c === ">") {
      return i + 1;
    }
  }
  throw new FeedParseError("the document ends inside a tag");
}

/** Step 2: the document with its entries cut out. */
function cutOut(text: string, spans: EntrySpan[]): string {
  const parts: string[] = [];
  let at = 0;
  for (const s of spans) {
    parts.push(text.slice(at, s.start));
    at = s.end;
  }
  parts.push(text.slice(at));
  return parts.join("");
}

function firstElement(el: XmlElement): XmlElement | undefined {
  return el.children.find((c): c is XmlElement => typeof c !== "string");
}

/** The skeleton with `found` as the entries of the root (parent null) or of its container. */
function withEntries(skeleton: XmlElement, parent: string | null, found: XmlElement[]): XmlElement {
  if (parent === null) return { ...skeleton, children: [...skeleton.children, ...found] };
  const local = localOf(parent);
  let placed = false;
  const children = skeleton.children.map((c) => {
    if (placed || typeof c === "string" || c.local !== local) return c;
    placed = true;
    return { ...c, children: [...c.children, ...found] };
  });
  return { ...skeleton, children };
}
