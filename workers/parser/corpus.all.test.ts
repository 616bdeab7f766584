import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { FeedParseError, parseFeed } from "./parseFeed";
import { CORPORA, corpusDir, readJson, walk } from "./testing/corpora";

// Every file in every corpus, feed or not (Go sources, licences and expected JSON included),
// either parses or throws FeedParseError: nothing else may escape parseFeed. Among the feed-like
// files (.xml .rss .atom .html), the ones that must fail are listed with their reason in
// testdata/corpus-rejects.json, so a feed we newly refuse, or a broken one we newly accept,
// shows up here.

const FEED_LIKE = /\.(xml|rss|atom|html)$/;
const rejects = readJson<Record<string, string>>(
  path.join(import.meta.dirname, "testdata/corpus-rejects.json"),
);

const present = ["rss-parser", "gofeed", "miniflux"].every((name) => corpusDir(name));

describe.skipIf(!present)("corpus: every file", () => {
  it("parses or fails with FeedParseError, and only the listed feed-like files fail", () => {
    const failed: Record<string, string> = {};
    let files = 0;
    for (const file of walk(CORPORA)) {
      files++;
      const rel = path.relative(CORPORA, file);
      try {
        parseFeed(readFileSync(file));
      } catch (err) {
        if (!(err instanceof FeedParseError)) throw new Error(`${rel} crashed the parser: ${err}`);
        if (FEED_LIKE.test(rel)) failed[rel] = err.message;
      }
    }
    console.log(
      `corpus: ${files} files read, ${Object.keys(failed).length} feed-like files refused as listed`,
    );
    expect(Object.keys(failed).sort()).toEqual(Object.keys(rejects).sort());
  });
});
