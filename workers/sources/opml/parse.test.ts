import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseOpml } from "./parse";

const fixture = (name: string) =>
  readFileSync(path.join(import.meta.dirname, "testdata", name), "utf8");

/** line, folder path, name, xmlUrl: what an import needs of each feed. */
const feedsOf = (name: string) =>
  parseOpml(fixture(name)).feeds.map((f) => [
    f.line,
    f.folder.join("/"),
    f.title ?? f.text,
    f.xmlUrl,
  ]);

describe("parseOpml reads each reader's export", () => {
  it("Feedly (OPML 1.0, folders with text and title, one feed in two folders)", () => {
    const doc = parseOpml(fixture("feedly.opml"));
    expect(doc).toMatchObject({
      readable: true,
      version: "1.0",
      title: "Subscriptions in feedly Cloud",
      problems: [],
    });
    expect(feedsOf("feedly.opml")).toEqual([
      [9, "Tech", "Ars Technica - All content", "https://feeds.arstechnica.com/arstechnica/index"],
      [10, "Tech", "The Verge - All Posts", "https://www.theverge.com/rss/index.xml"],
      [
        13,
        "News",
        "Reuters: Top News & Analysis",
        "https://news.example-wire.com/rss?section=top&format=xml",
      ],
      [14, "News", "The Verge - All Posts", "https://www.theverge.com/rss/index.xml"],
      [17, "বাংলা", "প্রথম আলো", "https://www.prothomalo.com/feed/"],
    ]);
    expect(doc.feeds[0]).toMatchObject({ type: "rss", htmlUrl: "https://arstechnica.com" });
  });

  it("Inoreader (OPML 1.0, a feed outside any folder)", () => {
    expect(parseOpml(fixture("inoreader.opml")).title).toMatch(/from Inoreader/);
    expect(feedsOf("inoreader.opml")).toEqual([
      [8, "World", "BBC News - World", "https://feeds.bbci.co.uk/news/world/rss.xml"],
      [
        9,
        "World",
        "Al Jazeera – Breaking News, World News and Video from Al Jazeera",
        "https://www.aljazeera.com/xml/rss/all.xml",
      ],
      [12, "Bangladesh", "বিবিসি বাংলা", "https://feeds.bbci.co.uk/bengali/rss.xml"],
      [13, "Bangladesh", "The Daily Star", "https://www.thedailystar.net/frontpage/rss.xml"],
      [15, "", "Hacker News", "https://news.ycombinator.com/rss"],
    ]);
  });

  it("Miniflux (OPML 2.0 from Go's encoder: explicit end tags, &#39; and &#34;)", () => {
    const doc = parseOpml(fixture("miniflux.opml"));
    expect(doc).toMatchObject({ version: "2.0", title: "Miniflux", problems: [] });
    expect(feedsOf("miniflux.opml")).toEqual([
      [9, "All", "LWN.net", "https://lwn.net/headlines/rss"],
      [10, "All", "Julia Evans' blog", "https://jvns.ca/atom.xml"],
      [13, "Go & Rust", "The Go Blog", "https://go.dev/blog/feed.atom"],
      [
        14,
        "Go & Rust",
        '"This Week in Rust"',
        "https://this-week-in-rust.org/atom.xml?utm_source=miniflux&utm_medium=rss",
      ],
    ]);
  });

  it("NewsBlur (OPML 1.1 on one line, nested folders, Bangla as numeric references)", () => {
    const doc = parseOpml(fixture("newsblur.opml"));
    expect(doc).toMatchObject({ version: "1.1", title: "NewsBlur Feeds", problems: [] });
    expect(feedsOf("newsblur.opml")).toEqual([
      [1, "", "Daring Fireball", "https://daringfireball.net/feeds/main"],
      [1, "Science", "Quanta Magazine", "https://www.quantamagazine.org/feed/"],
      [1, "Science/Space", "NASA Breaking News", "https://www.nasa.gov/rss/dyn/breaking_news.rss"],
      [1, "বাংলা", "কালের কণ্ঠ", "https://www.kalerkantho.com/rss.xml"],
    ]);
  });

  it("FreshRSS (OPML 2.0 with its frss: namespace; the scraped page is kept for the plan to refuse)", () => {
    const doc = parseOpml(fixture("freshrss.opml"));
    expect(doc).toMatchObject({ version: "2.0", title: "FreshRSS", problems: [] });
    expect(feedsOf("freshrss.opml")).toEqual([
      [
        9,
        "Uncategorized",
        "FreshRSS releases",
        "https://github.com/FreshRSS/FreshRSS/releases.atom",
      ],
      [12, "Local news", "Dhaka Tribune", "https://www.dhakatribune.com/feed"],
      [13, "Local news", "City council notices", "https://council.example.org/notices"],
    ]);
    expect(doc.feeds[2]?.type).toBe("HTML+XPath");
  });

  it("OPML 2.0's category attribute, comma-separated and slash-delimited", () => {
    const doc = parseOpml(fixture("spec2-categories.opml"));
    expect(doc.feeds.map((f) => f.categories)).toEqual([["Tech/News", "business"], ["Blogs"]]);
  });
});

