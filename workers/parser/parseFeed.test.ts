import v8 from "node:v8";
import vm from "node:vm";
import { describe, expect, it } from "vitest";
import { readAtom } from "./atom";
import { FeedParseError, formatOf, parseFeed } from "./parseFeed";
import { readRss } from "./rss";
import { parseXml } from "./xmlTree";

const rss = (items: string, channel = "<title>T</title>") =>
  `<?xml version="1.0"?><rss version="2.0"><channel>${channel}${items}</channel></rss>`;

describe("parseFeed: formats", () => {
  it("reads RSS 2.0 items with guid as id and dates in UTC", () => {
    const feed = parseFeed(
      rss(`<item><title>A</title><link>http://ex.com/a?utm_source=x</link><guid isPermaLink="false">g-1</guid>
        <pubDate>Thu, 01 Jan 2004 19:48:21 EST</pubDate><description>Hello &lt;b&gt;world&lt;/b&gt;</description>
        <author>jo@ex.com (Jo)</author><category>News</category><category>World</category></item>`),
    );
    expect(feed.format).toBe("rss2");
    expect(feed.entries).toEqual([
      {
        guid: "g-1",
        id: "g-1",
        title: "A",
        link: "http://ex.com/a?utm_source=x",
        published: "2004-01-02T00:48:21Z",
        summary: "Hello world",
        author: "Jo",
        categories: ["News", "World"],
      },
    ]);
  });

  it("falls back to the canonical link, then title|published, for the id", () => {
    const feed = parseFeed(
      rss(`<item><title>A</title><link>HTTP://EX.com/a/?utm_medium=y#top</link></item>
           <item><title>B</title><pubDate>2004-01-01T00:00:00Z</pubDate></item>`),
    );
    expect(feed.entries.map((e) => e.id)).toEqual(["http://ex.com/a", "B|2004-01-01T00:00:00Z"]);
  });

  it("reads RSS 0.91 with its public DOCTYPE as rss09x", () => {
    const feed = parseFeed(
      `<?xml version="1.0"?><!DOCTYPE rss PUBLIC "-//Netscape Communications//DTD RSS 0.91//EN" "http://my.netscape.com/publish/formats/rss-0.91.dtd">
      <rss version="0.91"><channel><title>Old</title><link>http://ex.com/</link><item><title>I</title><link>http://ex.com/i</link></item></channel></rss>`,
    );
    expect(feed.format).toBe("rss09x");
    expect(feed.feed).toEqual({ title: "Old", link: "http://ex.com/" });
    expect(feed.entries[0]?.id).toBe("http://ex.com/i");
  });

  it("reads RSS 1.0 (RDF) with items beside the channel and dc:date", () => {
    const feed =
      parseFeed(`<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/">
      <channel rdf:about="http://ex.com/rss"><title>R</title><link>http://ex.com/</link></channel>
      <item rdf:about="http://ex.com/1"><title>One</title><link>http://ex.com/1</link><dc:date>2004-01-01T10:00:00+02:00</dc:date><dc:creator>Ann</dc:creator></item>
    </rdf:RDF>`);
    expect(feed.format).toBe("rss1");
    expect(feed.entries[0]).toMatchObject({
      title: "One",
      link: "http://ex.com/1",
      published: "2004-01-01T08:00:00Z",
      author: "Ann",
    });
  });

  it("reads Atom 1.0: id, alternate HTML link, text constructs, inherited author", () => {
    const feed =
      parseFeed(`<feed xmlns="http://www.w3.org/2005/Atom"><title type="html">&lt;b&gt;F&lt;/b&gt;</title>
      <id>urn:f</id><updated>2005-07-31T12:29:29Z</updated><author><name>Feed Author</name></author>
      <link rel="self" href="http://ex.com/feed"/><link href="http://ex.com/"/>
      <entry><id>tag:ex.com,2005:1</id><title type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml">X <b>bold</b></div></title>
        <link rel="alternate" type="audio/mpeg" href="http://ex.com/1.mp3"/><link rel="alternate" type="text/html" href="http://ex.com/1"/>
        <published>2005-07-31T12:29:29-04:00</published><updated>2005-08-01T00:00:00Z</updated>
        <content type="html">&lt;p&gt;Body&lt;/p&gt;</content><category term="tech"/></entry></feed>`);
    expect(feed.format).toBe("atom1");
    expect(feed.feed).toEqual({
      title: "F",
      link: "http://ex.com/",
      id: "urn:f",
      updated: "2005-07-31T12:29:29Z",
    });
    expect(feed.entries[0]).toEqual({
      atomId: "tag:ex.com,2005:1",
      id: "tag:ex.com,2005:1",
      title: "X bold",
      link: "http://ex.com/1",
      published: "2005-07-31T16:29:29Z",
      updated: "2005-08-01T00:00:00Z",
      summary: "Body",
      author: "Feed Author",
      categories: ["tech"],
    });
  });

  it("reads Atom 0.3 (modified, issued, escaped content)", () => {
    const feed =
      parseFeed(`<feed version="0.3" xmlns="http://purl.org/atom/ns#"><title>Old Atom</title>
      <link rel="alternate" type="text/html" href="http://ex.com/"/><modified>2003-12-13T18:30:02Z</modified>
      <entry><title>E</title><link rel="alternate" type="text/html" href="http://ex.com/e"/><id>urn:e</id>
      <issued>2003-12-13T08:29:29-04:00</issued><modified>2003-12-13T18:30:02Z</modified>
      <content type="text/html" mode="escaped">&lt;p&gt;Hi&lt;/p&gt;</content></entry></feed>`);
    expect(feed.format).toBe("atom03");
    expect(feed.feed.updated).toBe("2003-12-13T18:30:02Z");
    expect(feed.entries[0]).toMatchObject({
      id: "urn:e",
      link: "http://ex.com/e",
      published: "2003-12-13T12:29:29Z",
      updated: "2003-12-13T18:30:02Z",
      summary: "Hi",
    });
  });
});

