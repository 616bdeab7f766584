import { XMLParser } from "fast-xml-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { canonicalId, canonicalizeUrl } from "@/lib/canonical";
import { urlKey } from "@/lib/dedup";
import { Newsroom, type SimStory } from "./newsroom";
import { DEFAULT_OUTLETS } from "./outlets";
import { Random } from "./random";
import { editHeadline, REPUBLISH_KINDS, type RepublishKind, variantLink } from "./republish";
import { Scheduler } from "./scheduler";
import { type Simulator, startSimulator } from "./server";
import { truth } from "./truth";

const T0 = Date.parse("2026-06-12T09:00:00Z");

function run(seed: number, hours: number, linkBase?: (id: string) => string) {
  const scheduler = new Scheduler(T0);
  const room = new Newsroom({
    random: new Random(seed),
    scheduler,
    outlets: DEFAULT_OUTLETS,
    baseUrl: "http://127.0.0.1:4100",
    ...(linkBase ? { linkBase } : {}),
    ratePerMinute: 8,
    burstEveryMs: 15 * 60_000,
    pageLeadMs: 28,
    pageLeadShare: 0.25,
    isQuiet: () => false,
  });
  scheduler.runUntil(T0 + hours * 3_600_000);
  const all = DEFAULT_OUTLETS.flatMap((o) => room.stories(o.id));
  const original = (s: SimStory) => {
    if (!s.copyOf) throw new Error(`${s.outlet}/${s.number} is an original`);
    return room.stories(s.copyOf.outlet)[s.copyOf.number - 1] as SimStory;
  };
  return { room, scheduler, all, original };
}

