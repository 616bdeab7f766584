import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { FeedParseError, type ParsedEntry, type ParsedFeed, parseFeed } from "./parseFeed";
import { corpusDir, Ledger, readJson, sameInstant, sameUrl, walk } from "./testing/corpora";
import { plainText, titleText } from "./text";

// gofeed's expected JSON, mapped explicitly. Their titles keep markup as the document had it;
// ours are plain text, so theirs pass through the same title rule (text.ts, titleText) first.
//   parser/rss:   title, link, items.length, items[].title, .link, .guid.value → entry.guid,
//                 .pubDateParsed → entry.published
//   parser/atom:  title, id, updatedParsed, first alternate link; entries.length,
//                 entries[].title, .id → entry.atomId, first alternate link, .updatedParsed,
//                 .publishedParsed
//   translator/*, extensions/*: title, link, items[].title, .link, .guid → entry.guid ?? entry.atomId,
//                 .publishedParsed, .updatedParsed, .author.name
// Not mapped: descriptions/content (HTML vs plain), enclosures, images, extensions, rights.

type Json = Record<string, unknown>;
const str = (v: unknown) => (typeof v === "string" ? v : undefined);
const title = (v: unknown) => (typeof v === "string" ? titleText(v) : "");

function firstAlternate(links: unknown): string | undefined {
  if (!Array.isArray(links)) return undefined;
  const alt = (links as Json[]).find((l) => !l.rel || l.rel === "alternate");
  return str(alt?.href);
}

function compareRss(ledger: Ledger, file: string, ours: ParsedFeed, theirs: Json) {
  ledger.check(file, "feed.title", ours.feed.title, title(theirs.title));
  ledger.check(
    file,
    "feed.link",
    ours.feed.link,
    str(theirs.link),
    sameUrl(ours.feed.link, str(theirs.link)),
  );
  const items = (theirs.items as Json[] | undefined) ?? [];
  ledger.check(file, "entries.length", ours.entries.length, items.length);
  items.forEach((item, i) => {
    const e: Partial<ParsedEntry> = ours.entries[i] ?? {};
    ledger.check(file, "entry.title", e.title, title(item.title));
    ledger.check(file, "entry.link", e.link, str(item.link), sameUrl(e.link, str(item.link)));
    const guid = str((item.guid as Json | undefined)?.value);
    ledger.check(file, "entry.guid", e.guid, guid?.trim() || undefined);
    const pub = str(item.pubDateParsed);
    ledger.check(file, "entry.published", e.published, pub, sameInstant(e.published, pub));
  });
}

function compareAtom(ledger: Ledger, file: string, ours: ParsedFeed, theirs: Json) {
  ledger.check(file, "feed.title", ours.feed.title, title(theirs.title));
  ledger.check(file, "feed.id", ours.feed.id, str(theirs.id)?.trim() || undefined);
  const link = firstAlternate(theirs.links);
  ledger.check(file, "feed.link", ours.feed.link, link, sameUrl(ours.feed.link, link));
  const upd = str(theirs.updatedParsed);
  ledger.check(file, "feed.updated", ours.feed.updated, upd, sameInstant(ours.feed.updated, upd));
  const entries = (theirs.entries as Json[] | undefined) ?? [];
  ledger.check(file, "entries.length", ours.entries.length, entries.length);
  entries.forEach((entry, i) => {
    const e: Partial<ParsedEntry> = ours.entries[i] ?? {};
    ledger.check(file, "entry.title", e.title, title(entry.title));
    ledger.check(file, "entry.atomId", e.atomId, str(entry.id)?.trim() || undefined);
    const link = firstAlternate(entry.links);
    ledger.check(file, "entry.link", e.link, link, sameUrl(e.link, link));
    const upd = str(entry.updatedParsed);
    ledger.check(file, "entry.updated", e.updated, upd, sameInstant(e.updated, upd));
    const pub = str(entry.publishedParsed);
    ledger.check(file, "entry.published", e.published, pub, sameInstant(e.published, pub));
  });
}

function compareTranslated(ledger: Ledger, file: string, ours: ParsedFeed, theirs: Json) {
  ledger.check(file, "feed.title", ours.feed.title, title(theirs.title));
  const link = str(theirs.link);
  ledger.check(file, "feed.link", ours.feed.link, link, sameUrl(ours.feed.link, link));
  const items = (theirs.items as Json[] | undefined) ?? [];
  ledger.check(file, "entries.length", ours.entries.length, items.length);
  items.forEach((item, i) => {
    const e: Partial<ParsedEntry> = ours.entries[i] ?? {};
    ledger.check(file, "entry.title", e.title, title(item.title));
    ledger.check(file, "entry.link", e.link, str(item.link), sameUrl(e.link, str(item.link)));
    ledger.check(file, "entry.guid", e.guid ?? e.atomId, str(item.guid)?.trim() || undefined);
    const pub = str(item.publishedParsed);
    ledger.check(file, "entry.published", e.published, pub, sameInstant(e.published, pub));
    const upd = str(item.updatedParsed);
    ledger.check(file, "entry.updated", e.updated, upd, sameInstant(e.updated, upd));
    const author = plainText(str((item.author as Json | undefined)?.name) ?? "");
    ledger.check(file, "entry.author", e.author, author || undefined);
  });
}

/** A JSON Feed author list (1.1 `authors`, 1.0 `author`) as our byline: names joined by ", ". */
function jsonAuthors(holder: Json): string | undefined {
  const list = Array.isArray(holder.authors) ? (holder.authors as Json[]) : [holder.author as Json];
  const names = list.map((a) => plainText(str(a?.name) ?? "")).filter(Boolean);
  return [...new Set(names)].join(", ") || undefined;
}

