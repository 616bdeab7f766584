import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { type ParsedEntry, type ParsedFeed, parseFeed } from "./parseFeed";
import { corpusDir, Ledger, sameUrl } from "./testing/corpora";

// miniflux's assertions (inline_cases.jsonl), in its field names, mapped onto our contract:
//   feed.Title → feed.title            feed.SiteURL → feed.link (as URLs)
//   len(feed.Entries) → entries.length
//   feed.Entries[i].Title → entry.title   .URL → entry.link (as URLs)   .Author → entry.author
// Each feed is parsed with the case's base_url as the feed URL, as miniflux does. Not mapped
// (counted, not compared): Hash, Content, Language, Enclosures, Tags, CommentsURL, FeedURL,
// IconURL, TTL, Description, len(Title). JSON Feed cases are outside our formats.

interface Case {
  file: string;
  base_url: string;
  field: string;
  op: "==" | "len==";
  expected: unknown;
}

function mapped(feed: ParsedFeed, field: string): { kind: string; value: unknown } | undefined {
  if (field === "feed.Title") return { kind: "feed.title", value: feed.feed.title };
  if (field === "feed.SiteURL") return { kind: "feed.link", value: feed.feed.link };
  if (field === "len(feed.Entries)") return { kind: "entries.length", value: feed.entries.length };
  const m = field.match(/^feed\.Entries\[(\d+)\]\.(Title|URL|Author)$/);
  if (!m) return undefined;
  const e: Partial<ParsedEntry> = feed.entries[Number(m[1])] ?? {};
  if (m[2] === "Title") return { kind: "entry.title", value: e.title };
  if (m[2] === "URL") return { kind: "entry.link", value: e.link };
  return { kind: "entry.author", value: e.author };
}

const dir = corpusDir("miniflux");

describe.skipIf(!dir)("corpus: miniflux", () => {
  const root = dir ?? "";
  // Read inside the tests: a skipped describe still runs its body.
  const cases = () =>
    readFileSync(path.join(root, "inline_cases.jsonl"), "utf8")
      .split("\n")
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as Case)
      .filter((c) => !c.file.endsWith(".json"));
  const ledger = new Ledger("miniflux");

  it("agrees with miniflux's assertions where the contracts meet", () => {
    const parsed = new Map<string, ParsedFeed>();
    let unmapped = 0;
    for (const c of cases()) {
      const key = `${c.file}@${c.base_url}`;
      const feed =
        parsed.get(key) ?? parseFeed(readFileSync(path.join(root, c.file)), { url: c.base_url });
      parsed.set(key, feed);
      const ours = mapped(feed, c.field);
      if (!ours) {
        unmapped++;
        continue;
      }
      const file = c.file.replace(/^inline\//, "");
      const same = ours.kind.endsWith("link")
        ? sameUrl(ours.value as string | undefined, (c.expected as string) || undefined)
        : undefined;
      ledger.check(file, ours.kind, ours.value ?? "", c.expected, same);
    }
    console.log(`${ledger.summary()}; ${unmapped} assertions on fields outside our contract`);
    expect(ledger.verdict()).toEqual({ unlisted: [], stale: [] });
  });
});
