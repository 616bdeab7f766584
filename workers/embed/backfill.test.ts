import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { LEXICAL_MODEL, lexicalVector } from "@/lib/embed/lexical";
import type { EmbedBatch, Embedder, ModelInfo } from "@/lib/embed/types";
import { activeSearchModel } from "@/lib/search/hybrid";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { dedupStage } from "@/workers/dedup/stage";
import { createOutlets, put, TEXTS, type Written } from "@/workers/dedup/testing/items";
import type { Stage } from "@/workers/line/stage";
import { BACKFILL_PRIORITY } from "./backfill";
import { type MeaningLine, meaningLine } from "./line";

// Seed 002: "upgrading the model is a gradual backfill rather than a stop-the-world migration".

let db: TestDatabase;

class FixedEmbedder implements Embedder {
  texts = 0;
  constructor(readonly info: ModelInfo) {}
  async embed(texts: string[]): Promise<EmbedBatch> {
    this.texts += texts.length;
    return { model: this.info, vectors: texts.map((t) => lexicalVector(t, this.info.dims)) };
  }
  async close() {}
}
const modelA: ModelInfo = {
  ...LEXICAL_MODEL,
  model: "test:a@1",
  provider: "shipped",
  name: "a",
  version: "1",
  kind: "meaning",
};
const modelB: ModelInfo = { ...modelA, model: "test:b@2", name: "b", version: "2", dims: 256 };

beforeAll(async () => {
  db = await createTestDatabase();
  await createOutlets(db);
});
afterAll(() => db?.drop());
beforeEach(async () => {
  await db.prisma.$executeRawUnsafe(
    `TRUNCATE news, news_events, dedup_items, dedup_clusters, dedup_cluster_events, dedup_links,
              dedup_reviews, dedup_settings, dedup_anchors, jobs, item_vectors, search_docs,
              embedding_models, line_cursors RESTART IDENTITY`,
  );
});

const ctx = () => ({ db, signal: new AbortController().signal, attempt: 1 });
async function through(line: MeaningLine, w: Written) {
  const job = { entryKey: w.entryKey, version: 1 };
  if ((await dedupStage(db).handle(job, ctx())) === "survived") {
    await (line.stages[0] as Stage).handle(job, ctx());
  }
}
const counts = async () =>
  Object.fromEntries(
    (
      await db.prisma.$queryRaw<{ model: string; n: number }[]>`
        SELECT m.model, count(v.entry_key)::int AS n FROM embedding_models m
        LEFT JOIN item_vectors v ON v.model_id = m.id GROUP BY m.model ORDER BY m.model`
    ).map((r) => [r.model, r.n]),
  );
/** Runs the embed jobs the backfill enqueued, as the queue would, and retires them. */
async function runQueued(line: MeaningLine): Promise<number[]> {
  const jobs = await db.prisma.$queryRaw<
    { id: bigint; payload: { entryKey: string; version: number }; priority: number }[]
  >`
    SELECT id, payload, priority FROM jobs WHERE queue = 'embed' AND state = 'ready' ORDER BY id`;
  for (const j of jobs) await (line.stages[0] as Stage).handle(j.payload, ctx());
  await db.prisma.$executeRaw`DELETE FROM jobs WHERE queue = 'embed'`;
  return jobs.map((j) => j.priority);
}

describe("a model change", () => {
  it("keeps search on the complete model until the new one's backfill completes, then switches; both sets of vectors stay", async () => {
    const a = new FixedEmbedder(modelA);
    const lineA = await meaningLine(db, { embedder: a, backfill: { intervalMs: 3_600_000 } });
    lineA.start();
    const old: Written[] = [];
    for (const [i, t] of [TEXTS.strike, TEXTS.rate].entries()) {
      old.push(await put(db, ["wire", "star"][i] as string, `old-${i}`, t));
    }
    for (const w of old) await through(lineA, w);
    await lineA.backfill()?.round();
    expect((await activeSearchModel(db))?.model).toBe("test:a@1");
    await lineA.stop();

    // Model B configured: registered backfilling; search stays on A.
    const b = new FixedEmbedder(modelB);
    const lineB = await meaningLine(db, {
      embedder: b,
      embedderFor: (id) => (id === modelA.model ? a : null),
      backfill: { intervalMs: 3_600_000, pageSize: 1 },
    });
    lineB.start();
    expect(lineB.targets.current().map((t) => t.model.info.model)).toEqual([
      "test:b@2",
      "test:a@1",
    ]);
    expect((await activeSearchModel(db))?.model).toBe("test:a@1");

    // An item arriving during the backfill gets both vectors: A's keeps search whole.
    const fresh = await put(db, "daily", "fresh", TEXTS.flood);
    await through(lineB, fresh);
    expect(await counts()).toEqual({ "test:a@1": 3, "test:b@2": 1 });

    // The walk, a page at a time, enqueues the old items at low priority; search still on A.
    const priorities: number[] = [];
    for (let i = 0; i < 4; i++) {
      await lineB.backfill()?.round();
      expect((await activeSearchModel(db))?.model).toBe("test:a@1");
      priorities.push(...(await runQueued(lineB)));
    }
    expect(priorities).toEqual([BACKFILL_PRIORITY, BACKFILL_PRIORITY]);
    expect(await counts()).toEqual({ "test:a@1": 3, "test:b@2": 3 });

    // A walk that finds nothing missing completes B: search switches, A is no longer embedded.
    for (let i = 0; i < 5 && (await activeSearchModel(db))?.model !== "test:b@2"; i++) {
      await lineB.backfill()?.round();
    }
    expect((await activeSearchModel(db))?.model).toBe("test:b@2");
    expect(lineB.targets.current().map((t) => t.model.info.model)).toEqual(["test:b@2"]);
    const [states] = await db.prisma.$queryRaw<{ a: string; b: string }[]>`
      SELECT (SELECT state FROM embedding_models WHERE model = 'test:a@1') AS a,
             (SELECT state FROM embedding_models WHERE model = 'test:b@2') AS b`;
    expect(states).toEqual({ a: "complete", b: "complete" });
    expect(await counts()).toEqual({ "test:a@1": 3, "test:b@2": 3 });
    await lineB.stop();
  });
});
