import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseFeed } from "./parseFeed";
import { CORPORA, corpusDir } from "./testing/corpora";

// The encoding samples in the corpora, read as bytes, through decode.ts's order: BOM, transport
// charset, XML declaration, UTF-8, with the two repairs for mislabelled bodies.

const present = corpusDir("miniflux") && corpusDir("rss-parser") && corpusDir("gofeed");
const read = (rel: string) => readFileSync(path.join(CORPORA, rel));
const mx = "miniflux/internal/reader";

describe.skipIf(!present)("corpus: encodings", () => {
  it.each([
    [`${mx}/encoding/testdata/iso-8859-1.xml`, "Café"],
    [`${mx}/encoding/testdata/windows-1252.xml`, "Euro €"],
    [`${mx}/encoding/testdata/windows-1252-incorrect-prolog.xml`, "Euro €"],
    [`${mx}/encoding/testdata/utf8-incorrect-prolog.xml`, "테스트 피드"],
    [`${mx}/encoding/testdata/invalid-prolog.xml`, "테스트 피드"],
    [`${mx}/encoding/testdata/koi8r.xml`, "Пример RSS ленты"],
    [`${mx}/xml/testdata/koi8r.xml`, "Пример RSS ленты"],
    ["gofeed/testdata/parser/universal/rss_feed_bom.xml", "Feed Title"],
  ])("%s → feed title %j", (file, title) => {
    expect(parseFeed(read(file)).feed.title).toBe(title);
  });

  it("windows-1251 and undeclared ISO-8859-1 entry titles", () => {
    const cyrillic = parseFeed(read(`${mx}/parser/testdata/encoding_WINDOWS-1251.xml`));
    expect(cyrillic.entries[0]?.title).toBe("Цитата #17703");
    const undeclared = parseFeed(read(`${mx}/parser/testdata/no_encoding_ISO-8859-1.xml`));
    expect(undeclared.entries[1]?.title).toMatch(/très complexe$/);
  });

  it("rss-parser's latin1 feed, with and without the Content-Type charset it was served with", () => {
    const bytes = read("rss-parser/test/input/encoding.rss");
    for (const contentType of [undefined, "application/rss+xml; charset=latin1"]) {
      const feed = parseFeed(bytes, { contentType });
      expect(feed.feed.title).toBe("Jornal de Notícias - Últimas Notícias");
      expect(feed.entries[0]?.title).toBe("Mãe de utente é a nova presidente da Raríssimas");
    }
  });
});
