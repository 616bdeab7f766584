import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LexicalEmbedder } from "@/lib/embed/lexical";
import { ShippedEmbedder } from "@/lib/embed/shipped";
import type { Embedder } from "@/lib/embed/types";
import { on } from "@/lib/events";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import type { SearchModel } from "./hybrid";
import { search } from "./search";
import { insertModel, searchKey, seedSearchCorpus, storeCorpusVectors } from "./testing";
import { detectVectorBackend, ensureModelIndex } from "./vectors";

// A search as the API and the CLI make it, with the real embedders: the shipped sentence model
// (USE-lite, offline, in its worker thread) and the lexical fallback.

let db: TestDatabase;
const shipped = new ShippedEmbedder();
const lexical = new LexicalEmbedder();
let shippedId: number;
let lexicalId: number;

const embedders = new Map<string, Embedder>([
  [shipped.info.model, shipped],
  [lexical.info.model, lexical],
]);
const deps = { embedderFor: (m: SearchModel) => embedders.get(m.model) ?? null };

async function setState(id: number, state: "complete" | "backfilling") {
  await db.prisma.$executeRaw`
    UPDATE embedding_models SET state = ${state},
      backfill_completed_at = CASE WHEN ${state} = 'complete' THEN now() END
    WHERE id = ${id}`;
}

beforeAll(async () => {
  db = await createTestDatabase();
  await seedSearchCorpus(db);
  shippedId = await insertModel(db, shipped.info, "complete");
  lexicalId = await insertModel(db, lexical.info, "backfilling");
  await storeCorpusVectors(
    db,
    shippedId,
    async (texts) => (await shipped.embed(texts, { purpose: "passage" })).vectors,
  );
  await storeCorpusVectors(db, lexicalId, async (texts) => (await lexical.embed(texts)).vectors);
  await ensureModelIndex(db, shippedId, 512);
  await ensureModelIndex(db, lexicalId, 512);
});
afterAll(async () => {
  await shipped.close();
  await db?.drop();
});

describe("search with the shipped model", () => {
  it("finds by meaning a story that shares no word with the query, with the reason and the model", async () => {
    const done: unknown[] = [];
    const off = on("search:done", (e) => done.push(e));
    const answer = await search(db, { q: "monetary policy tightening" }, deps).finally(off);
    expect(answer.mode).toBe("hybrid");
    expect(answer.model).toMatchObject({
      id: "shipped:use-lite@0.2.0",
      kind: "meaning",
      provider: "shipped",
      dims: 512,
      crossLingual: false,
    });
    expect(answer.vectorBackend).toBe(await detectVectorBackend(db));
    expect(answer.notices).toEqual([]);
    const [first] = answer.hits;
    expect(first?.title).toBe("Central bank raises interest rates by a quarter point");
    expect(first?.reasons.lexical).toBeNull();
    expect(first?.reasons.vector).toMatchObject({
      rank: 1,
      label: "meaning",
      model: "shipped:use-lite@0.2.0",
    });
    expect(answer.timings.embedMs).toBeGreaterThan(0);
    expect(answer.timings.totalMs).toBeGreaterThanOrEqual(answer.timings.embedMs);
    expect(done).toEqual([
      expect.objectContaining({ model: "shipped:use-lite@0.2.0", hits: answer.hits.length }),
    ]);
  });

  it("a Bangla query: words only, and a notice that the model does not read Bangla", async () => {
    const answer = await search(db, { q: "বন্দরে ধর্মঘট" }, deps);
    expect(answer.queryLanguage).toBe("bn");
    expect(answer.mode).toBe("fulltext");
    expect(answer.model).toBeNull();
    expect(answer.notices.map((n) => n.code)).toEqual(["model_not_bangla"]);
    expect(answer.notices[0]?.message).toMatch(/shipped:use-lite@0\.2\.0 does not read Bangla/);
    expect(answer.hits.map((h) => h.entryKey)).toEqual([searchKey(10)]);
  });

  it("full text only, saying why, when the model cannot embed the query here", async () => {
    const none = await search(db, { q: "port" }, { embedderFor: () => null });
    expect(none).toMatchObject({ mode: "fulltext", model: null });
    expect(none.notices.map((n) => n.code)).toEqual(["model_unavailable"]);
    expect(none.hits[0]?.entryKey).toBe(searchKey(1));

    // A failover answering with its fallback: that vector is of another model, not used.
    const other = await search(db, { q: "port" }, { embedderFor: () => lexical });
    expect(other.mode).toBe("fulltext");
    expect(other.notices.map((n) => n.code)).toEqual(["other_model_answered"]);

    const broken = await search(
      db,
      { q: "port" },
      {
        embedderFor: () => {
          throw new Error("model directory missing");
        },
      },
    );
    expect(broken.notices[0]?.message).toMatch(/cannot be loaded here \(model directory missing\)/);
  });
});

describe("search without a complete meaning model", () => {
  it("with none complete: keyword search only, and said so", async () => {
    await setState(shippedId, "backfilling");
    try {
      const answer = await search(db, { q: "monetary policy tightening" }, deps);
      expect(answer).toMatchObject({ mode: "fulltext", model: null, hits: [] });
      expect(answer.notices.map((n) => n.code)).toEqual(["no_model"]);
      expect(answer.notices[0]?.message).toMatch(/keyword search only/);
    } finally {
      await setState(shippedId, "complete");
    }
  });

  it("with the lexical fallback: its similarity is labelled lexical, a Bangla query says it finds Bangla only", async () => {
    await setState(shippedId, "backfilling");
    await setState(lexicalId, "complete");
    try {
      const answer = await search(db, { q: "onion prices" }, deps);
      expect(answer.model).toMatchObject({ id: "lexical:char3-hash-512@1", kind: "lexical" });
      expect(answer.hits[0]?.reasons.vector).toMatchObject({ label: "lexical-vector" });
      const bangla = await search(db, { q: "সিলেটে বন্যা" }, deps);
      expect(bangla.mode).toBe("hybrid");
      expect(bangla.notices.map((n) => n.code)).toEqual(["not_cross_lingual"]);
      expect(bangla.hits[0]?.entryKey).toBe(searchKey(6));
    } finally {
      await setState(lexicalId, "backfilling");
      await setState(shippedId, "complete");
    }
  });

  it("a configured model still backfilling: another complete one is used, and said so", async () => {
    const answer = await search(
      db,
      { q: "port" },
      { ...deps, configuredModel: "lexical:char3-hash-512@1" },
    );
    expect(answer.model?.id).toBe("shipped:use-lite@0.2.0");
    expect(answer.notices.map((n) => n.code)).toEqual(["configured_model_not_ready"]);
  });
});
