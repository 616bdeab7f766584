import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { extractionCoverage } from "@/lib/dashboard/extractionCoverage";
import { DatabaseCallLedger } from "@/lib/embed/ledger";
import { LEXICAL_MODEL, lexicalVector } from "@/lib/embed/lexical";
import type { CallLedger, EmbedBatch, Embedder, ModelInfo } from "@/lib/embed/types";
import { cosine } from "@/lib/embed/vector";
import {
  type ExtractAttempt,
  type ExtractInput,
  type Extraction,
  ExtractionFailedError,
  type Extractor,
  type ExtractResult,
  type ExtractSubject,
} from "@/lib/extract/types";
import type { MeaningCalibration } from "@/lib/meaning/calibrations";
import { sleep } from "@/lib/sleep";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { dedupStage } from "@/workers/dedup/stage";
import {
  change,
  createOutlets,
  put,
  TEXTS,
  tombstone,
  variantOf,
  versionOf,
  type Written,
} from "@/workers/dedup/testing/items";
import { meaningLine } from "@/workers/embed/line";
import { passageText } from "@/workers/embed/targets";
import { createLine, type Line } from "@/workers/line/line";
import type { Stage, StageVerdict } from "@/workers/line/stage";
import { sweepStage } from "@/workers/line/sweep";
import { getDeadLetter, requeueDeadLetters } from "@/workers/queue/deadLetters";
import { toJobError } from "@/workers/queue/jobError";
import { PermanentJobError, type QueueWorker, startQueueWorker } from "@/workers/queue/queueWorker";
import { BACKFILL_PRIORITY, startExtractBackfill } from "./backfill";
import type { ExtractFailureDetail } from "./failure";
import { extractLine } from "./line";
import { runningExtractorId } from "./running";
import { EXTRACT_STAGE, extractStage } from "./stage";
import { storeExtraction } from "./store";
import { invalidExtractions, storedExtractions } from "./testing/rows";

// The extract stage on a real database with an Extractor of the test's own (the chain itself,
// its validation, corrections and fallovers, is lib/extract's; its HTTP side is
// http.line.test.ts): what the line sends to a provider, what it stores, and what it never does.

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
  await createOutlets(db);
});
afterAll(() => db?.drop());
beforeEach(async () => {
  await db.prisma.$executeRawUnsafe(
    `TRUNCATE news, news_events, dedup_items, dedup_clusters, dedup_cluster_events, dedup_links,
              dedup_reviews, dedup_settings, dedup_anchors, jobs, job_failures, lease_events,
              queue_claim_stats, queue_workers, admin_audit, item_vectors, search_docs,
              embedding_models, line_cursors, item_extractions, provider_calls RESTART IDENTITY`,
  );
});
afterEach(async () => {
  // Whatever a test did, nothing invalid was stored.
  expect(await invalidExtractions(db)).toEqual([]);
});

const VALID: Extraction = {
  language: "en",
  category: "economy",
  entities: [{ text: "Chittagong", type: "place" }],
  summary: null,
};

/**
 * An Extractor that answers `answer` (or throws `failWith`), recording one provider call per
 * extraction in `ledger` as the real chain does (purpose extract, the item, its version, source).
 */
class TestExtractor implements Extractor {
  readonly providers = [];
  readonly asked: { input: ExtractInput; subject?: ExtractSubject }[] = [];
  failWith: ExtractionFailedError | null = null;
  answer: Extraction = VALID;
  constructor(
    readonly id = "test:chain-a",
    private readonly ledger?: CallLedger,
  ) {}

  async extract(
    input: ExtractInput,
    options: { subject?: ExtractSubject } = {},
  ): Promise<ExtractResult> {
    this.asked.push({ input, subject: options.subject });
    const ok = this.failWith === null;
    this.ledger?.record({
      purpose: "extract",
      provider: "test",
      model: "test-1",
      ok,
      status: ok ? 200 : 500,
      items: 1,
      inputTokens: 40,
      outputTokens: 12,
      costUsd: 0.0001,
      latencyMs: 3,
      promptVersion: "p1",
      outcome: ok ? "ok" : "provider_error",
      entryKey: options.subject?.entryKey,
      itemVersion: options.subject?.itemVersion,
      sourceId: options.subject?.sourceId,
    });
    if (this.failWith) throw this.failWith;
    const attempt: ExtractAttempt = {
      provider: "test",
      model: "test-1",
      promptVersion: "p1",
      ok: true,
      outcome: "ok",
      error: null,
      correction: false,
      rawText: null,
      tokensIn: 40,
      tokensOut: 12,
      costUsd: 0.0001,
      latencyMs: 3,
      status: 200,
    };
    return {
      extraction: this.answer,
      provider: "test",
      model: "test-1",
      promptVersion: "p1",
      fellOver: false,
      attempts: [attempt],
      tokensIn: 40,
      tokensOut: 12,
      costUsd: 0.0001,
    };
  }
  async close() {}
}

