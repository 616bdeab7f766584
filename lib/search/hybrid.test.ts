import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LexicalEmbedder } from "@/lib/embed/lexical";
import type { ModelInfo } from "@/lib/embed/types";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import {
  activeSearchModel,
  BadSearchCursorError,
  hybridSearch,
  type QueryVector,
  RANKED_MATCHES,
  SearchInputError,
} from "./hybrid";
import {
  insertModel,
  SEARCH_CORPUS,
  searchKey,
  seedSearchCorpus,
  storeCorpusVectors,
  topicVector,
} from "./testing";
import { ensureModelIndex } from "./vectors";

// Hybrid search over the small corpus (lib/search/testing.ts): one story carried by three
// outlets, English and Bangla items. The "meaning" model here is hand-made (one axis per topic),
// so what is tested is the fusion, not a model; search.test.ts runs real embedders.

let db: TestDatabase;
let clusterId: string;
let topicModel: { id: number; info: ModelInfo };
let lexicalModel: { id: number; info: ModelInfo };
const lexical = new LexicalEmbedder();

beforeAll(async () => {
  db = await createTestDatabase();
  ({ clusterId } = await seedSearchCorpus(db));
  const info: ModelInfo = {
    model: "http:topics@1",
    provider: "http",
    name: "topics",
    version: "1",
    dims: 7,
    kind: "meaning",
    languages: ["en", "bn"],
    crossLingual: true,
  };
  topicModel = { id: await insertModel(db, info), info };
  await storeCorpusVectors(db, topicModel.id, async (texts) =>
    texts.map((t, i) => {
      const item = SEARCH_CORPUS.filter((c) => c.indexed)[i];
      if (!item || !t) throw new Error("corpus and texts out of step");
      return topicVector(item.topic, 0.05 * item.n);
    }),
  );
  lexicalModel = { id: await insertModel(db, lexical.info, "complete"), info: lexical.info };
  await storeCorpusVectors(
    db,
    lexicalModel.id,
    async (texts) => (await lexical.embed(texts)).vectors,
  );
  await ensureModelIndex(db, topicModel.id, 7);
  await ensureModelIndex(db, lexicalModel.id, lexical.info.dims);
});
afterAll(async () => {
  await db?.drop();
});

const byTopic = (topic: Parameters<typeof topicVector>[0]): QueryVector => ({
  modelId: topicModel.id,
  info: topicModel.info,
  vector: topicVector(topic),
});

describe("hybridSearch, full text only", () => {
  it("finds a story once, as its canonical item, with every outlet that carried it", async () => {
    const answer = await hybridSearch(db, { q: "dockworkers port" });
    expect(answer.mode).toBe("fulltext");
    expect(answer.hits).toHaveLength(1);
    const [hit] = answer.hits;
    expect(hit).toMatchObject({
      entryKey: searchKey(1),
      clusterId,
      members: 3,
      title: "Dockworkers walk off the job at Chittagong port",
      sourceId: "wire",
      sourceName: "The Wire",
      link: "https://wire.example/news/1",
      lang: "en",
    });
    expect(hit?.outlets).toEqual([
      { sourceId: "wire", name: "The Wire" },
      { sourceId: "daily", name: "The Daily" },
      { sourceId: "tribune", name: "The Tribune" },
    ]);
    expect(hit?.reasons.vector).toBeNull();
    expect(hit?.reasons.lexical).toMatchObject({ rank: 1, entryKey: searchKey(1) });
    expect(hit?.reasons.lexical?.score).toBeGreaterThan(0);
    expect(answer.candidates).toEqual({ lexical: 1, vector: 0 });
  });

  it("folds a survivor linked to a story later into that story, naming the member that matched", async () => {
    // Only item 3's own document has "labourers"; it is now a member of story 1.
    const answer = await hybridSearch(db, { q: "labourers" });
    expect(answer.hits.map((h) => h.entryKey)).toEqual([searchKey(1)]);
    expect(answer.hits[0]?.reasons.lexical?.entryKey).toBe(searchKey(3));
  });

  it("shows the member that matched when the story's canonical item is retracted", async () => {
    await db.prisma
      .$executeRaw`UPDATE news SET deleted_at = now() WHERE entry_key = ${searchKey(1)}`;
    try {
      const answer = await hybridSearch(db, { q: "labourers" });
      expect(answer.hits).toHaveLength(1);
      expect(answer.hits[0]).toMatchObject({
        entryKey: searchKey(3),
        title: "Chittagong port labourers stage walkout over pay",
        sourceId: "tribune",
        clusterId,
      });
    } finally {
      await db.prisma
        .$executeRaw`UPDATE news SET deleted_at = NULL WHERE entry_key = ${searchKey(1)}`;
    }
  });

  it("stems English and matches Bangla words whole", async () => {
    const english = await hybridSearch(db, { q: "flooding shelter" });
    expect(english.hits.map((h) => h.entryKey)).toEqual([searchKey(5)]);
    const bangla = await hybridSearch(db, { q: "ধর্মঘট" });
    expect(bangla.hits.map((h) => h.entryKey)).toEqual([searchKey(10)]);
  });

  it("keeps to the language, source and time filters", async () => {
    const all = { q: "port OR floods OR বন্যায় OR বন্দরে" };
    const keys = async (filters: Parameters<typeof hybridSearch>[1]["filters"]) =>
      (await hybridSearch(db, { ...all, filters })).hits.map((h) => h.entryKey).sort();
    expect(await keys({})).toEqual([1, 5, 6, 10].map(searchKey).sort());
    expect(await keys({ lang: "bn" })).toEqual([6, 10].map(searchKey).sort());
    expect(await keys({ sourceId: "daily" })).toEqual([searchKey(5)]);
    const fortyMinutesAgo = new Date(Date.now() - 47 * 60_000);
    expect(await keys({ since: fortyMinutesAgo })).toEqual([6, 10].map(searchKey).sort());
    expect(await keys({ until: fortyMinutesAgo })).toEqual([1, 5].map(searchKey).sort());
  });
});

