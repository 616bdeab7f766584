import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { buildOpml, type OpmlExportEntry } from "./export";
import { parseOpml } from "./parse";
import { planImport } from "./plan";

const fixture = (name: string) =>
  readFileSync(path.join(import.meta.dirname, "testdata", name), "utf8");

const entries: OpmlExportEntry[] = [
  { title: "Top & more <today>", xmlUrl: "https://a.example/rss?x=1&y=2&amp=3" },
  {
    title: "প্রথম আলো — সর্বশেষ",
    xmlUrl: "https://www.prothomalo.com/feed/?lang=bn&section=সর্বশেষ",
    htmlUrl: "https://www.prothomalo.com/",
    folder: ["বাংলা", "জাতীয়"],
  },
  { title: "Quotes \"double\" and 'single'", xmlUrl: "https://b.example/feed", folder: ["News"] },
  { title: "Second in News", xmlUrl: "https://c.example/atom.xml", folder: ["News"] },
  { title: "Line\nbreak\tand  spaces", xmlUrl: "https://d.example/rss" },
];

describe("buildOpml", () => {
  it("writes OPML 2.0 grouped by folder, feeds before folders, folders by name", () => {
    const xml = buildOpml(entries, {
      title: "wirewatch sources",
      dateCreated: new Date("2026-12-02T08:00:00Z"),
    });
    expect(xml).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?>\n<opml version="2.0">/);
    expect(xml).toContain("<dateCreated>Wed, 02 Dec 2026 08:00:00 GMT</dateCreated>");
    expect(xml).toContain('xmlUrl="https://a.example/rss?x=1&amp;y=2&amp;amp=3"');
    expect(xml).toContain('text="Top &amp; more &lt;today&gt;"');
    // Bangla is written as it is, not as numeric references.
    expect(xml).toContain('<outline text="বাংলা" title="বাংলা">');
    const doc = parseOpml(xml);
    expect(doc.problems).toEqual([]);
    expect(doc.feeds.map((f) => [f.folder.join("/"), f.title])).toEqual([
      ["", "Top & more <today>"],
      ["", "Line break and spaces"],
      ["News", "Quotes \"double\" and 'single'"],
      ["News", "Second in News"],
      ["বাংলা/জাতীয়", "প্রথম আলো — সর্বশেষ"],
    ]);
  });

  it("round-trips: parse(build(x)) is x (labels on one line), htmlUrl included", () => {
    const back = parseOpml(buildOpml(entries)).feeds.map((f) => ({
      title: f.title,
      xmlUrl: f.xmlUrl,
      ...(f.htmlUrl ? { htmlUrl: f.htmlUrl } : {}),
      ...(f.folder.length ? { folder: f.folder } : {}),
    }));
    const expected = entries.map((e) => ({ ...e, title: e.title.replace(/\s+/g, " ") }));
    const byUrl = (a: { xmlUrl: string }, b: { xmlUrl: string }) =>
      a.xmlUrl.localeCompare(b.xmlUrl);
    expect(back.sort(byUrl)).toEqual(expected.sort(byUrl));
  });

  it("round-trips every reader's fixture: the same feeds, names, URLs and folders", () => {
    for (const name of [
      "feedly.opml",
      "inoreader.opml",
      "miniflux.opml",
      "newsblur.opml",
      "freshrss.opml",
    ]) {
      const first = planImport(parseOpml(fixture(name)), []).add;
      const rebuilt = buildOpml(
        first.map((s) => ({ title: s.name, xmlUrl: s.url, folder: s.folder })),
      );
      const second = planImport(parseOpml(rebuilt), []);
      expect(second.problems, name).toEqual([]);
      const key = (s: { name: string; url: string; folder: string[]; id: string }) =>
        [s.id, s.name, s.url, s.folder.join("/")].join(" | ");
      expect(second.add.map(key).sort(), name).toEqual(first.map(key).sort());
    }
  });

  it("drops characters XML 1.0 cannot hold, so one bad name cannot spoil the export", () => {
    const xml = buildOpml([
      { title: "Bell\u0007 and \uD800lone \uFFFE", xmlUrl: "https://e.example/rss?\u0001x" },
      { title: "Emoji 📰 stays", xmlUrl: "https://f.example/rss" },
    ]);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: looking for what XML 1.0 forbids
    expect(xml).not.toMatch(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE]/);
    expect(xml.isWellFormed()).toBe(true);
    expect(parseOpml(xml).feeds.map((f) => [f.title, f.xmlUrl])).toEqual([
      ["Bell and lone", "https://e.example/rss?x"],
      ["Emoji 📰 stays", "https://f.example/rss"],
    ]);
  });

  it("an empty list is a valid, empty OPML document", () => {
    expect(parseOpml(buildOpml([]))).toMatchObject({ readable: true, feeds: [], problems: [] });
  });
});
