import { monitorEventLoopDelay } from "node:perf_hooks";
import { describe, expect, it } from "vitest";
import { FeedParseError, parseFeed } from "./parseFeed";
import { readFeedInSlices } from "./readFeedInSlices";

const rssItem = (i: number) =>
  `<item><title>Headline ${i} &amp; more</title><link>https://news.example/${i}</link>` +
  `<guid isPermaLink="false">g-${i}</guid><pubDate>Mon, 01 Dec 2026 10:00:00 GMT</pubDate>` +
  `<description><![CDATA[<p>Story ${i}: </item> is only text here</p>]]></description>` +
  `<category>markets</category><dc:creator>Desk ${i % 7}</dc:creator></item>\n`;

const bigRss = (n: number) =>
  `<?xml version="1.0"?>\n<!-- a comment with <item> in it -->\n` +
  `<rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/"><channel><title>Big wire</title>` +
  `<link>https://news.example/</link><ttl>5</ttl>\n${Array.from({ length: n }, (_, i) => rssItem(i)).join("")}` +
  `<lastBuildDate>Mon, 01 Dec 2026 10:00:00 GMT</lastBuildDate></channel></rss>`;

const bigAtom = (n: number) =>
  `<feed xmlns="http://www.w3.org/2005/Atom" xml:base="https://atom.example/base/"><title>Atom wire</title>` +
  `<id>urn:feed</id><author><name>Feed Desk</name></author>` +
  Array.from(
    { length: n },
    (_, i) =>
      `<entry><id>urn:e:${i}</id><title type="html">Entry &lt;b&gt;${i}&lt;/b&gt;</title>` +
      `<link rel="alternate" href="e/${i}"/><updated>2026-12-01T10:00:00Z</updated>` +
      `<summary>Summary ${i}</summary></entry>`,
  ).join("") +
  `</feed>`;

const bigRdf = (n: number) =>
  `<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/">` +
  `<channel rdf:about="https://rdf.example/"><title>RDF wire</title><link>https://rdf.example/</link></channel>` +
  Array.from(
    { length: n },
    (_, i) =>
      `<item rdf:about="https://rdf.example/${i}"><title>RDF ${i}</title><link>https://rdf.example/${i}</link></item>`,
  ).join("") +
  `</rdf:RDF>`;

describe("readFeedInSlices", () => {
  it.each([
    ["RSS 2.0", bigRss(3_000)],
    ["Atom 1.0", bigAtom(3_000)],
    ["RSS 1.0", bigRdf(3_000)],
  ])("reads a big %s document exactly as parseFeed does", async (_name, doc) => {
    const whole = parseFeed(doc, { url: "https://news.example/feed" });
    const sliced = await readFeedInSlices(Buffer.from(doc), {
      url: "https://news.example/feed",
      maxEntries: 10_000,
    });
    expect(sliced.entriesInDocument).toBe(3_000);
    expect(sliced.entriesLeftOut).toBe(0);
    expect({ format: sliced.format, feed: sliced.feed, entries: sliced.entries }).toEqual(whole);
  });

  it("takes the first maxEntries entries and counts the rest", async () => {
    const doc = bigRss(5_000);
    const read = await readFeedInSlices(Buffer.from(doc), { maxEntries: 1_000 });
    expect(read.entries).toHaveLength(1_000);
    expect(read.entries[999]?.guid).toBe("g-999");
    expect(read).toMatchObject({ entriesInDocument: 5_000, entriesLeftOut: 4_000 });
    const small = await readFeedInSlices(Buffer.from(bigRss(30)), { maxEntries: 10 });
    expect(small).toMatchObject({ entriesInDocument: 30, entriesLeftOut: 20 });
    expect(small.entries.map((e) => e.guid)).toEqual(
      Array.from({ length: 10 }, (_, i) => `g-${i}`),
    );
  });

  it("refuses what is not a feed, or not XML, with a clear error", async () => {
    const cut = bigRss(3_000).slice(0, -2_000);
    await expect(readFeedInSlices(Buffer.from(cut), { maxEntries: 100 })).rejects.toThrow(
      FeedParseError,
    );
    const broken = bigRss(3_000).replace("<title>Headline 2000 &amp; more</title>", "<title>x</b>");
    await expect(readFeedInSlices(Buffer.from(broken), { maxEntries: 10_000 })).rejects.toThrow(
      /parser: not well-formed XML/,
    );
    const late = bigRss(3_000).replace(
      "<item><title>Headline 5 ",
      '<!DOCTYPE x [<!ENTITY a "b">]><item><title>Headline 5 ',
    );
    await expect(readFeedInSlices(Buffer.from(late), { maxEntries: 10 })).rejects.toThrow(
      /DOCTYPE appears after the root element/,
    );
    const html = `<html><body>${"<p>x</p>".repeat(50_000)}</body></html>`;
    await expect(readFeedInSlices(Buffer.from(html), { maxEntries: 100 })).rejects.toThrow(
      /not a feed: the root element is <html>/,
    );
  });

  it("never holds the event loop for long while reading 50,000 entries", async () => {
    const doc = Buffer.from(bigRss(50_000));
    const lag = monitorEventLoopDelay({ resolution: 10 });
    lag.enable();
    const started = performance.now();
    const read = await readFeedInSlices(doc, { maxEntries: 50_000 });
    const tookMs = performance.now() - started;
    lag.disable();
    const maxMs = lag.max / 1e6;
    console.info(
      `readFeedInSlices: ${doc.length} bytes, ${read.entries.length} entries in ${tookMs.toFixed(0)} ms; ` +
        `event loop delay p99 ${(lag.percentile(99) / 1e6).toFixed(1)} ms, max ${maxMs.toFixed(1)} ms`,
    );
    expect(read.entries).toHaveLength(50_000);
    // ~10 ms slices; the margin is for a loaded 2-core machine running other test files (one
    // parseFeed of this document holds the loop for several seconds).
    expect(lag.percentile(99) / 1e6).toBeLessThan(200);
  });
});
