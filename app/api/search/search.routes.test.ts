// GET /api/search in-process over the search corpus (lib/search/testing.ts), with the lexical
// fallback as the complete model: the answer the Items page draws, and 400 for what it refuses.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "@/lib/db";
import { LexicalEmbedder } from "@/lib/embed/lexical";
import { insertModel, searchKey, seedSearchCorpus, storeCorpusVectors } from "@/lib/search/testing";
import { detectVectorBackend } from "@/lib/search/vectors";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { GET } from "./route";

process.env.DASHBOARD_READ = "open";

let db: TestDatabase;
const ORIGIN = "http://localhost:3000";

beforeAll(async () => {
  db = await createTestDatabase();
  (globalThis as unknown as { wirewatchDb?: Promise<Database> }).wirewatchDb = Promise.resolve(db);
  await seedSearchCorpus(db);
  const lexical = new LexicalEmbedder();
  const id = await insertModel(db, lexical.info, "complete");
  await storeCorpusVectors(db, id, async (texts) => (await lexical.embed(texts)).vectors);
});
afterAll(async () => {
  await db?.drop();
});

const get = (query: string) =>
  GET(new Request(`${ORIGIN}/api/search?${query}`, { headers: { host: "localhost:3000" } }));

describe("GET /api/search", () => {
  it("answers hits with their reasons, the model used and the vector backend", async () => {
    const res = await get("q=onion%20prices");
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const body = await res.json();
    expect(body).toMatchObject({
      mode: "hybrid",
      model: { id: "lexical:char3-hash-512@1", kind: "lexical", provider: "lexical" },
      vectorBackend: await detectVectorBackend(db),
      query: { q: "onion prices", lang: null, source: null, limit: 20 },
      notices: [],
    });
    expect(body.hits[0]).toMatchObject({
      entryKey: searchKey(8),
      title: "Onion prices jump ahead of Eid",
      sourceName: "The Daily",
      outlets: [{ sourceId: "daily", name: "The Daily" }],
      reasons: {
        lexical: { rank: 1 },
        vector: { rank: 1, kind: "lexical", label: "lexical-vector" },
      },
    });
    for (const t of ["lexicalMs", "vectorMs", "fuseMs", "embedMs", "totalMs"]) {
      expect(body.timings[t], t).toBeGreaterThanOrEqual(0);
    }
  });

  it("filters by language, source and time, and pages with its cursor", async () => {
    const bn = await (await get("q=port&lang=BN")).json();
    expect(bn.hits.map((h: { lang: string }) => h.lang)).toEqual(bn.hits.map(() => "bn"));
    const daily = await (await get("q=port&source=daily")).json();
    for (const h of daily.hits) expect(h.sourceId).toBe("daily");
    const future = new Date(Date.now() + 60_000).toISOString();
    expect((await (await get(`q=port&since=${future}`)).json()).hits).toEqual([]);

    const first = await (await get("q=port&limit=2")).json();
    expect(first.hits).toHaveLength(2);
    const second = await (
      await get(`q=port&limit=2&cursor=${encodeURIComponent(first.nextCursor)}`)
    ).json();
    const keys = (b: { hits: { entryKey: string }[] }) => b.hits.map((h) => h.entryKey);
    expect(keys(second)).not.toContain(keys(first)[0]);
    expect(keys(second)).not.toContain(keys(first)[1]);
  });

  it("refuses what it cannot search with a 400 naming the parameter", async () => {
    const cases: [string, RegExp][] = [
      ["", /^q: /],
      ["q=%20%20", /^q: /],
      [`q=${"x".repeat(501)}`, /^q: /],
      ["q=a%00b", /^q: must not contain a NUL/],
      ["q=port&limit=0", /^limit: /],
      ["q=port&limit=101", /^limit: /],
      ["q=port&limit=abc", /^limit: /],
      ["q=port&lang=english", /^lang: must be a language code/],
      ["q=port&since=yesterday", /^since: /],
      ["q=port&until=2026-02-30T00:00:00Z", /^until: /],
      ["q=port&cursor=nope", /^cursor: not valid/],
      ["q=port&q=ship", /^q: given more than once/],
      ["q=port&page=2", /unrecognized key/i],
    ];
    for (const [query, message] of cases) {
      const res = await get(query);
      expect(res.status, query).toBe(400);
      const body = await res.json();
      expect(body.error.code, query).toBe("bad_request");
      expect(body.error.message, query).toMatch(message);
    }
    // A cursor of another query is refused, not taken as a place in this one.
    const first = await (await get("q=port&limit=1")).json();
    const other = await get(`q=floods&cursor=${encodeURIComponent(first.nextCursor)}`);
    expect(other.status).toBe(400);
    expect((await other.json()).error.message).toMatch(/another query/);
  });
});
