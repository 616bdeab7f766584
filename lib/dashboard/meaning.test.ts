import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { emit } from "@/lib/events";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { MEANING_SEED, seedMeaningRows } from "@/lib/testing/meaningSeed";
import {
  BACKEND_DESCRIPTIONS,
  KIND_LABELS,
  type MeaningModel,
  type MeaningOverview,
  meaningOverview,
  modelLimits,
  RATE_BUCKET_SECONDS,
  RATE_BUCKETS,
} from "./meaning";
import { stopTrackingSearchLatency } from "./searchLatency";

let db: TestDatabase;
const now = new Date();

beforeAll(async () => {
  db = await createTestDatabase();
  await seedMeaningRows(db, now);
});

afterAll(async () => {
  stopTrackingSearchLatency();
  await db?.drop();
});

const byModel = (o: MeaningOverview, model: string) =>
  o.models.find((m) => m.model === model) as MeaningModel;

describe("meaningOverview", () => {
  it("lists every model with what it is, its coverage of the canonical items and its backfill", async () => {
    const o = await meaningOverview(db, { now });
    expect(o.canonical).toBe(MEANING_SEED.canonical);
    expect(o.models.map((m) => m.model)).toEqual([
      MEANING_SEED.use,
      MEANING_SEED.lexical,
      MEANING_SEED.e5,
    ]);
    const use = byModel(o, MEANING_SEED.use);
    expect(use).toMatchObject({
      provider: "shipped",
      kind: "meaning",
      kindLabel: "meaning",
      dims: 2,
      languages: ["en"],
      crossLingual: false,
      limits: ["no Bangla ↔ English", "English only"],
      meaningThreshold: 0.82,
      distinctThreshold: 0.55,
      state: "complete",
      // The duplicate's vector is stored but covers nothing.
      ...MEANING_SEED.counts.use,
      coverage: 1,
    });
    expect(use.backfill.startedAt).toBe(new Date(now.getTime() - 180 * 60_000).toISOString());
    expect(use.backfill.completedAt).toBe(new Date(now.getTime() - 150 * 60_000).toISOString());

    const e5 = byModel(o, MEANING_SEED.e5);
    // Item 3's vector is of its older version: the backfill still owes it one.
    expect(e5).toMatchObject({
      state: "backfilling",
      crossLingual: true,
      limits: [],
      ...MEANING_SEED.counts.e5,
      coverage: 3 / 5,
      backfill: { completedAt: null, progress: 3 / 5 },
    });
  });

  it("labels the lexical fallback as lexical, never as meaning", async () => {
    const lexical = byModel(await meaningOverview(db, { now }), MEANING_SEED.lexical);
    expect(lexical.kind).toBe("lexical");
    expect(lexical.kindLabel).toBe(KIND_LABELS.lexical);
    expect(lexical.kindLabel).toContain("not meaning");
    expect(lexical.limits).toEqual(["no Bangla ↔ English"]);
  });

  it("gives embeddings per minute in the last hour's twelve 5-minute buckets, oldest first", async () => {
    const o = await meaningOverview(db, { now });
    const e5 = byModel(o, MEANING_SEED.e5);
    expect(e5.rate.buckets).toHaveLength(RATE_BUCKETS);
    const ts = e5.rate.buckets.map((b) => b.t);
    expect(ts[0]).toBe(now.getTime() - RATE_BUCKETS * RATE_BUCKET_SECONDS * 1000);
    expect(ts.every((t, i) => i === 0 || t - (ts[i - 1] as number) === 300_000)).toBe(true);
    // Two vectors 2 minutes ago (the newest bucket), one 31 minutes ago (the 6th of 12: 25 to
    // 30 minutes after the hour began), the 70-minute-old one outside the hour.
    expect(e5.rate.buckets.map((b) => b.perMinute)).toEqual([
      0, 0, 0, 0, 0, 0.2, 0, 0, 0, 0, 0, 0.4,
    ]);
    expect(e5.rate.lastHour).toBeCloseTo(3, 10);
    // Nothing in the hour: twelve zeros, not missing bars.
    const use = byModel(o, MEANING_SEED.use);
    expect(use.rate.buckets.map((b) => b.perMinute)).toEqual(Array(12).fill(0));
    expect(use.rate.lastHour).toBe(0);
  });

  it("adds up the day's embedding calls per model and shows each model's last error in the week", async () => {
    const o = await meaningOverview(db, { now });
    const e5 = byModel(o, MEANING_SEED.e5);
    expect(e5.calls).toMatchObject({
      calls: MEANING_SEED.e5Calls.calls,
      errors: MEANING_SEED.e5Calls.errors,
      tokens: MEANING_SEED.e5Calls.tokens,
    });
    expect(e5.calls.costUsd).toBeCloseTo(MEANING_SEED.e5Calls.costUsd, 10);
    expect(e5.calls.lastError).toEqual({
      message: MEANING_SEED.e5Error,
      status: 503,
      at: new Date(now.getTime() - 60 * 60_000).toISOString(),
    });
    // No call in the day, but the failure 3 days ago is its last error (the 8-day-old one is not).
    const use = byModel(o, MEANING_SEED.use);
    expect(use.calls).toMatchObject({ calls: 0, errors: 0, costUsd: 0, tokens: 0 });
    expect(use.calls.lastError?.message).toBe("worker crashed");
    expect(byModel(o, MEANING_SEED.lexical).calls.lastError).toBeNull();
  });

  it("shows a supplier's calls under a model that never stored a vector; not extraction's", async () => {
    const o = await meaningOverview(db, { now });
    expect(o.unregistered).toEqual([
      {
        model: MEANING_SEED.failing,
        provider: "http",
        ...MEANING_SEED.failingCalls,
        lastError: {
          message: "HTTP 429 rate limited",
          status: 429,
          at: new Date(now.getTime() - 3 * 60_000).toISOString(),
        },
      },
    ]);
  });

  it("says search uses the newest complete meaning model, the lexical one only when none is", async () => {
    const o = await meaningOverview(db, { now });
    // The lexical fallback completed later, but a meaning model is preferred.
    expect(o.searchModel).toEqual({
      id: 1,
      model: MEANING_SEED.use,
      kind: "meaning",
      kindLabel: "meaning",
      note: null,
    });
    // A configured model still backfilling is not used; the page says why.
    const configured = await meaningOverview(db, { now, configuredSearchModel: MEANING_SEED.e5 });
    expect(configured.searchModel?.model).toBe(MEANING_SEED.use);
    expect(configured.searchModel?.note).toContain("backfilling, not complete");
    expect(o.models.filter((m) => m.inSearch).map((m) => m.model)).toEqual([MEANING_SEED.use]);

    await db.prisma.$executeRaw`UPDATE embedding_models SET state = 'retired' WHERE id = 1`;
    try {
      const lexical = await meaningOverview(db, { now });
      expect(lexical.searchModel).toMatchObject({
        model: MEANING_SEED.lexical,
        kindLabel: KIND_LABELS.lexical,
      });
      // e5 finishing its backfill takes over from the fallback.
      await db.prisma.$executeRaw`
        UPDATE embedding_models SET state = 'complete', backfill_completed_at = ${now}
        WHERE id = 3`;
      expect((await meaningOverview(db, { now })).searchModel?.model).toBe(MEANING_SEED.e5);
      await db.prisma.$executeRaw`
        UPDATE embedding_models SET state = 'backfilling' WHERE id IN (2, 3)`;
      expect((await meaningOverview(db, { now })).searchModel).toBeNull();
    } finally {
      await db.prisma.$executeRaw`
        UPDATE embedding_models SET state = 'complete' WHERE id IN (1, 2)`;
      await db.prisma.$executeRaw`
        UPDATE embedding_models SET state = 'backfilling', backfill_completed_at = NULL
        WHERE id = 3`;
    }
  });

  it("names the vector backend: pgvector where the extension can be had, else portable and why", async () => {
    const o = await meaningOverview(db, { now });
    const [available] = await db.prisma.$queryRaw<{ ok: boolean }[]>`
      SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector') AS ok`;
    if (available?.ok) {
      expect(o.backend).toMatchObject({
        kind: "pgvector",
        description: "pgvector (HNSW, an index per model)",
        reason: null,
      });
      expect(o.backend.pgvectorVersion).toMatch(/^\d+\.\d+/);
    } else {
      expect(o.backend).toEqual({
        kind: "portable",
        description: BACKEND_DESCRIPTIONS.portable,
        pgvectorVersion: null,
        reason: "pgvector is not installed on this database server",
      });
      expect(o.backend.description).toMatch(/^portable: exact scan of sign codes, then cosine/);
    }
  });

  it("counts once for requests made together, and says when it counted", async () => {
    expect((await meaningOverview(db, { now })).countedAt).toBe(now.toISOString());
    // Concurrent pages share one read of the counts (the cache keeps it while it runs).
    const [a, b] = await Promise.all([meaningOverview(db), meaningOverview(db)]);
    expect(b.countedAt).toBe(a.countedAt);
    expect(new Date(a.countedAt).getTime()).toBeLessThanOrEqual(new Date(b.now).getTime());
    expect(a.models.map((m) => m.covered)).toEqual([5, 5, 3]);
  });

  it("reads an empty database as no models, no coverage and keyword search only", async () => {
    const empty = await createTestDatabase();
    try {
      const o = await meaningOverview(empty, { now });
      expect(o).toMatchObject({ canonical: 0, models: [], searchModel: null, unregistered: [] });
    } finally {
      await empty.drop();
    }
  });
});

