import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Clock } from "@/lib/backoff";
import { DatabaseCallLedger } from "@/lib/embed/ledger";
import {
  createExtractor,
  type ExtractionProvider,
  LocalProvider,
  OpenAICompatibleProvider,
} from "@/lib/extract";
import { sleep } from "@/lib/sleep";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { CHAT_MODEL } from "@/simulator/chat";
import { type Simulator, startSimulator } from "@/simulator/server";
import { dedupStage } from "@/workers/dedup/stage";
import { createOutlets, put, TEXTS, type Written } from "@/workers/dedup/testing/items";
import { createLine, type Line } from "@/workers/line/line";
import type { Stage } from "@/workers/line/stage";
import { getDeadLetter, requeueDeadLetters } from "@/workers/queue/deadLetters";
import { type QueueWorker, startQueueWorker } from "@/workers/queue/queueWorker";
import type { ExtractFailureDetail } from "./failure";
import { EXTRACT_STAGE, extractStage } from "./stage";
import { invalidExtractions, storedExtractions } from "./testing/rows";

// The acceptance checks for the extract stage, through the simulator's OpenAI-compatible
// chat endpoint over real HTTP (simulator/chat.ts), the real chain (lib/extract), the real
// database, cost ledger and queue. Each test ends with every stored row checked against the
// declared schema.

let sim: Simulator;
let db: TestDatabase;
let ledger: DatabaseCallLedger;
beforeAll(async () => {
  [sim, db] = await Promise.all([startSimulator({ seed: 15, manual: true }), createTestDatabase()]);
  await createOutlets(db);
});
afterAll(async () => {
  await Promise.all([sim.stop(), db.drop()]);
});
beforeEach(async () => {
  sim.control.clearAll();
  ledger = new DatabaseCallLedger(db);
  await db.prisma.$executeRawUnsafe(
    `TRUNCATE news, news_events, dedup_items, dedup_clusters, dedup_cluster_events, dedup_links,
              dedup_reviews, dedup_settings, dedup_anchors, jobs, job_failures, lease_events,
              queue_claim_stats, queue_workers, admin_audit, line_cursors, item_extractions,
              provider_calls RESTART IDENTITY`,
  );
});
afterEach(async () => {
  await ledger.close();
  expect(await invalidExtractions(db)).toEqual([]);
});

/**
 * Time as the chain and the llm provider see it (Retry-After holds, back-off waits), moved by the
 * test: a wait passes at once, moving it on.
 */
let now = Date.now();
const clock: Clock = {
  now: () => now,
  sleep: async (ms) => {
    now += ms;
  },
  random: Math.random,
};

/** The llm provider on the simulator, with quick HTTP retries so a test does not wait seconds. */
function llm(): OpenAICompatibleProvider {
  return new OpenAICompatibleProvider({
    baseUrl: `${sim.url}/v1`,
    model: CHAT_MODEL,
    attempts: 2,
    backoff: { baseMs: 5, capMs: 20 },
    timeoutMs: 5_000,
    clock,
  });
}

function chain(...providers: ExtractionProvider[]) {
  return createExtractor({ providers, ledger, clock });
}

const ctx = () => ({ db, signal: new AbortController().signal, attempt: 1 });

/** Dedup, then extract, for item@1: the verdict, or what the stage threw. */
async function through(stage: Stage, w: Written) {
  const job = { entryKey: w.entryKey, version: 1 };
  expect(await dedupStage(db).handle(job, ctx())).toBe("survived");
  return stage.handle(job, ctx()).catch((e: Error) => e);
}

interface CallRow {
  entry_key: string;
  provider: string;
  model: string;
  outcome: string;
  correction: boolean;
  status: number | null;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
}
async function calls(entryKey?: string): Promise<CallRow[]> {
  await ledger.flush();
  const rows = await db.prisma.$queryRaw<CallRow[]>`
    SELECT entry_key, provider, model, outcome, correction, status, input_tokens, output_tokens,
           cost_usd
    FROM provider_calls WHERE purpose = 'extract' ORDER BY id`;
  return entryKey ? rows.filter((r) => r.entry_key === entryKey) : rows;
}
const brief = (rows: CallRow[]) =>
  rows.map((r) => `${r.provider}${r.correction ? "+c" : ""}:${r.outcome}`);