describe("hybridSearch with a query vector", () => {
  it("finds by meaning a story that shares no word with the query, and says so", async () => {
    const answer = await hybridSearch(db, {
      q: "monetary tightening",
      queryVector: byTopic("rates"),
    });
    expect(answer.mode).toBe("hybrid");
    const [first] = answer.hits;
    expect(first?.entryKey).toBe(searchKey(4));
    expect(first?.reasons.lexical).toBeNull();
    expect(first?.reasons.vector).toMatchObject({
      rank: 1,
      model: "http:topics@1",
      kind: "meaning",
      label: "meaning",
      entryKey: searchKey(4),
    });
    expect(first?.reasons.vector?.similarity).toBeCloseTo(1 / Math.hypot(1, 0.2), 3);
  });

  it("ranks first the story both sides found, and one hit per story across both", async () => {
    const answer = await hybridSearch(db, { q: "port", queryVector: byTopic("port") });
    const keys = answer.hits.map((h) => h.entryKey);
    expect(keys[0]).toBe(searchKey(1));
    expect(answer.hits[0]?.reasons.lexical).not.toBeNull();
    expect(answer.hits[0]?.reasons.vector).not.toBeNull();
    // The Bangla port story: by vector only (its words are Bangla).
    expect(keys[1]).toBe(searchKey(10));
    expect(answer.hits[1]?.reasons.lexical).toBeNull();
    // Items 1 and 3 are one story: it appears once, and so does every other story.
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys).not.toContain(searchKey(3));
    expect(keys).toHaveLength(8); // nine documents, eight stories
    // RRF: both lists' rank 1 → 2/61.
    expect(answer.hits[0]?.score).toBeCloseTo(2 / 61, 6);
  });

  it("leaves out of the vector side the items in a language the model does not read", async () => {
    const englishOnly = { ...byTopic("port"), info: { ...topicModel.info, languages: ["en"] } };
    const answer = await hybridSearch(db, { q: "port", queryVector: englishOnly });
    const byVector = answer.hits.filter((h) => h.reasons.vector).map((h) => h.lang);
    expect(byVector.length).toBeGreaterThan(0);
    expect(byVector).not.toContain("bn");
    // Its words still count: a Bangla query finds the Bangla story by full text.
    const bangla = await hybridSearch(db, { q: "ধর্মঘট", queryVector: englishOnly });
    const story = bangla.hits.find((h) => h.entryKey === searchKey(10));
    expect(story?.reasons).toMatchObject({ lexical: { rank: 1 }, vector: null });
  });

  it("labels the lexical fallback's similarity lexical-vector, never meaning", async () => {
    const [v] = (await lexical.embed(["Onion prices"])).vectors;
    const answer = await hybridSearch(db, {
      q: "Onion prices",
      queryVector: { modelId: lexicalModel.id, info: lexical.info, vector: v as Float32Array },
    });
    const [first] = answer.hits;
    expect(first?.entryKey).toBe(searchKey(8));
    expect(first?.reasons.vector).toMatchObject({ kind: "lexical", label: "lexical-vector" });
    for (const h of answer.hits) expect(h.reasons.vector?.label).not.toBe("meaning");
  });

  it("pages with a cursor: no story twice, none left out, and the cursor only fits its own query", async () => {
    const query = { q: "port", queryVector: byTopic("port") };
    const whole = (await hybridSearch(db, { ...query, limit: 100 })).hits.map((h) => h.entryKey);
    const paged: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await hybridSearch(db, { ...query, limit: 3, cursor });
      paged.push(...page.hits.map((h) => h.entryKey));
      cursor = page.nextCursor;
      pages++;
    } while (cursor && pages < 10);
    expect(pages).toBe(3);
    expect(paged).toEqual(whole);

    const first = await hybridSearch(db, { ...query, limit: 3 });
    const cursorOf = first.nextCursor as string;
    await expect(hybridSearch(db, { q: "ports", cursor: cursorOf })).rejects.toThrow(
      /another query/,
    );
    await expect(
      hybridSearch(db, { ...query, filters: { lang: "en" }, cursor: cursorOf }),
    ).rejects.toBeInstanceOf(BadSearchCursorError);
    for (const bad of ["x", Buffer.from("[1,2]").toString("base64url"), "!!"]) {
      await expect(hybridSearch(db, { ...query, cursor: bad })).rejects.toThrow(
        /cursor: not valid/,
      );
    }
  });

  it("refuses an empty or overlong query and a limit out of range", async () => {
    await expect(hybridSearch(db, { q: "  " })).rejects.toBeInstanceOf(SearchInputError);
    await expect(hybridSearch(db, { q: "x".repeat(501) })).rejects.toThrow(/at most 500/);
    for (const limit of [0, 101, 1.5]) {
      await expect(hybridSearch(db, { q: "port", limit })).rejects.toThrow(/limit/);
    }
  });
});