describe("parseOpml reports problems by line", () => {
  it("malformed XML: the line where reading failed, nothing read", () => {
    const doc = parseOpml(fixture("malformed.opml"));
    expect(doc.readable).toBe(false);
    expect(doc.feeds).toEqual([]);
    expect(doc.problems).toEqual([
      {
        line: 12,
        code: "malformed_xml",
        severity: "error",
        message: expect.stringMatching(/Expected closing tag 'outline' \(opened in line 7/),
      },
    ]);
  });

  it("a file that ends early, at its last line, naming what is still open", () => {
    const [p] = parseOpml('<opml version="2.0">\n<body>\n<outline text="x">\n').problems;
    expect(p).toMatchObject({ line: 4, code: "malformed_xml" });
    expect(p?.message).toContain("<opml>, <body>, <outline> still open");
  });

  it.each([
    ["an unquoted attribute", "<opml>\n<body>\n  <outline xmlUrl=http://a/>\n</body></opml>", 3],
    ["a repeated attribute", '<opml><body>\n\n<outline xmlUrl="a" xmlUrl="b"/></body></opml>', 3],
    ["text, not XML", "\n\nSubscriptions:\nhttps://a.example/rss\n", 3],
    ["an empty file", "", 1],
  ])("%s", (_what, text, line) => {
    const doc = parseOpml(text);
    expect(doc.readable).toBe(false);
    expect(doc.problems).toMatchObject([{ line, code: "malformed_xml", severity: "error" }]);
  });

  it("refuses entity declarations before parsing, at the first <!ENTITY", () => {
    const doc = parseOpml(fixture("entities.opml"));
    expect(doc).toMatchObject({ readable: false, feeds: [] });
    expect(doc.problems).toMatchObject([{ line: 3, code: "entity_declaration" }]);
  });

  it("refuses a billion-laughs file without expanding it", () => {
    const lol = Array.from(
      { length: 9 },
      (_, i) => `<!ENTITY l${i + 1} "${`&l${i};`.repeat(10)}">`,
    ).join("\n");
    const text = `<?xml version="1.0"?>\n<!DOCTYPE opml [\n<!ENTITY l0 "lol">\n${lol}\n]>\n<opml><body><outline text="&l9;" xmlUrl="https://a.example/"/></body></opml>`;
    const started = performance.now();
    expect(parseOpml(text).problems).toMatchObject([{ line: 3, code: "entity_declaration" }]);
    expect(performance.now() - started).toBeLessThan(200);
  });

  it("refuses external and parameter entities, and any internal subset", () => {
    for (const subset of [
      '<!ENTITY xxe SYSTEM "file:///etc/passwd">',
      '<!ENTITY % remote SYSTEM "http://169.254.169.254/dtd"> %remote;',
      "",
    ]) {
      const doc = parseOpml(
        `<?xml version="1.0"?>\n<!DOCTYPE opml [${subset}]>\n<opml><body><outline text="&xxe;" xmlUrl="https://a.example/"/></body></opml>`,
      );
      expect(doc, subset).toMatchObject({ readable: false, feeds: [] });
      expect(doc.problems, subset).toMatchObject([{ line: 2, code: "entity_declaration" }]);
    }
  });

  it("a DOCTYPE naming an external DTD is never fetched; an undeclared reference stays text", () => {
    const doc = parseOpml(
      '<!DOCTYPE opml SYSTEM "file:///etc/passwd">\n<opml><body><outline text="&xxe;" xmlUrl="https://a.example/"/></body></opml>',
    );
    expect(doc.problems).toEqual([]);
    expect(doc.feeds[0]?.text).toBe("&xxe;");
  });

  it("refuses a DOCTYPE inside the document", () => {
    const doc = parseOpml('<opml>\n<body>\n<!DOCTYPE x [<!ENTITY a "b">]>\n</body></opml>');
    expect(doc.problems).toMatchObject([{ line: 3, code: "entity_declaration" }]);
  });

  it("a DOCTYPE without declarations is harmless and read past", () => {
    const doc = parseOpml(
      '<?xml version="1.0"?>\n<!DOCTYPE opml>\n<opml><body><outline xmlUrl="https://a.example/"/></body></opml>',
    );
    expect(doc.problems).toEqual([]);
    expect(doc.feeds).toHaveLength(1);
  });

  it("not OPML: an RSS feed given by mistake, or no <body>", () => {
    expect(
      parseOpml('<?xml version="1.0"?>\n<rss version="2.0"><channel/></rss>').problems,
    ).toMatchObject([
      { line: 2, code: "not_opml", message: "the root element is <rss>, not <opml>" },
    ]);
    expect(parseOpml("<opml>\n  <head/>\n</opml>").problems).toMatchObject([
      { line: 1, code: "not_opml", message: "<opml> has no <body>" },
    ]);
  });

  it("outlines nested past the limit, with the line where they pass it", () => {
    const depth = 120;
    const text = `<opml><body>\n${'<outline text="f">\n'.repeat(depth)}${"</outline>".repeat(depth)}</body></opml>`;
    const doc = parseOpml(text);
    expect(doc.readable).toBe(false);
    // <opml> and <body> are levels 1 and 2 on line 1; level 101 is the 99th outline.
    expect(doc.problems).toMatchObject([{ line: 100, code: "too_deep" }]);
  });

  it("an outline that is neither feed nor folder, and one with an empty xmlUrl", () => {
    const doc = parseOpml(
      '<opml><body>\n<outline text="A heading"/>\n<outline text="x" xmlUrl=" "/>\n<outline text="Folder"><outline text="f" xmlUrl="https://a.example/"/></outline>\n</body></opml>',
    );
    expect(doc.problems).toMatchObject([
      {
        line: 2,
        code: "not_a_feed",
        message: expect.stringContaining('"A heading" has no xmlUrl'),
      },
      { line: 3, code: "not_a_feed", message: expect.stringContaining("empty xmlUrl") },
    ]);
    expect(doc.feeds).toMatchObject([{ line: 4, folder: ["Folder"] }]);
  });

  it("counts lines of CR LF files as their lines, and reads attribute names in any case", () => {
    const doc = parseOpml(
      '\uFEFF<opml>\r\n<body>\r\n\r\n<outline TEXT="a" XMLURL="https://a.example/" HtmlUrl="https://a.example/site"/>\r\n</body></opml>',
    );
    expect(doc.feeds).toMatchObject([
      { line: 4, text: "a", xmlUrl: "https://a.example/", htmlUrl: "https://a.example/site" },
    ]);
  });

  it("decodes entities once: &amp;amp; stays &amp;, a bare & in a URL stays &", () => {
    const doc = parseOpml(
      '<opml><body><outline text="A &amp;amp; B&nbsp;C" xmlUrl="https://a.example/?x=1&y=2&amp;z=3"/></body></opml>',
    );
    expect(doc.feeds[0]).toMatchObject({
      text: "A &amp; B C",
      xmlUrl: "https://a.example/?x=1&y=2&z=3",
    });
  });
});
