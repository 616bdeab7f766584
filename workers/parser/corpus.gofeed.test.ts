import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { type ParsedEntry, type ParsedFeed, parseFeed } from "./parseFeed";
import { corpusDir, Ledger, readJson, sameInstant, sameUrl, walk } from "./testing/corpora";
import { plainText, titleText } from "./text";

// gofeed's expected JSON, mapped explicitly. Their titles keep markup as the document had it;
// ours are plain text, so theirs pass through the same title rule (text.ts, titleText) first.
//   parser/rss:   title, link, items.length, items[].title, .link, .guid.value → entry.guid,
//                 .pubDateParsed → entry.published
//   parser/atom:  title, id, updatedParsed, first alternate link; entries.length,
//                 entries[].title, .id → entry.atomId, first alternate link, .updatedParsed,
//                 .publishedParsed
//   translator/*: title, link, items[].title, .link, .guid → entry.guid ?? entry.atomId,
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

const dir = corpusDir("gofeed");

describe.skipIf(!dir)("corpus: gofeed", () => {
  const root = path.join(dir ?? "", "testdata");
  const ledger = new Ledger("gofeed");

  it("agrees with the expected output where the contracts meet", () => {
    for (const folder of ["parser/rss", "parser/atom", "translator/rss", "translator/atom"]) {
      for (const xml of walk(path.join(root, folder))) {
        const expected = xml.replace(/\.xml$/, ".json");
        if (!xml.endsWith(".xml") || !existsSync(expected)) continue;
        const file = path.relative(root, xml);
        const ours = parseFeed(readFileSync(xml));
        const theirs = readJson<Json>(expected);
        if (folder.startsWith("translator")) compareTranslated(ledger, file, ours, theirs);
        else if (folder === "parser/rss") compareRss(ledger, file, ours, theirs);
        else compareAtom(ledger, file, ours, theirs);
      }
    }
    console.log(ledger.summary());
    expect(ledger.verdict()).toEqual({ unlisted: [], stale: [] });
  });
});
