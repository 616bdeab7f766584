import { XMLParser, XMLValidator } from "fast-xml-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Simulator, startSimulator } from "./server";

let sim: Simulator;
const feed = (id: string) => {
  const source = sim.sources().find((s) => s.id === id);
  if (!source) throw new Error(`no source ${id}`);
  return source.url;
};
const parse = (xml: string) =>
  new XMLParser({
    ignoreAttributes: false,
    isArray: (name) => ["item", "entry"].includes(name),
  }).parse(xml);

beforeAll(async () => {
  sim = await startSimulator({ seed: 11, manual: true });
});
afterAll(() => sim.stop());

describe("feeds", () => {
  it("lists a feed per outlet and format, the stream with backfill and the wire's page", () => {
    const sources = sim.sources();
    expect(sources.map((s) => `${s.kind}:${s.id}`)).toEqual([
      "stream:wire",
      "page:wire-page",
      "feed:meridian-rss",
      "feed:harbour-rss",
      "feed:harbour-atom",
      "feed:ledger-rss",
      "feed:padma-rss",
      "feed:padma-rdf",
      "feed:digest-rss",
      "story-api:story-desk",
    ]);
    for (const s of sources) {
      expect(s.allowPrivate).toBe(true);
      expect(s.url.startsWith(sim.url)).toBe(true);
    }
    expect(sources[0]?.backfillUrl).toBe(`${sim.url}/s/wire/history`);
  });

  it("serves well-formed RSS 2.0 with items carrying guid, link, category and pubDate", async () => {
    const res = await fetch(feed("meridian-rss"));
    expect(res.headers.get("content-type")).toBe("application/rss+xml; charset=utf-8");
    const xml = await res.text();
    expect(XMLValidator.validate(xml)).toBe(true);
    const { rss } = parse(xml);
    expect(rss["@_version"]).toBe("2.0");
    const items = rss.channel.item;
    expect(items.length).toBeGreaterThan(5);
    expect(items.length).toBeLessThanOrEqual(30);
    for (const item of items) {
      expect(item.title).toEqual(expect.any(String));
      expect(item.link).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/o\/meridian\/\d+\?utm_source=rss$/);
      expect(item.guid["#text"]).toMatch(/^tag:meridian\.sim,2026:story-\d+$/);
      expect(Number.isNaN(Date.parse(item.pubDate))).toBe(false);
      expect(item.category).toBeDefined();
    }
  });

  it("serves well-formed RSS 1.0 (RDF) with a Seq matching the items", async () => {
    const res = await fetch(feed("padma-rdf"));
    expect(res.headers.get("content-type")).toBe("application/rdf+xml; charset=utf-8");
    const xml = await res.text();
    expect(XMLValidator.validate(xml)).toBe(true);
    const rdf = parse(xml)["rdf:RDF"];
    const items = rdf.item;
    const seq = rdf.channel.items["rdf:Seq"]["rdf:li"];
    expect(items.length).toBeGreaterThan(5);
    expect(seq.map((li: Record<string, string>) => li["@_rdf:resource"])).toEqual(
      items.map((i: Record<string, string>) => i["@_rdf:about"]),
    );
    for (const item of items) {
      expect(item["dc:identifier"]).toMatch(/^tag:padma\.sim/);
      expect(item["dc:language"]).toBe("bn");
    }
  });

  it("serves well-formed Atom with ids, alternate links and instrument categories", async () => {
    const res = await fetch(feed("harbour-atom"));
    expect(res.headers.get("content-type")).toBe("application/atom+xml; charset=utf-8");
    const xml = await res.text();
    expect(XMLValidator.validate(xml)).toBe(true);
    const { feed: atom } = parse(xml);
    expect(atom["@_xmlns"]).toBe("http://www.w3.org/2005/Atom");
    expect(atom.entry.length).toBeGreaterThan(5);
    for (const entry of atom.entry) {
      expect(entry.id).toMatch(/^tag:harbour\.sim/);
      expect(entry.link["@_href"]).toContain("/o/harbour/");
      expect(Number.isNaN(Date.parse(entry.updated))).toBe(false);
    }
    expect(xml).toMatch(/<category scheme="urn:wirewatch:instrument" term="[A-Z.]+"\/>/);
  });

  it("writes Bangla as valid UTF-8", async () => {
    for (const id of ["ledger-rss", "padma-rdf"]) {
      const res = await fetch(feed(id));
      const bytes = new Uint8Array(await res.arrayBuffer());
      const text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
      expect(text.startsWith('<?xml version="1.0" encoding="UTF-8"?>')).toBe(true);
      // Bengali script (U+0980–U+09FF) in titles, digits included.
      expect(text).toMatch(/<title>[^<]*[\u0980-\u09FF]{3,}[^<]*<\/title>/);
      expect(text.isWellFormed()).toBe(true);
    }
  });

  it("answers conditional requests with 304 until the feed changes", async () => {
    const url = feed("ledger-rss");
    const first = await fetch(url);
    const etag = first.headers.get("etag");
    const lastModified = first.headers.get("last-modified");
    const body = await first.text();
    expect(etag).toMatch(/^"[\w-]+"$/);
    expect(Number.isNaN(Date.parse(lastModified ?? ""))).toBe(false);

    const byEtag = await fetch(url, { headers: { "if-none-match": etag ?? "" } });
    expect(byEtag.status).toBe(304);
    expect(await byEtag.text()).toBe("");
    const byDate = await fetch(url, { headers: { "if-modified-since": lastModified ?? "" } });
    expect(byDate.status).toBe(304);
    const again = await fetch(url);
    expect(await again.text()).toBe(body); // unchanged content, unchanged bytes

    sim.control.advance(2_000);
    sim.control.publish({ outlet: "ledger", title: "নতুন শিরোনাম", language: "bn" });
    const changed = await fetch(url, {
      headers: { "if-none-match": etag ?? "", "if-modified-since": lastModified ?? "" },
    });
    expect(changed.status).toBe(200);
    expect(changed.headers.get("etag")).not.toBe(etag);
    expect(await changed.text()).toContain("<title>নতুন শিরোনাম</title>");
    const byOldDate = await fetch(url, { headers: { "if-modified-since": lastModified ?? "" } });
    expect(byOldDate.status).toBe(200);
  });

  it("renders each outlet's page with titles and links only", async () => {
    const html = await (await fetch(feed("wire-page"))).text();
    expect(html).toMatch(/<a class="headline" href="http:\/\/127\.0\.0\.1:\d+\/o\/wire\/\d+">/);
    expect(html).not.toMatch(/markets|breaking|GP\.DH|EURUSD/);
    const ledger = await fetch(`${sim.url}/s/ledger-page/`);
    expect(ledger.status).toBe(200);
    expect(await ledger.text()).toContain('<html lang="bn">');
  });

  it("allows everything but the control API in robots.txt", async () => {
    const robots = await fetch(`${sim.url}/robots.txt`);
    expect(robots.status).toBe(200);
    expect(await robots.text()).toBe("User-agent: *\nDisallow: /_control/\n");
  });

  it("serves every linked story", async () => {
    const { rss } = parse(await (await fetch(feed("meridian-rss"))).text());
    const res = await fetch(rss.channel.item[0].link);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("<h1>");
  });
});
