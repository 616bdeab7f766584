import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { FeedParseError, parseFeed } from "./parseFeed";
import { readFeedInSlices } from "./readFeedInSlices";

const fixture = (name: string) =>
  readFileSync(path.join(import.meta.dirname, "testdata/json", name));

function refusal(run: () => unknown): FeedParseError {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(FeedParseError);
    expect((err as FeedParseError).code).toBe("parse_error");
    expect((err as FeedParseError).message).toMatch(/^parser: /);
    return err as FeedParseError;
  }
  throw new Error("expected a FeedParseError, got a feed");
}

describe("parseFeed: JSON Feed", () => {
  it("reads JSON Feed 1.1: ids, links against home_page_url, dates in UTC, authors, language", () => {
    const feed = parseFeed(fixture("jsonfeed-1.1.json"), {
      url: "https://cdn.example.com/feed.json",
      contentType: "application/feed+json",
    });
    expect(feed.format).toBe("json11");
    expect(feed.feed).toEqual({
      title: "Dhaka Wire & Co",
      link: "https://news.example.com/",
      language: "en-GB",
    });
    expect(feed.entries).toEqual([
      {
        guid: "2026-12-01-budget",
        id: "2026-12-01-budget",
        // markup that is HTML is stripped; escaped markup that is not stays as text (titleText)
        title: "Budget passes: not bold, <blink> kept",
        link: "https://news.example.com/2026/12/01/budget?utm_source=feed",
        published: "2026-12-01T04:00:00Z",
        updated: "2026-12-01T06:30:00.250Z",
        summary: "The budget passed & markets rose.",
        author: "Rahim Uddin, Jo Bloggs",
        categories: ["Economy"],
      },
      {
        guid: "42",
        id: "42",
        title: "A linked post",
        link: "https://elsewhere.example.org/linked",
        summary: "Plain text body",
        author: "Desk Editor",
        categories: [],
      },
      {
        // no id: identity falls back to the canonical link, as for an RSS item without a guid
        id: "https://news.example.com/2026/12/02/no-id",
        title: "",
        link: "https://news.example.com/2026/12/02/no-id#comments",
        summary: "Summary wins over content.",
        author: "Desk Editor",
        categories: [],
      },
      {
        id: "Title only|2026-12-03T00:00:00Z",
        title: "Title only",
        published: "2026-12-03T00:00:00Z",
        author: "Desk Editor",
        categories: [],
      },
    ]);
  });

  it("reads JSON Feed 1.0 by its version URL alone: the deprecated author, links against feed_url", () => {
    const feed = parseFeed(fixture("jsonfeed-1.0.json"));
    expect(feed.format).toBe("json10");
    expect(feed.feed).toEqual({ title: "Old style" });
    expect(feed.entries.map((e) => [e.id, e.link, e.author, e.published])).toEqual([
      [
        "https://old.example.net/p/1",
        "https://old.example.net/feeds/p/1",
        "Ann Author",
        "2010-02-07T19:04:00Z",
      ],
      ["p2", "https://old.example.net/feeds/p/2", "Bea Writer", undefined],
    ]);
  });

  it("resolves relative links against the fetch URL when the feed names no URL of its own", () => {
    const body = JSON.stringify({
      version: "https://jsonfeed.org/version/1.1",
      items: [{ id: "a", url: "../a" }],
    });
    const feed = parseFeed(body, { url: "https://ex.com/feeds/x/feed.json" });
    expect(feed.entries[0]?.link).toBe("https://ex.com/feeds/a");
  });

  it("reads a BOM, leading whitespace and a charset in the content type", () => {
    const body = Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      Buffer.from(
        `\n  {"version":"https://jsonfeed.org/version/1.1","title":"বাংলা খবর","items":[]}`,
      ),
    ]);
    const feed = parseFeed(body, { contentType: "application/json; charset=utf-8" });
    expect(feed.feed.title).toBe("বাংলা খবর");
  });

  it("reads an XML body served as JSON as the XML it is", () => {
    const feed = parseFeed("<rss><channel><title>mislabelled</title></channel></rss>", {
      contentType: "application/json",
    });
    expect(feed).toMatchObject({ format: "rss2", feed: { title: "mislabelled" } });
  });

  it.each([
    [
      "malformed JSON",
      '{"version": "https://jsonfeed.org/version/1.1", "items": [',
      /malformed JSON/,
    ],
    ["a JSON array", "[1, 2]", /not a JSON Feed: the document is not a JSON object/],
    ["JSON without a version", '{"verion": "1.0"}', /not a JSON Feed: no jsonfeed.org version/],
    ["a version and no items", '{"version": "https://jsonfeed.org/version/1"}', /items is missing/],
    ["another version", '{"version": "https://jsonfeed.org/version/2"}', /no jsonfeed.org version/],
    [
      "items that are not an array",
      '{"version": "https://jsonfeed.org/version/1", "items": {"id": 1}}',
      /items is missing or not an array/,
    ],
  ])("%s is a FeedParseError", (_, body, message) => {
    const err = refusal(() => parseFeed(body, { contentType: "application/feed+json" }));
    expect(err.message).toMatch(message);
  });

  it("garbage labelled application/feed+json is a FeedParseError, not a crash", () => {
    const err = refusal(() => parseFeed("hello", { contentType: "application/feed+json" }));
    expect(err.message).toMatch(/malformed JSON/);
  });

  it("refuses nesting deeper than 256 levels fast, and reads 200 levels of extension", () => {
    const deep = `{"version":"https://jsonfeed.org/version/1.1","_x":${"[".repeat(100_000)}${"]".repeat(100_000)}}`;
    const start = performance.now();
    expect(refusal(() => parseFeed(deep)).message).toMatch(/nests deeper than 256/);
    expect(performance.now() - start).toBeLessThan(100);
    const ok = `{"version":"https://jsonfeed.org/version/1.1","_x":${"[".repeat(200)}${"]".repeat(200)},"items":[{"id":"a","title":"[{\\"}"}]}`;
    expect(parseFeed(ok).entries[0]?.title).toBe('[{"}');
  });
});

describe("readFeedInSlices: JSON Feed", () => {
  const big = JSON.stringify({
    version: "https://jsonfeed.org/version/1.1",
    title: "Big",
    items: Array.from({ length: 1_500 }, (_, i) => ({
      id: `i${i}`,
      title: `Item ${i} ${"x".repeat(100)}`,
      url: `/i/${i}`,
    })),
  });

  it("reads at most maxEntries items and counts the rest, with parseFeed's entries", async () => {
    expect(big.length).toBeGreaterThan(128 * 1024);
    const read = await readFeedInSlices(Buffer.from(big), {
      url: "https://ex.com/feed.json",
      maxEntries: 1_000,
    });
    expect(read.format).toBe("json11");
    expect(read.entries).toHaveLength(1_000);
    expect(read.entriesInDocument).toBe(1_500);
    expect(read.entriesLeftOut).toBe(500);
    const whole = parseFeed(big, { url: "https://ex.com/feed.json" });
    expect(read.entries).toEqual(whole.entries.slice(0, 1_000));
    expect(read.entries[999]?.link).toBe("https://ex.com/i/999");
  });

  it("refuses a body that is not a JSON Feed with FeedParseError", async () => {
    await expect(
      readFeedInSlices('{"title":"no version"}', { maxEntries: 10 }),
    ).rejects.toBeInstanceOf(FeedParseError);
  });
});