const failedAttempt = (raw: string): ExtractAttempt => ({
  provider: "llm",
  model: "sim-extract-1",
  promptVersion: "extract-v1",
  ok: false,
  outcome: "schema_violation",
  error: "category: not one of the categories",
  correction: false,
  rawText: raw,
  tokensIn: 100,
  tokensOut: 40,
  costUsd: 0.00004,
  latencyMs: 12,
  status: 200,
});

const ctx = () => ({ db, signal: new AbortController().signal, attempt: 1 });

/** Dedup, then extract, for the item's current version, as the line hands on. */
async function through(extract: Stage, w: Written): Promise<StageVerdict[]> {
  const job = { entryKey: w.entryKey, version: await versionOf(db, w.entryKey) };
  const verdicts: StageVerdict[] = [await dedupStage(db).handle(job, ctx())];
  if (verdicts[0] === "survived") verdicts.push(await extract.handle(job, ctx()));
  return verdicts;
}

/** Provider calls per cluster (or item, when it has none) and version. */
const callsPerStory = () =>
  db.prisma.$queryRaw<{ story: string; item_version: number; calls: number }[]>`
    SELECT coalesce(d.cluster_id::text, c.entry_key) AS story, c.item_version,
           count(*)::int AS calls
    FROM provider_calls c LEFT JOIN dedup_items d ON d.entry_key = c.entry_key
    WHERE c.purpose = 'extract' GROUP BY 1, 2 ORDER BY 1, 2`;