// parser/json: their expected output is JSON Feed itself: title, home_page_url → feed.link;
// items[].id → entry.guid, .title, .url (else external_url) → entry.link, .date_published,
// .date_modified, authors (else author, else the feed's) → entry.author.
function compareJson(ledger: Ledger, file: string, ours: ParsedFeed, theirs: Json) {
  ledger.check(file, "feed.title", ours.feed.title, title(theirs.title));
  const home = str(theirs.home_page_url);
  ledger.check(file, "feed.link", ours.feed.link, home, sameUrl(ours.feed.link, home));
  const items = (theirs.items as Json[] | undefined) ?? [];
  ledger.check(file, "entries.length", ours.entries.length, items.length);
  items.forEach((item, i) => {
    const e: Partial<ParsedEntry> = ours.entries[i] ?? {};
    ledger.check(file, "entry.guid", e.guid, str(item.id)?.trim() || undefined);
    ledger.check(file, "entry.title", e.title, title(item.title));
    const link = str(item.url) ?? str(item.external_url);
    ledger.check(file, "entry.link", e.link, link, sameUrl(e.link, link));
    const pub = str(item.date_published);
    ledger.check(file, "entry.published", e.published, pub, sameInstant(e.published, pub));
    const upd = str(item.date_modified);
    ledger.check(file, "entry.updated", e.updated, upd, sameInstant(e.updated, upd));
    ledger.check(file, "entry.author", e.author, jsonAuthors(item) ?? jsonAuthors(theirs));
  });
}

// translator/json: title, link, items[].guid, .title, .link, .publishedParsed,
// .updatedParsed, authors[].name (else author.name) → entry.author.
function compareTranslatedJson(ledger: Ledger, file: string, ours: ParsedFeed, theirs: Json) {
  ledger.check(file, "feed.title", ours.feed.title, title(theirs.title));
  const link = str(theirs.link);
  ledger.check(file, "feed.link", ours.feed.link, link, sameUrl(ours.feed.link, link));
  const items = (theirs.items as Json[] | undefined) ?? [];
  ledger.check(file, "entries.length", ours.entries.length, items.length);
  items.forEach((item, i) => {
    const e: Partial<ParsedEntry> = ours.entries[i] ?? {};
    ledger.check(file, "entry.guid", e.guid, str(item.guid)?.trim() || undefined);
    ledger.check(file, "entry.title", e.title, title(item.title));
    ledger.check(file, "entry.link", e.link, str(item.link), sameUrl(e.link, str(item.link)));
    const pub = str(item.publishedParsed);
    ledger.check(file, "entry.published", e.published, pub, sameInstant(e.published, pub));
    const upd = str(item.updatedParsed);
    ledger.check(file, "entry.updated", e.updated, upd, sameInstant(e.updated, upd));
    ledger.check(file, "entry.author", e.author, jsonAuthors(item));
  });
}

const dir = corpusDir("gofeed");

describe.skipIf(!dir)("corpus: gofeed", () => {
  const root = path.join(dir ?? "", "testdata");
  const ledger = new Ledger("gofeed");

  it("agrees with the expected output where the contracts meet", () => {
    const xmlFolders = ["parser/rss", "parser/atom", "translator/rss", "translator/atom"];
    // extensions/ (Dublin Core, iTunes, Media RSS) expects the translator's model too
    for (const folder of [...xmlFolders, "extensions"]) {
      for (const xml of walk(path.join(root, folder))) {
        const expected = xml.replace(/\.xml$/, ".json");
        if (!xml.endsWith(".xml") || !existsSync(expected)) continue;
        const file = path.relative(root, xml);
        const ours = parseFeed(readFileSync(xml));
        const theirs = readJson<Json>(expected);
        if (folder.startsWith("translator") || folder === "extensions") {
          compareTranslated(ledger, file, ours, theirs);
        } else if (folder === "parser/rss") compareRss(ledger, file, ours, theirs);
        else compareAtom(ledger, file, ours, theirs);
      }
    }
    // JSON Feed: each input beside its `_expected.json`
    for (const folder of ["parser/json", "translator/json"]) {
      for (const input of walk(path.join(root, folder))) {
        const expected = input.replace(/\.json$/, "_expected.json");
        if (input.endsWith("_expected.json") || !existsSync(expected)) continue;
        const file = path.relative(root, input);
        const ours = parseFeed(readFileSync(input), { contentType: "application/feed+json" });
        const theirs = readJson<Json>(expected);
        if (folder === "parser/json") compareJson(ledger, file, ours, theirs);
        else compareTranslatedJson(ledger, file, ours, theirs);
      }
    }
    console.log(ledger.summary());
    expect(ledger.verdict()).toEqual({ unlisted: [], stale: [] });
  });

  it("reads the universal parser's JSON Feeds and refuses its invalid JSON ones", () => {
    const universal = path.join(root, "parser/universal");
    for (const name of ["json10_feed.json", "json11_feed.json", "sample.json"]) {
      const feed = parseFeed(readFileSync(path.join(universal, name)));
      expect(feed.format, name).toMatch(/^json1[01]$/);
      expect(feed.entries.length, name).toBeGreaterThan(0);
    }
    for (const file of [
      path.join(universal, "invalid.json"),
      path.join(root, "parser/json/invalid/invalid.json"),
    ]) {
      expect(() => parseFeed(readFileSync(file)), file).toThrow(FeedParseError);
    }
  });
});