describe("parseFeed: links", () => {
  it("resolves relative links against nested xml:base and the feed URL", () => {
    const feed = parseFeed(
      `<feed xmlns="http://www.w3.org/2005/Atom" xml:base="/blog/"><title>B</title><link href="./"/>
        <entry xml:base="2024/"><id>urn:1</id><title>1</title><link href="post.html"/></entry>
        <entry><id>urn:2</id><title>2</title><link xml:base="http://other.org/x/" href="../y"/></entry>
        <entry><id>urn:3</id><title>3</title><link href="/abs"/></entry></feed>`,
      { url: "https://ex.com/feeds/atom.xml" },
    );
    expect(feed.feed.link).toBe("https://ex.com/blog/");
    expect(feed.entries.map((e) => e.link)).toEqual([
      "https://ex.com/blog/2024/post.html",
      "http://other.org/y",
      "https://ex.com/abs",
    ]);
  });

  it("resolves RSS links against xml:base and the feed URL; keeps a relative one when nothing resolves it", () => {
    const items = `<item xml:base="http://ex.com/news/"><title>a</title><link>a.html</link></item>
      <item><title>b</title><link>/b.html</link></item>`;
    expect(
      parseFeed(rss(items), { url: "http://feeds.ex.com/rss" }).entries.map((e) => e.link),
    ).toEqual(["http://ex.com/news/a.html", "http://feeds.ex.com/b.html"]);
    expect(parseFeed(rss(items)).entries[1]?.link).toBe("/b.html");
  });

  it("uses a permalink guid when an item has no <link>", () => {
    const feed = parseFeed(rss(`<item><title>g</title><guid>http://ex.com/g</guid></item>`));
    expect(feed.entries[0]).toMatchObject({ link: "http://ex.com/g", id: "http://ex.com/g" });
  });
});