describe("hybridSearch, a broad query", () => {
  it("ranks only the newest RANKED_MATCHES of its full-text matches", async () => {
    // 2,050 matches: the 50 oldest say "zebrafish" three times (they would rank first).
    await db.prisma.$executeRaw`
      INSERT INTO news (entry_key, source_id, canonical_id, quality, title, version, first_seen_at,
                        first_source, first_collector, last_result)
      SELECT 'z' || i, 'wire', 'z' || i, 'authoritative', 'zebrafish', 1,
             now() - i * interval '1 minute', 'wire', 'A', 'inserted'
      FROM generate_series(1, ${RANKED_MATCHES + 50}) i`;
    await db.prisma.$executeRaw`
      INSERT INTO search_docs (entry_key, item_version, source_id, lang, first_seen_at, tsv)
      SELECT 'z' || i, 1, 'wire', 'en', now() - i * interval '1 minute',
             to_tsvector('english', CASE WHEN i > ${RANKED_MATCHES} THEN 'zebrafish zebrafish zebrafish'
                                         ELSE 'zebrafish' END)
      FROM generate_series(1, ${RANKED_MATCHES + 50}) i`;
    try {
      const answer = await hybridSearch(db, { q: "zebrafish", limit: 100 });
      expect(answer.candidates.lexical).toBe(100);
      const ages = answer.hits.map((h) => Number(h.entryKey.slice(1)));
      expect(Math.max(...ages)).toBeLessThanOrEqual(RANKED_MATCHES);
    } finally {
      await db.prisma.$executeRaw`DELETE FROM search_docs WHERE entry_key LIKE 'z%'`;
      await db.prisma.$executeRaw`DELETE FROM news WHERE entry_key LIKE 'z%'`;
    }
  });
});

describe("activeSearchModel", () => {
  it("chooses a complete model: the configured one, else the newest, meaning before lexical", async () => {
    // Both seeded models are complete: the meaning one wins over the lexical one made later.
    expect((await activeSearchModel(db))?.model).toBe("http:topics@1");
    expect((await activeSearchModel(db, "lexical"))?.model).toBe(lexical.info.model);
    expect((await activeSearchModel(db, lexical.info.model))?.id).toBe(lexicalModel.id);

    const newer = await insertModel(
      db,
      { model: "http:topics@2", dims: 7, kind: "meaning" },
      "backfilling",
    );
    const waiting = await activeSearchModel(db, "http:topics@2");
    expect(waiting).toMatchObject({ model: "http:topics@1" });
    expect(waiting?.note).toMatch(/http:topics@2 is backfilling/);
    expect((await activeSearchModel(db, "onnx:e5"))?.note).toMatch(/has embedded nothing yet/);
    // "http:topics@" is not a prefix of a model id at a boundary: it names nothing.
    expect((await activeSearchModel(db, "http:top"))?.note).toMatch(/nothing yet/);

    await db.prisma.$executeRaw`
      UPDATE embedding_models SET state = 'complete', backfill_completed_at = now()
      WHERE id = ${newer}`;
    expect((await activeSearchModel(db))?.model).toBe("http:topics@2");
    expect((await activeSearchModel(db, "http:topics@1"))?.model).toBe("http:topics@1");
    await db.prisma.$executeRaw`UPDATE embedding_models SET state = 'retired' WHERE id = ${newer}`;
  });

  it("is null when no model is complete", async () => {
    await db.prisma.$executeRaw`UPDATE embedding_models SET state = 'backfilling'`;
    try {
      expect(await activeSearchModel(db)).toBeNull();
    } finally {
      await db.prisma.$executeRaw`
        UPDATE embedding_models SET state = 'complete' WHERE model <> 'http:topics@2'`;
    }
  });
});
