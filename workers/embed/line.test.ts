import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { LEXICAL_MODEL, lexicalVector } from "@/lib/embed/lexical";
import type { EmbedBatch, Embedder, ModelInfo } from "@/lib/embed/types";
import { EmbeddingError } from "@/lib/embed/types";
import { cosine } from "@/lib/embed/vector";
import type { MeaningCalibration } from "@/lib/meaning/calibrations";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { undoLink } from "@/workers/admin/dedup";
import { dedupStage } from "@/workers/dedup/stage";
import {
  change,
  createOutlets,
  put,
  stateOf,
  TEXTS,
  tombstone,
  variantOf,
  versionOf,
  type Written,
} from "@/workers/dedup/testing/items";
import type { Stage, StageVerdict } from "@/workers/line/stage";
import { type MeaningLine, meaningLine } from "./line";
import { passageText } from "./targets";

// The embed stage and stage 4 on a real database, with embedders that answer deterministic
// vectors (the lexical fallback's n-grams) under a model of their own: which pairs a real model
// links is the calibration's business (lib/meaning, bench meaning); here, what the line does
// with a verdict.

let db: TestDatabase;
const grey = variantOf(TEXTS.rate, "review");

/** An embedder whose vectors are the lexical ones, presented as model `info`. */
class FixedEmbedder implements Embedder {
  calls = 0;
  failWith: EmbeddingError | null = null;
  constructor(readonly info: ModelInfo) {}
  async embed(texts: string[]): Promise<EmbedBatch> {
    this.calls++;
    if (this.failWith) throw this.failWith;
    return { model: this.info, vectors: texts.map((t) => lexicalVector(t, this.info.dims)) };
  }
  async close() {}
}

const model = (name: string, extra: Partial<ModelInfo> = {}): ModelInfo => ({
  ...LEXICAL_MODEL,
  model: `test:${name}@1`,
  provider: "shipped",
  name,
  version: "1",
  kind: "meaning",
  ...extra,
});

/** Stage 4's thresholds for `info`, as an operator's calibration file would give them. */
const calibration = (
  info: ModelInfo,
  meaningThreshold: number,
  distinctThreshold: number,
): MeaningCalibration => ({
  model: info.model,
  languages: ["en", "bn"],
  rule: { cosineWeight: 1, meaningThreshold, distinctThreshold },
  record: {
    corpus: "set by the test",
    pairs: 0,
    stages: "shipped",
    greyPairs: 0,
    unguardedGreyPairs: 0,
    unguardedPositives: 0,
    method: "fixed",
    reason: "thresholds chosen around the test pair's cosine",
    fit: null,
    crossValidation: {
      folds: 1,
      seed: 0,
      foldsWithThresholds: 0,
      off: { accuracy: "-", f1: "-" },
      on: { accuracy: "-", f1: "-" },
      linked: 0,
      dismissed: 0,
      dismissedPositives: 0,
      leftInReview: 0,
    },
    measuredAt: "2026-12-01T00:00:00Z",
    command: "none",
  },
});

const greyCosine = cosine(
  lexicalVector(passageText(TEXTS.rate.title, TEXTS.rate.summary ?? null)),
  lexicalVector(passageText(grey.title, grey.summary ?? null)),
);

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

/** Runs dedup, then each stage of `line` in order, for the item's current version. */
async function through(line: MeaningLine, w: Written): Promise<StageVerdict[]> {
  const job = { entryKey: w.entryKey, version: await versionOf(db, w.entryKey) };
  const verdicts: StageVerdict[] = [await dedupStage(db).handle(job, ctx())];
  for (const stage of line.stages) {
    if (verdicts.at(-1) !== "survived") break;
    verdicts.push(await (stage as Stage).handle(job, ctx()));
  }
  return verdicts;
}

const vectors = () =>
  db.prisma.$queryRaw<{ entry_key: string; model: string; item_version: number }[]>`
    SELECT v.entry_key, m.model, v.item_version FROM item_vectors v
    JOIN embedding_models m ON m.id = v.model_id ORDER BY v.entry_key, m.model`;