describe("the extract stage", () => {
  it("extracts each canonical item once; a duplicate is never sent (one call per story and version); a retraction is not extracted", async () => {
    const ledger = new DatabaseCallLedger(db);
    const extractor = new TestExtractor("test:chain-a", ledger);
    const stage = extractStage(db, { extractor });
    const a = await put(db, "wire", "strike-w", TEXTS.strike);
    const copy = await put(db, "daily", "strike-d", {
      ...TEXTS.strike,
      link: "https://daily.example/x",
    });
    const near = await put(db, "star", "strike-s", variantOf(TEXTS.strike, "near"));
    const other = await put(db, "ittefaq", "rate-i", TEXTS.rate);
    expect(await through(stage, a)).toEqual(["survived", "survived"]);
    expect(await through(stage, copy)).toEqual(["dropped"]);
    expect(await through(stage, near)).toEqual(["dropped"]);
    expect(await through(stage, other)).toEqual(["survived", "survived"]);
    // A duplicate's job reaching the stage (a sweep, a requeue) is dropped without a call too.
    expect(await stage.handle({ entryKey: copy.entryKey, version: 1 }, ctx())).toBe("dropped");

    expect(extractor.asked.map((q) => q.subject?.entryKey).sort()).toEqual(
      [a.entryKey, other.entryKey].sort(),
    );
    expect(extractor.asked[0]).toMatchObject({
      input: { title: TEXTS.strike.title, summary: TEXTS.strike.summary },
      subject: { entryKey: a.entryKey, itemVersion: 1, sourceId: "wire" },
    });
    expect(await storedExtractions(db)).toEqual(
      [a.entryKey, other.entryKey].sort().map((entryKey) =>
        expect.objectContaining({
          entry_key: entryKey,
          item_version: 1,
          language: "en",
          category: "economy",
          entities: [{ text: "Chittagong", type: "place" }],
          provider: "test",
          model: "test-1",
          prompt_version: "p1",
          extractor: "test:chain-a",
          fell_over: false,
          calls: 1,
          tokens_in: 40,
          tokens_out: 12,
        }),
      ),
    );
    await ledger.close();
    expect((await callsPerStory()).map((c) => c.calls)).toEqual([1, 1]);

    // A retraction: dedup removes it and the extract job of that version calls nothing.
    const gone = await tombstone(db, "ittefaq", "rate-i");
    const job = { entryKey: gone.entryKey, version: gone.version };
    expect(await dedupStage(db).handle(job, ctx())).toBe("dropped");
    expect(await stage.handle(job, ctx())).toBe("dropped");
    expect(extractor.asked).toHaveLength(2);
  });

  it("a job for an older version calls nothing; the same job twice (a rerun after a crash) calls once", async () => {
    const extractor = new TestExtractor();
    const stage = extractStage(db, { extractor });
    const a = await put(db, "wire", "strike-w", TEXTS.strike);
    await through(stage, a);
    // The rerun of a job whose result is stored (its completion lost in a crash).
    expect(await stage.handle({ entryKey: a.entryKey, version: 1 }, ctx())).toBe("survived");
    expect(extractor.asked).toHaveLength(1);

    const edited = await change(db, "wire", "strike-w", {
      ...TEXTS.strike,
      title: `${TEXTS.strike.title} as cranes restart`,
    });
    expect(await stage.handle({ entryKey: a.entryKey, version: 1 }, ctx())).toBe("superseded");
    expect(extractor.asked).toHaveLength(1);
    // Version 2 before dedup decided it: a sweep racing dedup, retried by the queue.
    await expect(stage.handle({ entryKey: a.entryKey, version: 2 }, ctx())).rejects.toThrow(
      /dedup has not decided/,
    );
    expect(extractor.asked).toHaveLength(1);

    // A material edit re-extracts, at its version.
    expect(await through(stage, edited)).toEqual(["survived", "survived"]);
    expect(extractor.asked.map((q) => q.subject?.itemVersion)).toEqual([1, 2]);
    expect(extractor.asked[1]?.input.title).toMatch(/as cranes restart$/);
    expect((await storedExtractions(db)).map((r) => r.item_version)).toEqual([2]);

    // The store's guard: a late result for version 1 (a job that called before the edit and
    // stores after) changes nothing, whichever chain made it.
    const late = await new TestExtractor("test:chain-b").extract({ title: "late" });
    for (const chain of ["test:chain-a", "test:chain-b"]) {
      expect(
        await storeExtraction(db, {
          entryKey: a.entryKey,
          itemVersion: 1,
          sourceId: "wire",
          extractor: chain,
          result: { ...late, extraction: { ...VALID, category: "sports" } },
        }),
      ).toBe(false);
    }
    expect(await storedExtractions(db)).toEqual([
      expect.objectContaining({ item_version: 2, category: "economy", extractor: "test:chain-a" }),
    ]);
  });

  it("an extraction the schema refuses is never stored, whatever the Extractor says", async () => {
    const extractor = new TestExtractor();
    extractor.answer = { ...VALID, category: "gossip" as Extraction["category"] };
    const stage = extractStage(db, { extractor });
    const a = await put(db, "wire", "strike-w", TEXTS.strike);
    expect(await dedupStage(db).handle({ entryKey: a.entryKey, version: 1 }, ctx())).toBe(
      "survived",
    );
    await expect(stage.handle({ entryKey: a.entryKey, version: 1 }, ctx())).rejects.toThrow(
      /does not validate/,
    );
    expect(await storedExtractions(db)).toEqual([]);
  });

  it("every provider failed: the job error carries each attempt's raw answer and error, bounded; bad input is permanent", async () => {
    const extractor = new TestExtractor();
    const stage = extractStage(db, { extractor });
    const a = await put(db, "wire", "strike-w", TEXTS.strike);
    await dedupStage(db).handle({ entryKey: a.entryKey, version: 1 }, ctx());
    const huge = `{"language":"fr","category":"gossip","summary":"${"x".repeat(5_000)}"}`;
    extractor.failWith = new ExtractionFailedError("no provider gave a valid answer", [
      failedAttempt(huge.slice(0, 4_096)),
      { ...failedAttempt(huge.slice(0, 4_096)), correction: true },
      { ...failedAttempt("not json at all"), outcome: "malformed", error: "Unexpected token" },
      { ...failedAttempt("\u0000".repeat(4_000)), outcome: "malformed", error: "control bytes" },
    ]);
    const err = await stage.handle({ entryKey: a.entryKey, version: 1 }, ctx()).catch((e) => e);
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(PermanentJobError);
    expect(err.message).toBe(
      "extract: no valid extraction: llm schema_violation, llm (correction) schema_violation, llm malformed, llm malformed",
    );
    const stored = toJobError(err);
    expect(stored.code).toBe("malformed");
    const detail = stored.detail as ExtractFailureDetail;
    expect(JSON.stringify(detail).length).toBeLessThanOrEqual(12_100);
    expect(detail.attempts.map((x) => [x.outcome, x.correction, x.error])).toEqual([
      ["schema_violation", false, "category: not one of the categories"],
      ["schema_violation", true, "category: not one of the categories"],
      ["malformed", false, "Unexpected token"],
      ["malformed", false, "control bytes"],
    ]);
    expect(detail.attempts[0]?.rawText).toMatch(/^\{"language":"fr","category":"gossip"/);
    expect(detail.attempts[2]?.rawText).toBe("not json at all");
    expect(await storedExtractions(db)).toEqual([]);

    extractor.failWith = new ExtractionFailedError("title is empty", [], true);
    const permanent = await stage
      .handle({ entryKey: a.entryKey, version: 1 }, ctx())
      .catch((e) => e);
    expect(permanent).toBeInstanceOf(PermanentJobError);
    expect(toJobError(permanent).detail).toEqual({ kind: "extract", attempts: [] });
  });

  it("with stage 4 on, an item in review waits for its verdict, and one stage 4 links is never sent", async () => {
    const grey = variantOf(TEXTS.rate, "review");
    const embedder = new FixedEmbedder(model("calibrated"));
    const meaning = await meaningLine(db, {
      embedder,
      calibration: calibration(embedder.info, greyCosine(grey) - 0.01, 0.1),
      handsOn: [EXTRACT_STAGE],
    });
    expect(meaning.meaningRuns).toBe(true);
    expect(meaning.stages.map((s) => [s.name, s.handsOn])).toEqual([
      ["embed", ["meaning"]],
      ["meaning", ["extract"]],
    ]);
    const extractor = new TestExtractor();
    const stage = extractStage(db, { extractor, afterMeaning: true });
    const a = await put(db, "wire", "rate-w", TEXTS.rate);
    const b = await put(db, "star", "rate-grey", grey);
    for (const w of [a, b]) {
      const job = { entryKey: w.entryKey, version: 1 };
      expect(await dedupStage(db).handle(job, ctx())).toBe("survived");
      if (w === b) {
        // The sweep (or a requeue) reaching extract before stage 4: retried, nothing sent.
        await expect(stage.handle(job, ctx())).rejects.toThrow(/stage 4 has not decided/);
        expect((await sweepStage(db, stage)).enqueued).toBe(1); // only a: b is not extractable yet
      }
      for (const s of meaning.stages) await s.handle(job, ctx());
    }
    expect(await stage.handle({ entryKey: a.entryKey, version: 1 }, ctx())).toBe("survived");
    expect(await stage.handle({ entryKey: b.entryKey, version: 1 }, ctx())).toBe("dropped");
    expect(extractor.asked.map((q) => q.subject?.entryKey)).toEqual([a.entryKey]);
    await meaning.stop();
  });

  it("the sweep finds survivors with no extraction at their version, nothing once they have one, and leaves history to the backfill", async () => {
    const extractor = new TestExtractor();
    const stage = extractStage(db, { extractor });
    const items = [
      await put(db, "wire", "a", TEXTS.strike),
      await put(db, "daily", "b", TEXTS.strike),
      await put(db, "star", "c", TEXTS.flood),
    ];
    for (const w of items) await dedupStage(db).handle({ entryKey: w.entryKey, version: 1 }, ctx());
    expect((await sweepStage(db, stage)).enqueued).toBe(2);
    const jobs = await db.prisma.$queryRaw<{ key: string; max_attempts: number }[]>`
      SELECT key, max_attempts FROM jobs WHERE queue = 'extract' ORDER BY key`;
    expect(jobs.map((j) => j.key).sort()).toEqual(
      [`${items[0]?.entryKey}@1`, `${items[2]?.entryKey}@1`].sort(),
    );
    expect(jobs.every((j) => j.max_attempts === 10)).toBe(true);
    for (const j of jobs) {
      const [entryKey] = j.key.split("@");
      await stage.handle({ entryKey: entryKey as string, version: 1 }, ctx());
    }
    await db.prisma.$executeRaw`DELETE FROM jobs`;
    await db.prisma.$executeRaw`DELETE FROM line_cursors`;
    expect((await sweepStage(db, stage)).enqueued).toBe(0);

    // Decided over an hour ago with no extraction (history, on the first start with extraction
    // on): not the sweep's, at the line's priority; the backfill's, at −10.
    const old = await put(db, "observer", "old", TEXTS.cricket);
    await dedupStage(db).handle({ entryKey: old.entryKey, version: 1 }, ctx());
    await db.prisma.$executeRaw`
      UPDATE dedup_items SET decided_at = now() - interval '61 minutes'
      WHERE entry_key = ${old.entryKey}`;
    await db.prisma.$executeRaw`DELETE FROM line_cursors`;
    expect((await sweepStage(db, stage)).enqueued).toBe(0);
    const backfill = startExtractBackfill(db, { extractorId: extractor.id, intervalMs: 3_600_000 });
    await backfill.round();
    expect(
      await db.prisma.$queryRaw<{ key: string; priority: number }[]>`
        SELECT key, priority FROM jobs WHERE queue = 'extract'`,
    ).toEqual([{ key: `${old.entryKey}@1`, priority: BACKFILL_PRIORITY }]);
    await backfill.stop();
  });
});

describe("on the queue", () => {
  const running: { line: Line; worker: QueueWorker }[] = [];
  afterEach(async () => {
    for (const r of running.splice(0)) {
      await r.line.stop();
      await r.worker.stop(2_000);
    }
  });

  async function startLine(stages: Stage[]) {
    const line = createLine(db, stages, { sweepMs: 100, listen: false });
    const worker = await startQueueWorker(db, {
      queues: line.queues,
      pollMs: 50,
      sweepMs: 100,
      reportMs: 60_000,
    });
    await line.start();
    running.push({ line, worker });
  }

  it("dedup hands survivors on through embed to extract; a failing chain dead-letters in stage extract with its attempts; the requeue extracts once", async () => {
    const extractor = new TestExtractor();
    extractor.failWith = new ExtractionFailedError("no provider gave a valid answer", [
      failedAttempt('{"language":"fr"}'),
    ]);
    const meaning = await meaningLine(db, {
      embedder: new FixedEmbedder(model("plain")),
      handsOn: [EXTRACT_STAGE],
    });
    expect(meaning.meaningRuns).toBe(false);
    const extract = extractLine(db, {
      extractor,
      afterMeaning: meaning.meaningRuns,
      maxAttempts: 2,
      retry: { baseDelaySeconds: 0.05, maxDelaySeconds: 0.1 },
      backfill: { intervalMs: 3_600_000 },
    });
    await startLine([dedupStage(db, { handsOn: ["embed"] }), ...meaning.stages, extract.stage]);
    extract.start();
    const a = await put(db, "wire", "strike-w", TEXTS.strike);
    await put(db, "daily", "strike-d", { ...TEXTS.strike, link: "https://daily.example/x" });
    await until(
      "a dead letter in stage extract",
      async () =>
        (
          await db.prisma.$queryRaw<{ n: number }[]>`
          SELECT count(*)::int AS n FROM jobs WHERE queue = 'extract' AND state = 'dead'`
        )[0]?.n === 1,
    );
    const [row] = await db.prisma.$queryRaw<{ id: string }[]>`
      SELECT id::text AS id FROM jobs WHERE queue = 'extract' AND state = 'dead'`;
    const letter = await getDeadLetter(db, row?.id as string);
    expect(letter).toMatchObject({
      stage: "extract",
      key: `${a.entryKey}@1`,
      attempts: 2,
      maxAttempts: 2,
      lastError: {
        code: "schema_violation",
        message: "extract: no valid extraction: llm schema_violation",
        detail: {
          kind: "extract",
          attempts: [
            expect.objectContaining({
              provider: "llm",
              outcome: "schema_violation",
              rawText: '{"language":"fr"}',
              error: "category: not one of the categories",
            }),
          ],
        },
      },
    });
    expect(letter?.failures.map((f) => (f.error.detail as ExtractFailureDetail).kind)).toEqual([
      "extract",
      "extract",
    ]);
    // Only the canonical was ever asked about, twice (its two attempts).
    expect(new Set(extractor.asked.map((q) => q.subject?.entryKey))).toEqual(new Set([a.entryKey]));
    expect(await storedExtractions(db)).toEqual([]);
    // The sweep leaves a dead letter alone.
    await sleep(300);
    expect(extractor.asked).toHaveLength(2);

    extractor.failWith = null;
    expect(
      await requeueDeadLetters(db, { actor: "test", filter: { queue: EXTRACT_STAGE } }),
    ).toMatchObject({ requeued: 1 });
    await until(
      "the requeued job extracted",
      async () => (await storedExtractions(db)).length === 1,
    );
    await sleep(300);
    expect(extractor.asked).toHaveLength(3);
    expect(runningExtractorId()).toBe("test:chain-a");
    await extract.stop();
    expect(runningExtractorId()).toBeNull();
    await meaning.stop();
  });
});

describe("a chain change", () => {
  it("re-extracts every canonical item as a backfill at low priority, never more than maxQueued waiting; coverage counts it", async () => {
    const a = new TestExtractor("test:chain-a");
    const stageA = extractStage(db, { extractor: a });
    const items: Written[] = [];
    for (const [i, text] of [TEXTS.strike, TEXTS.rate, TEXTS.flood].entries()) {
      items.push(await put(db, ["wire", "star", "daily"][i] as string, `old-${i}`, text));
    }
    const dup = await put(db, "ittefaq", "dup", { ...TEXTS.rate, link: "https://x.example/r" });
    for (const w of [...items, dup]) await through(stageA, w);
    expect(await extractionCoverage(db)).toEqual({
      extractor: "test:chain-a",
      canonical: 3,
      done: 3,
      remaining: 0,
      ratio: 1,
    });

    // Another chain configured (a model or prompt change): nothing of it yet.
    const b = new TestExtractor("test:chain-b");
    const stageB = extractStage(db, { extractor: b });
    expect(await extractionCoverage(db, b.id)).toMatchObject({ done: 0, remaining: 3, ratio: 0 });
    const backfill = startExtractBackfill(db, {
      extractorId: b.id,
      intervalMs: 3_600_000,
      pageSize: 2,
      maxQueued: 1,
    });
    const priorities: number[] = [];
    for (let round = 0; round < 10 && !backfill.complete(); round++) {
      await backfill.round();
      const jobs = await db.prisma.$queryRaw<
        { id: bigint; payload: { entryKey: string; version: number }; priority: number }[]
      >`SELECT id, payload, priority FROM jobs WHERE queue = 'extract' AND state = 'ready'`;
      expect(jobs.length).toBeLessThanOrEqual(1);
      for (const j of jobs) {
        priorities.push(j.priority);
        await stageB.handle(j.payload, ctx());
      }
      await db.prisma.$executeRaw`DELETE FROM jobs WHERE queue = 'extract'`;
    }
    expect(backfill.complete()).toBe(true);
    expect(priorities).toEqual([BACKFILL_PRIORITY, BACKFILL_PRIORITY, BACKFILL_PRIORITY]);
    expect(b.asked.map((q) => q.subject?.entryKey).sort()).toEqual(
      items.map((w) => w.entryKey).sort(),
    );
    expect((await storedExtractions(db)).map((r) => r.extractor)).toEqual([
      "test:chain-b",
      "test:chain-b",
      "test:chain-b",
    ]);
    expect(await extractionCoverage(db)).toMatchObject({
      extractor: "test:chain-b",
      done: 3,
      ratio: 1,
    });
    expect(await extractionCoverage(db, a.id)).toMatchObject({ done: 0, remaining: 3 });
    // A later walk (an hour on) with nothing to do stays complete and enqueues nothing.
    await backfill.round();
    expect(backfill.complete()).toBe(true);
    expect(await db.prisma.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM jobs`).toEqual(
      [{ n: 0 }],
    );
    // The line's own job for an item the backfill re-extracted calls nothing more.
    expect(await stageB.handle({ entryKey: items[0]?.entryKey as string, version: 1 }, ctx())).toBe(
      "survived",
    );
    expect(b.asked).toHaveLength(3);
    await backfill.stop();
  });
});

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 20_000) {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await check()) return;
    await sleep(25);
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** An embedder whose vectors are the lexical ones, presented as model `info` (as embed's tests). */
class FixedEmbedder implements Embedder {
  constructor(readonly info: ModelInfo) {}
  async embed(texts: string[]): Promise<EmbedBatch> {
    return { model: this.info, vectors: texts.map((t) => lexicalVector(t, this.info.dims)) };
  }
  async close() {}
}

function model(name: string): ModelInfo {
  return {
    ...LEXICAL_MODEL,
    model: `test:${name}@1`,
    provider: "shipped",
    name,
    version: "1",
    kind: "meaning",
  };
}

function greyCosine(grey: { title: string; summary: string }): number {
  return cosine(
    lexicalVector(passageText(TEXTS.rate.title, TEXTS.rate.summary)),
    lexicalVector(passageText(grey.title, grey.summary)),
  );
}

/** Stage 4's thresholds for `info`, as an operator's calibration file would give them. */
function calibration(
  info: ModelInfo,
  meaningThreshold: number,
  distinctThreshold: number,
): MeaningCalibration {
  return {
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
  };
}