describe("parseFeed: text", () => {
  it("decodes HTML and numeric entities, also double-escaped inside CDATA", () => {
    const feed = parseFeed(
      rss(`<item><title>Caf&amp;eacute; &#8217;n&#x2019; <![CDATA[Fish &amp;amp; Chips &eacute;]]></title>
        <description><![CDATA[<p>Le&nbsp;caf&eacute;   est
        <em>ouvert</em></p>]]></description></item>`),
    );
    expect(feed.entries[0]?.title).toBe("Café ’n’ Fish & Chips é");
    expect(feed.entries[0]?.summary).toBe("Le café est ouvert");
  });

  it("strips HTML from a title, escaped or in CDATA", () => {
    const feed = parseFeed(
      rss(`<item><title><![CDATA[&lt;p&gt;Escaped&lt;/p&gt; and <b>naked</b>]]></title></item>
           <item><title>&lt;em&gt;Breaking:&lt;/em&gt; AT&amp;amp;T</title></item>`),
    );
    expect(feed.entries.map((e) => e.title)).toEqual(["Escaped and naked", "Breaking: AT&T"]);
  });

  it("keeps escaped markup that is not HTML as the literal text of a title", () => {
    // feedparser's rule (text.ts, titleText): only text that looks like HTML is HTML. Titles are
    // shown as text, never as markup, so the literal <script> is words on a page, not a script.
    const feed = parseFeed(
      rss(`<item><title>&lt;blink&gt; is back</title></item>
           <item><title>Closing &lt;/example&gt;</title></item>
           <item><title>&lt;script&gt;alert(1)&lt;/script&gt;Safe</title></item>`),
    );
    expect(feed.entries.map((e) => e.title)).toEqual([
      "<blink> is back",
      "Closing </example>",
      "<script>alert(1)</script>Safe",
    ]);
  });

  it("keeps a bare ampersand and a lone '<' that is not a tag", () => {
    const feed = parseFeed(rss("", "<title>Fish & Chips &amp; more &lt;3</title>"));
    expect(feed.feed.title).toBe("Fish & Chips & more <3");
  });

  it("omits an unparseable date instead of failing", () => {
    const feed = parseFeed(rss(`<item><title>x</title><pubDate>sometime soon</pubDate></item>`));
    expect(feed.entries[0]?.published).toBeUndefined();
  });
});

describe("parseFeed: not a feed", () => {
  it.each([
    ["empty", ""],
    ["plain text", "hello"],
    ["JSON", '{"version":"https://jsonfeed.org/version/1"}'],
    ["HTML", "<!doctype html><html><head><title>x</title></head><body></body></html>"],
    ["other XML", "<note><to>Tove</to></note>"],
    ["garbage before the prolog", 'garbage<?xml version="1.0"?><rss/>'],
  ])("%s → FeedParseError with code parse_error", (_, body) => {
    expect(() => parseFeed(body)).toThrowError(FeedParseError);
    try {
      parseFeed(body);
    } catch (err) {
      expect((err as FeedParseError).code).toBe("parse_error");
      expect((err as FeedParseError).message).toMatch(/^parser: /);
    }
  });
});

describe("parseFeed: link entities", () => {
  it("decodes numeric references in links but leaves &copy= in a query alone", () => {
    const feed = parseFeed(
      rss(`<item><title>n</title><link>http://ex.com/?a=1&#38;b=2&amp;copy=3</link></item>`),
    );
    expect(feed.entries[0]?.link).toBe("http://ex.com/?a=1&b=2&copy=3");
  });
});

describe("parseFeed: truncated bodies", () => {
  it("refuses a document cut off before its root closes (size cap, dropped connection)", () => {
    const whole = rss(`<item><title>a</title></item><item><title>b</title></item>`);
    expect(parseFeed(whole).entries).toHaveLength(2);
    for (const cut of [whole.length - 5, whole.length - 20, whole.indexOf("<title>b") + 9]) {
      expect(() => parseFeed(whole.slice(0, cut))).toThrowError(/truncated|not well-formed/);
    }
  });

  it("accepts a self-closed root and ignores junk after the root's end tag", () => {
    expect(parseFeed('<feed xmlns="http://www.w3.org/2005/Atom"/>').entries).toEqual([]);
    expect(parseFeed(`${rss("")}<script>track()</script>`).feed.title).toBe("T");
  });
});

