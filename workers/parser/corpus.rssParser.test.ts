import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { FeedParseError, type ParsedEntry, parseFeed } from "./parseFeed";
import { corpusDir, Ledger, sameInstant, sameUrl } from "./testing/corpora";

// rss-parser's expected JSON, mapped field by field onto our contract:
//   feed.title, feed.link              → feed.title, feed.link
//   items.length                       → entries.length
//   item.title, item.link              → entry.title, entry.link (links as WHATWG URLs)
//   item.guid (RSS) / item.id (Atom)   → entry.guid / entry.atomId
//   item.isoDate                       → entry.published ?? entry.updated, as an instant
// Not mapped: content/contentSnippet (HTML vs our plain summary), author/creator (theirs keeps
// Atom author objects and dc:creator separately), itunes, enclosures, custom fields.

interface Manifest {
  input: string;
  expected: string | null;
  note: string;
}
interface TheirItem {
  title?: string;
  link?: string;
  guid?: string;
  id?: string;
  isoDate?: string;
}
interface TheirFeed {
  feed: { title?: string; link?: string; items: TheirItem[] };
}

const dir = corpusDir("rss-parser");

describe.skipIf(!dir)("corpus: rss-parser", () => {
  const root = dir ?? "";
  // Read inside the tests: a skipped describe still runs its body.
  const cases = () =>
    readFileSync(path.join(root, "manifest.jsonl"), "utf8")
      .split("\n")
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as Manifest);
  const ledger = new Ledger("rss-parser");

  it("rejects the feed rss-parser rejects, with a FeedParseError", () => {
    for (const c of cases().filter((c) => c.expected === null && /must error/.test(c.note))) {
      expect(() => parseFeed(readFileSync(path.join(root, c.input)))).toThrowError(FeedParseError);
    }
  });

  it("agrees with the expected output where the contracts meet", () => {
    for (const c of cases()) {
      if (c.expected === null) {
        if (!/must error/.test(c.note)) parseFeed(readFileSync(path.join(root, c.input)));
        continue;
      }
      const file = path.basename(c.input);
      // encoding.json was written by a latin1 reader (see the manifest note).
      const raw = readFileSync(path.join(root, c.expected));
      const theirs = JSON.parse(
        c.expected.endsWith("encoding.json") ? raw.toString("latin1") : raw.toString("utf8"),
      ) as TheirFeed;
      const ours = parseFeed(readFileSync(path.join(root, c.input)));
      ledger.check(file, "feed.title", ours.feed.title, theirs.feed.title ?? "");
      ledger.check(
        file,
        "feed.link",
        ours.feed.link,
        theirs.feed.link,
        sameUrl(ours.feed.link, theirs.feed.link),
      );
      ledger.check(file, "entries.length", ours.entries.length, theirs.feed.items.length);
      theirs.feed.items.forEach((item, i) => {
        const e: Partial<ParsedEntry> = ours.entries[i] ?? {};
        ledger.check(file, "entry.title", e.title || undefined, item.title || undefined);
        ledger.check(file, "entry.link", e.link, item.link, sameUrl(e.link, item.link));
        if (item.guid !== undefined) ledger.check(file, "entry.guid", e.guid, item.guid);
        if (item.id !== undefined) ledger.check(file, "entry.atomId", e.atomId, item.id);
        const date = e.published ?? e.updated;
        ledger.check(file, "entry.date", date, item.isoDate, sameInstant(date, item.isoDate));
      });
    }
    console.log(ledger.summary());
    expect(ledger.verdict()).toEqual({ unlisted: [], stale: [] });
  });
});