describe("meaningOverview's search latency", () => {
  beforeEach(() => stopTrackingSearchLatency());

  it("carries this process's last searches, heard on the bus", async () => {
    expect((await meaningOverview(db, { now })).latency.count).toBe(0);
    for (const [seconds, model] of [
      [0.01, MEANING_SEED.use],
      [0.02, MEANING_SEED.use],
      [0.03, null],
      [0.2, MEANING_SEED.use],
    ] as const) {
      emit("search:done", { seconds, model, backend: "portable", hits: 3 });
    }
    const { latency } = await meaningOverview(db, { now });
    expect(latency).toMatchObject({ count: 4, seen: 4, fullTextOnly: 1 });
    expect(latency.p50Ms).toBeCloseTo(25, 6);
    expect(latency.maxMs).toBeCloseTo(200, 6);
  });
});

describe("modelLimits", () => {
  it("says what a model cannot do", () => {
    expect(modelLimits({ languages: ["en"], crossLingual: false })).toEqual([
      "no Bangla ↔ English",
      "English only",
    ]);
    expect(modelLimits({ languages: ["bn"], crossLingual: false })).toEqual([
      "no Bangla ↔ English",
    ]);
    expect(modelLimits({ languages: ["en", "bn"], crossLingual: true })).toEqual([]);
  });
});