describe("parseFeed: identity and old formats", () => {
  it("gives an entry with no guid, id, link or title a stable content hash as id", () => {
    const body = rss(`<item><description>Only a body</description></item>`);
    const [a] = parseFeed(body).entries;
    const [b] = parseFeed(body).entries;
    expect(a?.id).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(a?.id).toBe(b?.id);
  });

  it("reads Netscape's RDF-based RSS 0.90 as rss09x", () => {
    const feed =
      parseFeed(`<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://my.netscape.com/rdf/simple/0.9/">
      <channel><title>Mozilla Dot Org</title><link>http://www.mozilla.org</link></channel>
      <item><title>New Status Updates</title><link>http://www.mozilla.org/status/</link></item></rdf:RDF>`);
    expect(feed.format).toBe("rss09x");
    expect(feed.entries[0]).toMatchObject({
      title: "New Status Updates",
      id: "http://www.mozilla.org/status",
    });
  });
});

describe("parseFeed: pacing hints", () => {
  it("reads RSS <ttl> as minutes, ignoring nonsense", () => {
    const rss = (ttl: string) =>
      `<rss version="2.0"><channel><title>T</title><ttl>${ttl}</ttl><item><title>a</title></item></channel></rss>`;
    expect(parseFeed(rss("30")).feed.ttlMinutes).toBe(30);
    expect(parseFeed(rss("soon")).feed.ttlMinutes).toBeUndefined();
    expect(parseFeed(rss("-5")).feed.ttlMinutes).toBeUndefined();
  });
});

// Entries are read as they close (parseFeed) or from the whole tree (readFeedInSlices' slices);
// both must pick the same elements in the same order.
describe("parseFeed: entries read while parsing", () => {
  const wholeTree = (body: string) => {
    const root = parseXml(body);
    return formatOf(root).startsWith("atom") ? readAtom(root) : readRss(root);
  };

  it.each([
    [
      "self-closed items among others, in order",
      rss(`<item><title>A</title></item><item/><item><title>C</title></item><item />`),
    ],
    [
      "items of a second channel are not entries",
      `<rss version="2.0"><channel><title>T</title><item><title>A</title></item></channel><channel><item><title>X</title></item></channel></rss>`,
    ],
    [
      "RDF items beside the channel come after the channel's own",
      `<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/"><item><title>B</title></item><channel><title>T</title><item><title>A</title></item></channel></rdf:RDF>`,
    ],
    [
      "an Atom feed author written after the entries is still inherited",
      `<feed xmlns="http://www.w3.org/2005/Atom"><title>T</title><entry><id>urn:1</id><title>E</title></entry><entry><id>urn:2</id><author><name>Own</name></author></entry><author><name>Feed</name></author></feed>`,
    ],
  ])("%s", (_, body) => {
    const feed = parseFeed(body);
    expect(feed.entries.length).toBeGreaterThan(0);
    const { format: _format, ...rest } = feed;
    expect(rest).toEqual(wholeTree(body));
  });

  it("keeps the channel's fields wherever they sit among the items", () => {
    const feed = parseFeed(
      rss(`<item><title>A</title></item><link>http://ex.com/</link><ttl>5</ttl>`),
    );
    expect(feed.feed).toEqual({ title: "T", link: "http://ex.com/", ttlMinutes: 5 });
    expect(feed.entries.map((e) => e.title)).toEqual(["A"]);
  });
});

describe("parseFeed: memory", () => {
  it("keeps nothing of the document alive through the entries it returns", () => {
    v8.setFlagsFromString("--expose-gc");
    const gc = vm.runInNewContext("gc") as () => void;
    const doc = (n: number) =>
      rss(
        Array.from(
          { length: 1_000 },
          (_, i) =>
            `<item><guid>urn:feed-${n}:item-${i}</guid><title>Title number ${i}</title><enclosure>${"x".repeat(10_000)}</enclosure></item>`,
        ).join(""),
      );
    const kept: unknown[] = [];
    parseFeed(doc(9)); // warm-up: compiled code and caches are not the entries' doing
    gc();
    const before = process.memoryUsage().heapUsed;
    for (let n = 0; n < 3; n++) kept.push(parseFeed(doc(n)).entries); // 3 documents of 10 MB
    gc();
    const grown = process.memoryUsage().heapUsed - before;
    expect(kept).toHaveLength(3);
    // measured: 3,000 small entries hold under 1 MB; with the documents kept alive by their
    // guids it was 21 MB
    expect(grown).toBeLessThan(10_000_000);
  });
});