const docs = () =>
  db.prisma.$queryRaw<{ entry_key: string; item_version: number }[]>`
    SELECT entry_key, item_version FROM search_docs ORDER BY entry_key`;

describe("the embed stage", () => {
  it("embeds survivors with their model and a search document; duplicates and retractions get neither", async () => {
    const embedder = new FixedEmbedder(model("plain"));
    const line = await meaningLine(db, { embedder });
    const a = await put(db, "wire", "strike-w", TEXTS.strike);
    const copy = await put(db, "daily", "strike-d", {
      ...TEXTS.strike,
      link: "https://daily.example/x",
    });
    const other = await put(db, "star", "rate-s", TEXTS.rate);
    expect(await through(line, a)).toEqual(["survived", "survived"]);
    expect(await through(line, copy)).toEqual(["dropped"]);
    expect(await through(line, other)).toEqual(["survived", "survived"]);
    expect(await vectors()).toEqual(
      [a, other]
        .map((w) => ({ entry_key: w.entryKey, model: "test:plain@1", item_version: 1 }))
        .sort((x, y) => (x.entry_key < y.entry_key ? -1 : 1)),
    );
    expect((await docs()).map((d) => d.entry_key).sort()).toEqual(
      [a.entryKey, other.entryKey].sort(),
    );

    // A retraction: dedup removes it, and its document goes (the embed job of the new version).
    const gone = await tombstone(db, "star", "rate-s");
    const job = { entryKey: gone.entryKey, version: await versionOf(db, gone.entryKey) };
    expect(await dedupStage(db).handle(job, ctx())).toBe("dropped");
    expect(await (line.stages[0] as Stage).handle(job, ctx())).toBe("dropped");
    expect((await docs()).map((d) => d.entry_key)).toEqual([a.entryKey]);
    await line.stop();
  });

  it("a job for an older version changes nothing; the same job twice embeds once", async () => {
    const embedder = new FixedEmbedder(model("plain"));
    const line = await meaningLine(db, { embedder });
    const a = await put(db, "wire", "strike-w", TEXTS.strike);
    await through(line, a);
    const calls = embedder.calls;
    expect(
      await (line.stages[0] as Stage).handle({ entryKey: a.entryKey, version: 1 }, ctx()),
    ).toBe("survived");
    expect(embedder.calls).toBe(calls);
    await line.stop();
  });

  it("a supplier that fails fails the job (retried by the queue) and stores nothing", async () => {
    const embedder = new FixedEmbedder(model("plain"));
    const line = await meaningLine(db, { embedder });
    const a = await put(db, "wire", "strike-w", TEXTS.strike);
    const job = { entryKey: a.entryKey, version: 1 };
    await dedupStage(db).handle(job, ctx());
    embedder.failWith = new EmbeddingError("down", "provider_error");
    await expect((line.stages[0] as Stage).handle(job, ctx())).rejects.toThrow("down");
    expect(await vectors()).toEqual([]);
    embedder.failWith = null;
    expect(await (line.stages[0] as Stage).handle(job, ctx())).toBe("survived");
    expect(await vectors()).toHaveLength(1);
    await line.stop();
  });

  it("a fallback's answer is stored under the fallback's model, never the primary's", async () => {
    const primary = model("primary");
    const fallback = model("fallback");
    const embedder: Embedder = {
      info: primary,
      embed: async (texts) => ({ model: fallback, vectors: texts.map((t) => lexicalVector(t)) }),
      close: async () => {},
    };
    const line = await meaningLine(db, { embedder });
    const a = await put(db, "wire", "strike-w", TEXTS.strike);
    await through(line, a);
    expect((await vectors()).map((v) => v.model)).toEqual(["test:fallback@1"]);
    await line.stop();
  });
});