describe("republishing as real outlets do", () => {
  const { room, scheduler, all, original } = run(7, 2);
  const of = (how: string) => all.filter((s) => s.how === how);

  it("makes every kind, in proportions a cascade can be measured on", () => {
    const counts = Object.fromEntries(REPUBLISH_KINDS.map((k) => [k, of(k).length])) as Record<
      RepublishKind,
      number
    >;
    // Host variants need host names (the next block); the default links are on an IP address.
    for (const kind of REPUBLISH_KINDS.filter((k) => k !== "host")) {
      expect(counts[kind], kind).toBeGreaterThan(20);
    }
    // Originals stay about half of what is published, as before the copies had kinds.
    expect(counts.original / all.length).toBeGreaterThan(0.45);
    expect(counts.original / all.length).toBeLessThan(0.65);
    // Verbatim and same-page copies outnumber the rewrites a near stage may miss.
    const settledByKeys = counts["wire-copy"] + counts.tracking + counts.amp + counts.host;
    expect(settledByKeys).toBeGreaterThan(counts["rewrite-en"] + counts["rewrite-bn"]);
  });

  it("wire copy: byte-identical title and summary, the copying outlet's own link and guid", () => {
    for (const copy of of("wire-copy")) {
      const wire = original(copy);
      expect(wire.outlet).toBe("wire");
      expect(copy.outlet).not.toBe("wire");
      expect(copy.link).not.toBe(wire.link);
      expect(copy.guid).not.toBe(wire.guid);
      expect(copy.storyKey).toBe(wire.storyKey);
      // Copied as it stood then: an original edited after the copy has moved on.
      if (wire.updatedAt <= copy.publishedAt) {
        expect(copy.title).toBe(wire.title);
        expect(copy.summary).toBe(wire.summary);
      }
    }
  });

  it("aggregator listings link the original's page by another address, under their own guid", () => {
    const listed = [...of("tracking"), ...of("amp"), ...of("host")];
    for (const item of listed) {
      const source = original(item);
      expect(item.outlet).toBe("digest");
      expect(item.link).not.toBe(source.link);
      expect(item.guid).not.toBe(source.guid);
      expect(urlKey(item.link), item.link).toBe(urlKey(source.link));
      if (source.updatedAt <= item.publishedAt) expect(item.title).toBe(source.title);
    }
    for (const item of of("tracking")) {
      // Tracking parameters only: the writer's own canonical form already folds them.
      expect(canonicalizeUrl(item.link)).toBe(canonicalizeUrl(original(item).link));
    }
    for (const item of of("amp")) expect(item.link).toMatch(/\/amp\/|[?&]amp=1|\/\/amp\./);
    // The default links are on an IP address: no host variant can exist there, so none is made.
    expect(of("host")).toHaveLength(0);
    expect(of("tracking").some((s) => s.link.includes("fbclid="))).toBe(true);
    expect(of("tracking").some((s) => s.link.includes("utm_source="))).toBe(true);
  });

  it("headline edits change one figure or one word and keep the summary", () => {
    for (const copy of of("headline-edit")) {
      const source = original(copy);
      if (source.updatedAt > copy.publishedAt) continue;
      expect(copy.outlet).not.toBe(source.outlet);
      expect(copy.title).not.toBe(source.title);
      expect(copy.summary).toBe(source.summary);
      const a = source.title.split(/\s+/);
      const b = copy.title.split(/\s+/);
      let same = 0;
      while (same < Math.min(a.length, b.length) && a[same] === b[same]) same++;
      let tail = 0;
      while (tail < Math.min(a.length, b.length) - same && a.at(-1 - tail) === b.at(-1 - tail)) {
        tail++;
      }
      // What lies between the common start and end: one word, or two where a Bangla swap is
      // two words ("আটকে আছে") or a tag is added.
      const changed = Math.max(a.length, b.length) - same - tail;
      expect(changed, `${source.title} → ${copy.title}`).toBeGreaterThan(0);
      expect(changed, `${source.title} → ${copy.title}`).toBeLessThanOrEqual(2);
    }
  });

  it("rewrites word headline and summary anew, in the story's own language", () => {
    for (const kind of ["rewrite-en", "rewrite-bn"] as const) {
      for (const copy of of(kind)) {
        const source = original(copy);
        expect(copy.language).toBe(kind === "rewrite-bn" ? "bn" : "en");
        expect(source.language).toBe(copy.language);
        expect(copy.summary).not.toBe(source.summary);
        if (source.updatedAt <= copy.publishedAt) expect(copy.facts).toEqual(source.facts);
      }
    }
    expect(of("rewrite-bn").every((s) => /[\u0980-\u09FF]/.test(s.title))).toBe(true);
  });

  it("the truth lists each source's rows, twin feeds of one outlet as two items of one story", () => {
    const t = truth(room, DEFAULT_OUTLETS, scheduler.now);
    const harbour = t.items.filter((i) => i.outlet === "harbour");
    expect(new Set(harbour.map((i) => i.sourceId))).toEqual(
      new Set(["harbour-rss", "harbour-atom"]),
    );
    expect(harbour.length).toBe(2 * room.stories("harbour").length);
    expect(t.items.filter((i) => i.sourceId === "padma-rdf").every((i) => i.guid === null)).toBe(
      true,
    );
    // Nothing under the wire's page: its observations are the stream's rows.
    expect(t.items.some((i) => i.sourceId === "wire-page")).toBe(false);
    expect(t.counts.items).toBe(t.items.length);
    expect(t.counts.sharedStories).toBeGreaterThan(300);
    const kinds = REPUBLISH_KINDS.map((k) => t.counts[k] ?? 0);
    expect(kinds.reduce((a, b) => a + b, 0)).toBe(t.items.length);
  });

  it("the same seed makes the same news, another seed other news", () => {
    const again = run(7, 2);
    const key = (s: SimStory) => `${s.outlet} ${s.guid} ${s.link} ${s.how} ${s.title}`;
    expect(again.all.map(key)).toEqual(all.map(key));
    expect(run(8, 2).all.map(key)).not.toEqual(all.map(key));
  });
});

describe("outlets under their own host names", () => {
  const { all, original } = run(11, 2, (id) => `https://www.${id}.example`);

  it("re-visits also use amp., m. and bare hosts, all on the original's URL key", () => {
    const hosts = all.filter((s) => s.how === "host");
    expect(hosts.length).toBeGreaterThan(5);
    expect(hosts.some((s) => new URL(s.link).hostname.startsWith("m."))).toBe(true);
    expect(hosts.some((s) => !new URL(s.link).hostname.startsWith("www."))).toBe(true);
    const amp = all.filter((s) => s.how === "amp");
    expect(amp.some((s) => new URL(s.link).hostname.startsWith("amp."))).toBe(true);
    for (const s of [...hosts, ...amp]) expect(urlKey(s.link)).toBe(urlKey(original(s).link));
    for (const s of all.filter((x) => x.how === "original")) {
      expect(s.link).toMatch(/^https:\/\/www\.[a-z]+\.example\/o\/[a-z]+\/\d+$/);
    }
  });
});

