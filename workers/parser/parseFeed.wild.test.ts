import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseFeed } from "./parseFeed";
import { readFeedInSlices } from "./readFeedInSlices";

// Feed shapes real sites publish that we refused or misread before issue 17 (part 5), one
// fixture each in testdata/wild/, written for these tests (no network).

const wild = (name: string) => readFileSync(path.join(import.meta.dirname, "testdata/wild", name));

describe("parseFeed: formats in the wild", () => {
  it("a DOCTYPE declaring plain-text entities: read and expanded", () => {
    const feed = parseFeed(wild("doctype-entities.rss"));
    expect(feed.feed).toEqual({
      title: "The Daily Ledger — Top stories",
      link: "https://ledger.example.com/",
    });
    expect(feed.entries).toEqual([
      {
        guid: "ledger-1001",
        id: "ledger-1001",
        title: "Port reopens after storm — The Daily Ledger",
        link: "https://ledger.example.com/2026/12/port-reopens",
        published: "2026-12-01T09:30:00Z",
        categories: [],
      },
    ]);
  });

  it("Atom under a prefix of its own, with another default namespace", () => {
    const feed = parseFeed(wild("atom-prefixed.xml"));
    expect(feed.format).toBe("atom1");
    expect(feed.feed).toEqual({
      title: "Prefixed Atom",
      link: "https://prefixed.example.org/",
      id: "urn:uuid:5a1c6c1e-1b7e-4b5e-9b0e-000000000001",
      updated: "2026-12-01T08:00:00Z",
    });
    // the XHTML <entry> in the default namespace is not an Atom entry
    expect(feed.entries).toEqual([
      {
        atomId: "urn:uuid:5a1c6c1e-1b7e-4b5e-9b0e-000000000002",
        id: "urn:uuid:5a1c6c1e-1b7e-4b5e-9b0e-000000000002",
        title: "Markets rally",
        link: "https://prefixed.example.org/markets",
        published: "2026-12-01T06:00:00Z",
        updated: "2026-12-01T06:30:00Z",
        summary: "Stocks rose.",
        author: "Desk",
        categories: [],
      },
    ]);
  });

  it("RSS with Atom elements under .NET's a10 prefix: link, updated, author", () => {
    const feed = parseFeed(wild("rss-a10-prefix.rss"));
    expect(feed.feed).toEqual({
      title: "Ministry press releases",
      link: "https://gov.example.org/press",
      updated: "2026-12-01T03:00:00Z",
    });
    expect(feed.entries[0]).toMatchObject({
      link: "https://gov.example.org/press/77",
      updated: "2026-12-01T02:45:00Z",
      author: "Press Office",
    });
  });

  it("a Netscape CDF channel: HREF links against BASE, LASTMOD dates, nested channels' items", () => {
    const feed = parseFeed(wild("netscape.cdf"));
    expect(feed.format).toBe("cdf");
    expect(feed.feed).toEqual({
      title: "Example Channel",
      link: "http://cdf.example.com/index.html",
      updated: "2026-12-01T10:00:00Z",
    });
    expect(feed.entries.map((e) => [e.id, e.title, e.link, e.updated, e.summary])).toEqual([
      [
        "http://cdf.example.com/news/first.html",
        "First headline",
        "http://cdf.example.com/news/first.html",
        "2026-12-01T09:15:00Z",
        "What happened first.",
      ],
      [
        "http://cdf.example.com/news/second.html",
        "Second headline",
        "http://cdf.example.com/news/second.html",
        undefined,
        undefined,
      ],
      [
        "http://cdf.example.com/sport/match.html",
        "Match report",
        "http://cdf.example.com/sport/match.html",
        "2026-11-30T20:00:00Z",
        undefined,
      ],
    ]);
  });

  it("a lowercase <channel> root with neither HREF nor ITEM is still not a feed", () => {
    expect(() => parseFeed("<channel><title>t</title></channel>")).toThrow(/not a feed/);
  });

  it("Atom links without href: passed over, or their text when it is a URL", () => {
    const feed = parseFeed(wild("links-without-href.atom"));
    expect(feed.feed.link).toBe("https://nohref.example.net/");
    expect(feed.entries.map((e) => e.link)).toEqual(["https://nohref.example.net/1", undefined]);
  });

  it("RSS links written Atom's way (<link href>), resolved against the feed URL", () => {
    const feed = parseFeed(wild("links-without-text.rss"), {
      url: "https://hrefonly.example.org/feed.xml",
    });
    expect(feed.feed.link).toBe("https://hrefonly.example.org/");
    expect(feed.entries[0]?.link).toBe("https://hrefonly.example.org/items/1");
  });

  it("several RSS <link>s: the last that points to a page wins, as in gofeed and feedparser", () => {
    const feed = parseFeed(wild("several-links.rss"));
    expect(feed.feed.link).toBe("https://www.gazette.example.org/");
    // an enclosure written as a link, and an empty link, point to no page and are passed over
    expect(feed.entries.map((e) => e.link)).toEqual([
      "https://www.gazette.example.org/2026/12/ferry-timetable",
      "https://www.gazette.example.org/2026/12/harbour-lights",
    ]);
  });

  it("an RSS <link rel=self href> is not the page", () => {
    const feed = parseFeed(
      `<rss><channel><title>t</title><link rel="self" href="https://ex.com/feed"/><link>https://ex.com/</link></channel></rss>`,
    );
    expect(feed.feed.link).toBe("https://ex.com/");
  });

  it("dcterms:issued, created and modified date RSS 1.0 items and channels", () => {
    const feed = parseFeed(wild("dcterms-dates.rdf"));
    expect(feed.feed.updated).toBe("2026-12-01T06:00:00Z");
    expect(feed.entries.map((e) => [e.published, e.updated])).toEqual([
      ["2026-11-30T10:00:00Z", "2026-12-01T11:00:00Z"],
      ["2026-11-29T00:00:00Z", undefined],
    ]);
  });

  it("dcterms dates stand in for Atom's own when those are missing", () => {
    const feed = parseFeed(wild("dcterms-dates.atom"));
    expect(feed.feed.updated).toBe("2026-12-01T12:00:00Z");
    expect(feed.entries[0]).toMatchObject({
      published: "2026-11-30T10:00:00Z",
      updated: "2026-12-01T11:00:00Z",
    });
  });

  it("escaped markup in a title is its literal text unless it is HTML", () => {
    const feed = parseFeed(wild("escaped-title.rss"));
    expect(feed.entries.map((e) => e.title)).toEqual([
      "The <blink> tag is back",
      "How </div> closes a block",
      "Bold as HTML",
      "Naked HTML in CDATA",
      "Profits < costs & 2 > 1",
    ]);
  });

  it("upper-case iTunes elements and prefixes", () => {
    const feed = parseFeed(wild("itunes-uppercase.rss"));
    expect(feed.entries.map((e) => [e.author, e.summary])).toEqual([
      ["Host One", "Episode one summary"],
      ["Host Two", "Episode two summary"],
    ]);
  });

  it("media:title never replaces the item's title, declared or not", () => {
    expect(parseFeed(wild("media-title.rss")).entries[0]?.title).toBe("Flood waters recede");
    const undeclared = parseFeed(wild("media-title-undeclared.rss"));
    expect(undeclared.feed.title).toBe("Undeclared media prefix");
    expect(undeclared.entries.map((e) => [e.title, e.summary])).toEqual([
      ["Bridge opens", "The bridge opened."],
      ["", undefined],
    ]);
  });

  it("readFeedInSlices reads a big CDF like parseFeed", async () => {
    const items = Array.from(
      { length: 600 },
      (_, i) => `<ITEM HREF="/n/${i}.html"><TITLE>Item ${i} ${"y".repeat(200)}</TITLE></ITEM>`,
    ).join("\n");
    const body = `<CHANNEL HREF="http://big.example.com/"><TITLE>Big</TITLE>${items}</CHANNEL>`;
    expect(body.length).toBeGreaterThan(128 * 1024);
    const sliced = await readFeedInSlices(body, { maxEntries: 500 });
    expect(sliced).toMatchObject({ format: "cdf", entriesInDocument: 600, entriesLeftOut: 100 });
    expect(sliced.entries).toEqual(parseFeed(body).entries.slice(0, 500));
  });
});
