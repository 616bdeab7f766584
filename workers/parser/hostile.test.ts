import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FeedParseError, parseFeed } from "./parseFeed";
import { parseXml, textOf } from "./xmlTree";

// RELIABILITY.md, "Hostile XML": each attack is refused or inert in < 100 ms with < 50 MB memory
// growth and no outbound request; 10k-deep nesting is a clean error; 100k+ `&amp;` parse.
const MAX_MS = 100;
const MAX_GROWTH = 50 * 1024 * 1024;

let server: Server;
let requests = 0;
let origin = "";

beforeAll(async () => {
  server = createServer((_, res) => {
    requests++;
    res.end('<!ENTITY leak "pwned">');
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  parseFeed("<rss><channel><title>warm-up</title></channel></rss>");
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function measure(run: () => unknown): { ms: number; heap: number; rss: number; error?: unknown } {
  const before = process.memoryUsage();
  const start = performance.now();
  let error: unknown;
  try {
    run();
  } catch (err) {
    error = err;
  }
  const ms = performance.now() - start;
  const after = process.memoryUsage();
  return { ms, heap: after.heapUsed - before.heapUsed, rss: after.rss - before.rss, error };
}

const laughs = (() => {
  const defs = ['<!ENTITY lol "lol">'];
  for (let i = 1; i <= 9; i++) {
    const prev = i === 1 ? "lol" : `lol${i - 1}`;
    defs.push(`<!ENTITY lol${i} "${`&${prev};`.repeat(10)}">`);
  }
  return `<?xml version="1.0"?><!DOCTYPE rss [${defs.join("")}]><rss version="2.0"><channel><title>&lol9;</title></channel></rss>`;
})();

const attacks: Record<string, () => string> = {
  "billion laughs": () => laughs,
  "quadratic blowup": () =>
    `<?xml version="1.0"?><!DOCTYPE rss [<!ENTITY a "${"x".repeat(100_000)}">]><rss><channel><title>${"&a;".repeat(20_000)}</title></channel></rss>`,
  "XXE file": () =>
    `<?xml version="1.0"?><!DOCTYPE rss [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><rss><channel><title>&xxe;</title></channel></rss>`,
  "XXE loopback http": () =>
    `<?xml version="1.0"?><!DOCTYPE rss [<!ENTITY xxe SYSTEM "${origin}/xxe">]><rss><channel><title>&xxe;</title></channel></rss>`,
  "parameter entity": () =>
    `<?xml version="1.0"?><!DOCTYPE rss [<!ENTITY % dtd SYSTEM "${origin}/evil.dtd"> %dtd;]><rss><channel><title>&leak;</title></channel></rss>`,
  "external entity hidden after a comment holding '<a'": () =>
    `<?xml version="1.0"?><!-- <a --><!DOCTYPE rss [<!-- <b --><!ENTITY x SYSTEM "${origin}/x">]><rss><channel><title>&x;</title></channel></rss>`,
  "public external entity": () =>
    `<?xml version="1.0"?><!DOCTYPE rss [<!ENTITY x PUBLIC "-//X//EN" "${origin}/x.dtd">]><rss><channel><title>&x;</title></channel></rss>`,
  "parameter entity declared inline": () =>
    `<?xml version="1.0"?><!DOCTYPE rss [<!ENTITY % p "<!ENTITY y 'z'>"> %p;]><rss><channel><title>&y;</title></channel></rss>`,
  "entity whose value is markup": () =>
    `<?xml version="1.0"?><!DOCTYPE rss [<!ENTITY m "&#60;title>x&#60;/title>">]><rss><channel>&m;</channel></rss>`,
  "quadratic blowup within each value's limit": () =>
    `<?xml version="1.0"?><!DOCTYPE rss [<!ENTITY a "${"x".repeat(4_000)}">]><rss><channel><title>${"&a;".repeat(300)}</title></channel></rss>`,
  "too many declarations": () =>
    `<?xml version="1.0"?><!DOCTYPE rss [${Array.from({ length: 600 }, (_, i) => `<!ENTITY e${i} "v">`).join("")}]><rss><channel><title>t</title></channel></rss>`,
  "DOCTYPE smuggled inside the root element": () =>
    `<rss><!DOCTYPE x [<!ENTITY a "${"z".repeat(1000)}">]><channel><title>&a;&a;&a;</title></channel></rss>`,
};

describe("hostile XML", () => {
  it.each(Object.keys(attacks))("%s: refused fast, small, with no request", async (name) => {
    const body = Buffer.from((attacks[name] as () => string)());
    const before = requests;
    const m = measure(() => parseFeed(body));
    expect(m.error).toBeInstanceOf(FeedParseError);
    expect((m.error as FeedParseError).message).toMatch(/DOCTYPE/);
    expect(m.ms).toBeLessThan(MAX_MS);
    expect(m.heap).toBeLessThan(MAX_GROWTH);
    expect(m.rss).toBeLessThan(MAX_GROWTH);
    await new Promise((r) => setTimeout(r, 50));
    expect(requests).toBe(before);
  });

  it.each(["billion laughs", "quadratic blowup"])(
    "%s is also inert in the XML parser alone (second line, should hostile.ts miss one)",
    (name) => {
      const m = measure(() => {
        const root = parseXml((attacks[name] as () => string)());
        expect(textOf(root).length).toBeLessThan(1_000_000);
      });
      if (m.error) expect(m.error).toBeInstanceOf(FeedParseError);
      expect(m.ms).toBeLessThan(MAX_MS);
      expect(m.heap).toBeLessThan(MAX_GROWTH);
    },
  );

  it("plain-text entities a DOCTYPE declares are expanded in text and attributes", () => {
    const body = `<?xml version="1.0"?>
<!DOCTYPE rss [
  <!-- the names a CMS template uses -->
  <!ENTITY site "Dhaka &amp; Delta Wire">
  <!ENTITY nbsp "&#160;">
  <!ENTITY home 'https://wire.example.com'>
  <!ENTITY site "a second declaration is ignored">
  <!ELEMENT rss ANY>
  <!ATTLIST rss version CDATA #FIXED "2.0">
]>
<rss version="2.0"><channel><title>&site;</title><link>&home;/</link>
<item><title>Budget&nbsp;day at &site;</title><link>&home;/a?x=1&amp;y=2</link>
<description><![CDATA[&site; stays as written in CDATA]]></description><category domain="&home;">News</category></item>
</channel></rss>`;
    const feed = parseFeed(body);
    expect(feed.feed).toEqual({ title: "Dhaka & Delta Wire", link: "https://wire.example.com/" });
    expect(feed.entries[0]).toMatchObject({
      title: "Budget day at Dhaka & Delta Wire", // &nbsp; is U+00A0, collapsed like any space
      link: "https://wire.example.com/a?x=1&y=2",
      summary: "&site; stays as written in CDATA",
    });
  });

  it("a document with declared entities reads the same in slices (readFeedInSlices)", async () => {
    const { readFeedInSlices } = await import("./readFeedInSlices");
    const items = Array.from(
      { length: 400 },
      (_, i) => `<item><guid>g${i}</guid><title>&brand; ${i} ${"x".repeat(300)}</title></item>`,
    ).join("");
    const body = `<!DOCTYPE rss [<!ENTITY brand "Wire">]><rss><channel><title>&brand;</title>${items}</channel></rss>`;
    expect(body.length).toBeGreaterThan(128 * 1024);
    const sliced = await readFeedInSlices(body, { maxEntries: 1_000 });
    expect(sliced.entries).toEqual(parseFeed(body).entries);
    expect(sliced.feed.title).toBe("Wire");
    expect(sliced.entries[399]?.title).toMatch(/^Wire 399 x/);
  });

  it("an external DTD without declarations is inert: parsed, never fetched", async () => {
    const body = `<?xml version="1.0"?><!DOCTYPE rss SYSTEM "${origin}/rss.dtd"><rss version="2.0"><channel><title>ok</title></channel></rss>`;
    expect(parseFeed(body).feed.title).toBe("ok");
    await new Promise((r) => setTimeout(r, 50));
    expect(requests).toBe(0);
  });

  it("an article quoting <!ENTITY inside CDATA is not refused", () => {
    const feed = parseFeed(
      `<rss version="2.0"><channel><title>sec</title><item><title>XXE explained</title><description><![CDATA[<pre>&lt;!DOCTYPE x [<!ENTITY a "b">]&gt;</pre>]]></description></item></channel></rss>`,
    );
    expect(feed.entries[0]?.title).toBe("XXE explained");
  });

  it.each([10_000, 100_000])("%i-deep nesting is a clean error", (depth) => {
    const body = `<rss><channel><title>deep</title>${"<x>".repeat(depth)}${"</x>".repeat(depth)}</channel></rss>`;
    const m = measure(() => parseFeed(body));
    expect(m.error).toBeInstanceOf(FeedParseError);
    expect((m.error as Error).message).toMatch(/nest deeper than 256/);
    expect(m.heap).toBeLessThan(MAX_GROWTH);
  });

  it("200-deep XHTML content still parses", () => {
    const body = `<feed xmlns="http://www.w3.org/2005/Atom"><title>t</title><entry><id>urn:1</id><title>e</title><content type="xhtml">${"<div>".repeat(200)}deep${"</div>".repeat(200)}</content></entry></feed>`;
    expect(parseFeed(body).entries[0]?.summary).toBe("deep");
  });

  it("a real-sized feed with 120,000 &amp; parses", () => {
    const items = Array.from(
      { length: 2_000 },
      (_, i) =>
        `<item><guid>g${i}</guid><title>Q&amp;A ${i}</title><link>http://ex.com/?a=${i}&amp;b=2</link><description>${"Tom &amp; Jerry ".repeat(58)}</description></item>`,
    ).join("\n");
    const body = Buffer.from(
      `<rss version="2.0"><channel><title>Amps</title>${items}</channel></rss>`,
    );
    expect(body.toString().split("&amp;").length - 1).toBeGreaterThanOrEqual(120_000);
    const feed = parseFeed(body);
    expect(feed.entries).toHaveLength(2_000);
    expect(feed.entries[7]).toMatchObject({ title: "Q&A 7", link: "http://ex.com/?a=7&b=2" });
    expect(feed.entries[7]?.summary).toMatch(/^Tom & Jerry Tom & Jerry/);
  });
});