describe("editHeadline and variantLink", () => {
  it("updates a Bengali figure in Bengali digits, decimals by a tenth", () => {
    const r = new Random(1);
    for (let i = 0; i < 50; i++) {
      const out = editHeadline("ডিএসইএক্স সূচক ২.৫ শতাংশ বেড়েছে", "bn", r);
      expect(out).not.toBe("ডিএসইএক্স সূচক ২.৫ শতাংশ বেড়েছে");
      expect(out).not.toMatch(/[0-9]/);
      expect(out).toMatch(/^ডিএসইএক্স সূচক (২\.[৬৭] শতাংশ বেড়েছে|২\.৫ শতাংশ বাড়ল)$/);
    }
  });

  it("never splits a Bangla word: an inflected form is not a swap target", () => {
    const r = new Random(2);
    for (let i = 0; i < 50; i++) {
      expect(editHeadline("মুনাফা প্রকাশের পর জিপির শেয়ার চাঙা", "bn", r)).toBe(
        "মুনাফা প্রকাশের পর জিপির শেয়ার চাঙা (হালনাগাদ)",
      );
    }
  });

  it("always changes the headline, even with no figure and no known word", () => {
    expect(editHeadline("Quiet day", "en", new Random(3))).toBe("UPDATE 1-Quiet day");
    expect(editHeadline("", "en", new Random(3))).not.toBe("");
  });

  it("a link on an IP address never gets a host variant; a named host may", () => {
    const r = new Random(4);
    for (let i = 0; i < 100; i++) {
      const out = variantLink("http://127.0.0.1:4100/o/wire/3", "host", r);
      expect(out.kind).toBe("amp");
      expect(new URL(out.link).hostname).toBe("127.0.0.1");
      expect(urlKey(out.link)).toBe(urlKey("http://127.0.0.1:4100/o/wire/3"));
    }
    const named = variantLink("https://www.wire.example/o/wire/3", "host", r);
    expect(named.kind).toBe("host");
    expect(new URL(named.link).hostname).not.toBe("www.wire.example");
    expect(() => variantLink("not a url", "tracking", r)).toThrow(TypeError);
  });
});

describe("the truth over HTTP", () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ seed: 13, manual: true, clock: () => T0 });
    sim.control.advance(20 * 60_000);
  });
  afterAll(() => sim.stop());

  it("GET /_control/truth answers what control.truth() does", async () => {
    const res = await fetch(`${sim.url}/_control/truth`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(sim.control.truth());
    expect((await fetch(`${sim.url}/_control/truth`, { method: "POST" })).status).toBe(404);
  });

  it("every item a feed serves is in the truth under the identity the writer keys it by", async () => {
    const t = sim.control.truth();
    const known = new Set(
      t.items.map((i) => `${i.sourceId} ${canonicalId({ guid: i.guid, link: i.link })}`),
    );
    const parser = new XMLParser({
      ignoreAttributes: false,
      isArray: (n) => ["item", "entry"].includes(n),
    });
    let checked = 0;
    for (const source of sim.sources().filter((s) => s.kind === "feed")) {
      const doc = parser.parse(await (await fetch(source.url)).text());
      const rows: { guid?: string; link?: string }[] = doc.rss
        ? doc.rss.channel.item.map((i: { guid: { "#text": string }; link: string }) => ({
            guid: i.guid["#text"],
            link: i.link,
          }))
        : doc.feed
          ? doc.feed.entry.map((e: { id: string; link: { "@_href": string } }) => ({
              guid: e.id,
              link: e.link["@_href"],
            }))
          : doc["rdf:RDF"].item.map((i: { link: string }) => ({ link: i.link }));
      for (const row of rows) {
        expect(known.has(`${source.id} ${canonicalId(row)}`), `${source.id} ${row.link}`).toBe(
          true,
        );
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(50);
    const digest = t.items.filter((i) => i.sourceId === "digest-rss");
    expect(digest.length).toBeGreaterThan(0);
    // An aggregator's link keeps its own tracking parameters; the feed adds none on top.
    for (const i of digest)
      expect(i.link.match(/utm_source=/g)?.length ?? 0).toBeLessThanOrEqual(1);
  });
});