describe("stage 4 (meaning)", () => {
  it("links a grey-band pair at or above the model's threshold, with stage meaning and its cosine; undo keeps it apart", async () => {
    expect(greyCosine).toBeGreaterThan(0.3);
    const embedder = new FixedEmbedder(model("calibrated"));
    const line = await meaningLine(db, {
      embedder,
      calibration: calibration(embedder.info, greyCosine - 0.01, 0.1),
    });
    expect(line.stages.map((s) => s.name)).toEqual(["embed", "meaning"]);
    const a = await put(db, "wire", "rate-w", TEXTS.rate);
    const b = await put(db, "star", "rate-grey", grey);
    await through(line, a);
    // Dedup leaves b in review (stage 3's grey band); embed hands it to stage 4, which links it.
    expect(await through(line, b)).toEqual(["survived", "survived", "dropped"]);
    const state = await stateOf(db, b.entryKey);
    expect(state).toMatchObject({
      outcome: "duplicate",
      stage: "meaning",
      duplicateOf: a.entryKey,
    });
    const [link] = await db.prisma.$queryRaw<
      { id: bigint; score: number; evidence: { model: string } }[]
    >`
      SELECT id, score, evidence FROM dedup_links WHERE entry_key = ${b.entryKey} AND ended_at IS NULL`;
    expect(link?.score).toBeCloseTo(greyCosine, 4);
    expect(link?.evidence.model).toBe("test:calibrated@1");
    const [pending] = await db.prisma.$queryRaw<{ n: number }[]>`
      SELECT count(*)::int AS n FROM dedup_reviews WHERE state = 'pending'`;
    expect(pending?.n).toBe(0);

    // Undone by an operator: apart, and stage 4 does not link the pair again, even after an
    // edit that keeps it in the grey band.
    await undoLink(db, { linkId: String(link?.id) }, "op");
    expect(await stateOf(db, b.entryKey)).toMatchObject({ duplicateOf: null });
    const edited = await change(db, "star", "rate-grey", variantOf(TEXTS.rate, "review", 2));
    await through(line, edited);
    expect(await stateOf(db, b.entryKey)).toMatchObject({ duplicateOf: null });
    await line.stop();
  });

  it("a pair below the distinct threshold leaves review; one between the thresholds stays there", async () => {
    const distinct = new FixedEmbedder(model("strict"));
    let line = await meaningLine(db, {
      embedder: distinct,
      calibration: calibration(distinct.info, 0.999, greyCosine + 0.01),
    });
    const a = await put(db, "wire", "rate-w", TEXTS.rate);
    const b = await put(db, "star", "rate-grey", grey);
    await through(line, a);
    expect(await through(line, b)).toEqual(["survived", "survived", "survived"]);
    expect(await stateOf(db, b.entryKey)).toMatchObject({ outcome: "unique", duplicateOf: null });
    await line.stop();

    await db.prisma.$executeRawUnsafe(
      "TRUNCATE dedup_items, dedup_reviews, dedup_links, dedup_clusters, item_vectors, search_docs",
    );
    const unsure = new FixedEmbedder(model("unsure"));
    line = await meaningLine(db, {
      embedder: unsure,
      calibration: calibration(unsure.info, 0.999, 0.01),
    });
    await through(line, a);
    expect(await through(line, b)).toEqual(["survived", "survived", "survived"]);
    expect(await stateOf(db, b.entryKey)).toMatchObject({ outcome: "review" });
    const [pending] = await db.prisma.$queryRaw<{ n: number }[]>`
      SELECT count(*)::int AS n FROM dedup_reviews WHERE state = 'pending'`;
    expect(pending?.n).toBe(1);
    // Decided once per version: the same job again changes nothing.
    const job = { entryKey: b.entryKey, version: await versionOf(db, b.entryKey) };
    expect(await (line.stages[1] as Stage).handle(job, ctx())).toBe("survived");
    await line.stop();
  });

  it("is off for a model with no calibrated threshold, and for the lexical fallback", async () => {
    const line = await meaningLine(db, { embedder: new FixedEmbedder(model("uncalibrated")) });
    expect(line.stages.map((s) => s.name)).toEqual(["embed"]);
    await line.stop();
    const lexical = await meaningLine(db, {
      embedder: new FixedEmbedder(LEXICAL_MODEL),
      calibration: calibration(LEXICAL_MODEL, 0.5, 0.2),
    });
    expect(lexical.stages.map((s) => s.name)).toEqual(["embed"]);
    await lexical.stop();
  });
});