describe("the extract stage through the simulator's chat endpoint", () => {
  it("answers valid: stored with provider, model, tokens and cost; the call costed per item", async () => {
    const stage = extractStage(db, { extractor: chain(llm(), new LocalProvider()) });
    const a = await put(db, "wire", "strike", TEXTS.strike);
    expect(await through(stage, a)).toBe("survived");
    const [row] = await storedExtractions(db);
    expect(row).toMatchObject({
      entry_key: a.entryKey,
      provider: "llm",
      model: CHAT_MODEL,
      fell_over: false,
      calls: 1,
      language: "en",
    });
    const [call] = await calls(a.entryKey);
    expect(call).toMatchObject({ provider: "llm", model: CHAT_MODEL, outcome: "ok", status: 200 });
    expect(call?.input_tokens).toBeGreaterThan(20);
    expect(call?.cost_usd).toBeGreaterThan(0);
    expect(row?.tokens_in).toBe(call?.input_tokens);
    expect(row?.cost_usd).toBeCloseTo(call?.cost_usd ?? -1, 12);
  });

  it("malformed → one correction retry → the valid answer stored", async () => {
    const stage = extractStage(db, { extractor: chain(llm(), new LocalProvider()) });
    sim.control.inject("llm", { kind: "malformed", calls: 1 });
    const a = await put(db, "wire", "strike", TEXTS.strike);
    expect(await through(stage, a)).toBe("survived");
    expect(brief(await calls(a.entryKey))).toEqual(["llm:malformed", "llm+c:ok"]);
    expect(sim.chat.stats.corrections).toBe(1);
    expect(await storedExtractions(db)).toEqual([
      expect.objectContaining({ provider: "llm", fell_over: false, calls: 2 }),
    ]);
  });

  it("schema-violating twice → falls over to the local provider", async () => {
    const stage = extractStage(db, { extractor: chain(llm(), new LocalProvider()) });
    sim.control.inject("llm", { kind: "schema", calls: 2 });
    const a = await put(db, "wire", "rate", TEXTS.rate);
    expect(await through(stage, a)).toBe("survived");
    expect(brief(await calls(a.entryKey))).toEqual([
      "llm:schema_violation",
      "llm+c:schema_violation",
      "local:ok",
    ]);
    const [row] = await storedExtractions(db);
    expect(row).toMatchObject({ provider: "local", model: "local-rules@1", fell_over: true });
    expect(row?.calls).toBe(3);
    expect(row?.cost_usd).toBeGreaterThan(0); // the two refused llm answers were paid for
  });

  it("429 with Retry-After → the next provider within the same job; the first skipped until Retry-After passes", async () => {
    const extractor = chain(llm(), new LocalProvider());
    const stage = extractStage(db, { extractor });
    // 60 s is past the provider's longest wait (30 s): it gives up at once, as rate_limited.
    sim.control.inject("llm", { kind: "429", retryAfter: 60 });
    const first = await put(db, "wire", "strike", TEXTS.strike);
    expect(await through(stage, first)).toBe("survived");
    expect(brief(await calls(first.entryKey))).toEqual(["llm:rate_limited", "local:ok"]);
    const requests = sim.chat.stats.requests;

    // 59 s later the llm is still held back: not called, the local provider answers.
    now += 59_000;
    sim.control.clearAll();
    const second = await put(db, "star", "flood", TEXTS.flood);
    expect(await through(stage, second)).toBe("survived");
    expect(brief(await calls(second.entryKey))).toEqual(["llm:skipped", "local:ok"]);
    expect(sim.chat.stats.requests).toBe(requests);

    // Past the Retry-After: asked again.
    now += 2_000;
    const third = await put(db, "daily", "cricket", TEXTS.cricket);
    expect(await through(stage, third)).toBe("survived");
    expect(brief(await calls(third.entryKey))).toEqual(["llm:ok"]);
    expect((await storedExtractions(db)).map((r) => [r.entry_key, r.provider]).sort()).toEqual(
      [
        [first.entryKey, "local"],
        [second.entryKey, "local"],
        [third.entryKey, "llm"],
      ].sort(),
    );
  });
});

describe("on the line, through the queue", () => {
  const running: { line: Line; worker: QueueWorker }[] = [];
  afterEach(async () => {
    for (const r of running.splice(0)) {
      await r.line.stop();
      await r.worker.stop(2_000);
    }
  });
  async function startLine(stage: Stage) {
    const line = createLine(db, [dedupStage(db, { handsOn: [EXTRACT_STAGE] }), stage], {
      sweepMs: 100,
    });
    const worker = await startQueueWorker(db, {
      queues: line.queues,
      pollMs: 50,
      sweepMs: 100,
      reportMs: 60_000,
    });
    await line.start();
    running.push({ line, worker });
  }

  it("a duplicate is never sent to a provider: one call per story and version", async () => {
    await startLine(extractStage(db, { extractor: chain(llm(), new LocalProvider()) }));
    const copies = [
      await put(db, "wire", "s-w", TEXTS.strike),
      await put(db, "daily", "s-d", { ...TEXTS.strike, link: "https://daily.example/s" }),
      await put(db, "star", "s-s", { ...TEXTS.strike, link: "https://star.example/s" }),
    ];
    await put(db, "ittefaq", "r-i", TEXTS.rate);
    await put(db, "observer", "r-o", { ...TEXTS.rate, link: "https://observer.example/r" });
    await until("two stories extracted", async () => (await storedExtractions(db)).length === 2);
    await sleep(500); // time for a wrong third call to show
    await ledger.flush();
    const perStory = await db.prisma.$queryRaw<{ story: string; version: number; n: number }[]>`
      SELECT coalesce(d.cluster_id::text, c.entry_key) AS story, c.item_version AS version,
             count(*)::int AS n
      FROM provider_calls c LEFT JOIN dedup_items d ON d.entry_key = c.entry_key
      WHERE c.purpose = 'extract' GROUP BY 1, 2`;
    expect(perStory.map((s) => s.n)).toEqual([1, 1]);
    const [canonical] = await db.prisma.$queryRaw<{ canonical_key: string }[]>`
      SELECT c.canonical_key FROM dedup_clusters c JOIN dedup_items d ON d.cluster_id = c.id
      WHERE d.entry_key = ${copies[0]?.entryKey}`;
    // The copies read the story's extraction through their canonical.
    const dups = await db.prisma.$queryRaw<{ duplicate_of: string }[]>`
      SELECT n.duplicate_of FROM news n
      WHERE n.entry_key = ANY(${copies.map((c) => c.entryKey)}::text[]) AND n.duplicate_of IS NOT NULL`;
    expect(dups.map((d) => d.duplicate_of)).toEqual([
      canonical?.canonical_key,
      canonical?.canonical_key,
    ]);
    expect((await storedExtractions(db)).map((r) => r.entry_key)).toContain(
      canonical?.canonical_key,
    );
  });

  it("every provider failing → a dead letter in stage extract with the raw answers and errors; requeued after the fault is cleared → extracted once", async () => {
    await startLine(
      extractStage(db, {
        extractor: chain(llm()),
        maxAttempts: 2,
        retry: { baseDelaySeconds: 0.05, maxDelaySeconds: 0.1 },
      }),
    );
    sim.control.inject("llm", { kind: "malformed" });
    const a = await put(db, "wire", "strike", TEXTS.strike);
    await until(
      "a dead letter in stage extract",
      async () =>
        (
          await db.prisma.$queryRaw<{ n: number }[]>`
            SELECT count(*)::int AS n FROM jobs WHERE queue = 'extract' AND state = 'dead'`
        )[0]?.n === 1,
    );
    const [job] = await db.prisma.$queryRaw<{ id: string }[]>`
      SELECT id::text AS id FROM jobs WHERE queue = 'extract' AND state = 'dead'`;
    const letter = await getDeadLetter(db, job?.id as string);
    expect(letter).toMatchObject({ stage: "extract", key: `${a.entryKey}@1`, attempts: 2 });
    expect(letter?.lastError?.message).toBe(
      "extract: no valid extraction: llm malformed, llm (correction) malformed",
    );
    expect(letter?.lastError?.code).toBe("malformed");
    const detail = letter?.lastError?.detail as ExtractFailureDetail;
    expect(detail.attempts.map((x) => [x.provider, x.model, x.outcome, x.correction])).toEqual([
      ["llm", CHAT_MODEL, "malformed", false],
      ["llm", CHAT_MODEL, "malformed", true],
    ]);
    for (const x of detail.attempts) {
      expect(x.rawText?.length).toBeGreaterThan(0);
      expect(x.error?.length).toBeGreaterThan(0);
      expect(x.status).toBe(200);
    }
    expect(letter?.failures).toHaveLength(2);
    expect(await storedExtractions(db)).toEqual([]);

    // `sim clear llm`, then the dashboard's requeue: extracted once.
    expect(sim.control.clear("llm")).toBe(1);
    const before = (await calls(a.entryKey)).length;
    expect(
      await requeueDeadLetters(db, { actor: "test", filter: { queue: EXTRACT_STAGE } }),
    ).toMatchObject({ requeued: 1 });
    await until(
      "the requeued job extracted",
      async () => (await storedExtractions(db)).length === 1,
    );
    await sleep(400);
    expect(brief((await calls(a.entryKey)).slice(before))).toEqual(["llm:ok"]);
    expect(await storedExtractions(db)).toEqual([
      expect.objectContaining({ entry_key: a.entryKey, provider: "llm", calls: 1 }),
    ]);
    expect(await db.prisma.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM jobs`).toEqual(
      [{ n: 0 }],
    );
  });
});

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 30_000) {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await check()) return;
    await sleep(25);
  }
  throw new Error(`timed out waiting for ${what}`);
}
