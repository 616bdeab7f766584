import fc from "fast-check";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Clock } from "@/lib/backoff";
import { DatabaseCallLedger, MemoryCallLedger } from "@/lib/embed/ledger";
import type { ProviderCallRecord } from "@/lib/embed/types";
import { type EventMap, on } from "@/lib/events";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { type Simulator, startSimulator } from "@/simulator/server";
import { createExtractor, dailySpend, utcDayStart } from "./chain";
import { BUILT_IN_PRICES } from "./prices";
import { DEFAULT_TICKERS, LOCAL_MODEL, LocalProvider } from "./providers/local";
import { OpenAICompatibleProvider, PROMPT_VERSION } from "./providers/openaiCompatible";
import { validateExtraction } from "./schema";
import {
  EXTRACT_FAILURE_CODES,
  ExtractionFailedError,
  type ExtractionProvider,
  type ProviderAnswer,
} from "./types";

// The chain over real HTTP: the simulator's chat endpoint as the llm provider (its faults), the
// local provider behind it, the ledger on a real database (PGlite, or TEST_DATABASE_URL).

let sim: Simulator;
let db: TestDatabase;
beforeAll(async () => {
  [sim, db] = await Promise.all([startSimulator({ seed: 11, manual: true }), createTestDatabase()]);
});
afterAll(async () => {
  await Promise.all([sim.stop(), db.drop()]);
});
afterEach(() => sim.control.clearAll());

function testClock(): Clock & { advance(ms: number): void } {
  let t = Date.now();
  return {
    now: () => t,
    sleep: async (ms) => {
      t += ms;
    },
    random: () => 0.5,
    advance: (ms) => {
      t += ms;
    },
  };
}

function chain<L extends MemoryCallLedger | DatabaseCallLedger = MemoryCallLedger>(
  options: {
    clock?: Clock;
    ledger?: L;
    budget?: Parameters<typeof createExtractor>[0]["budget"];
    llmOnly?: boolean;
  } = {},
) {
  const clock = options.clock ?? testClock();
  const llm = new OpenAICompatibleProvider({
    baseUrl: `${sim.url}/v1`,
    model: "sim-extract-1",
    prices: BUILT_IN_PRICES,
    clock,
    backoff: { baseMs: 10, capMs: 40 },
  });
  const providers: ExtractionProvider[] = options.llmOnly
    ? [llm]
    : [llm, new LocalProvider({ tickers: DEFAULT_TICKERS })];
  const ledger = (options.ledger ?? new MemoryCallLedger()) as L;
  return {
    ledger,
    clock,
    extractor: createExtractor({
      providers,
      ledger,
      clock,
      ...(options.budget ? { budget: options.budget } : {}),
    }),
  };
}

const item = {
  title: "Floods hit Sylhet as rivers swell",
  summary: "Heavy rain for three days in Sunamganj.",
};
const subject = { entryKey: "src-a:guid-1", itemVersion: 2, sourceId: "src-a" };

/** A ledger row as the contract has it: every field present and of its kind. */
function expectWellFormed(row: ProviderCallRecord) {
  expect(row).toMatchObject({ purpose: "extract", items: 1 });
  expect(["llm", "local"]).toContain(row.provider);
  expect(["ok", ...EXTRACT_FAILURE_CODES]).toContain(row.outcome);
  expect(row.ok).toBe(row.outcome === "ok");
  expect(row.ok ? row.error : typeof row.error).toBe(row.ok ? null : "string");
  for (const n of [row.inputTokens, row.outputTokens, row.costUsd, row.latencyMs]) {
    expect(Number.isFinite(n) && (n as number) >= 0).toBe(true);
  }
  expect(typeof row.correction).toBe("boolean");
  expect(row.promptVersion).toBe(row.provider === "llm" ? PROMPT_VERSION : "local-v1");
  if (row.provider === "local")
    expect([row.costUsd, row.inputTokens, row.outputTokens]).toEqual([0, 0, 0]);
}

describe("extraction chain over the simulator's chat endpoint", () => {
  it("answers with the first provider when it answers valid: one call, its cost, the item on the row", async () => {
    const { extractor, ledger } = chain();
    expect(extractor.id).toBe(`llm:sim-extract-1/${PROMPT_VERSION}>local:${LOCAL_MODEL}/local-v1`);
    const result = await extractor.extract(item, { subject });
    expect(result).toMatchObject({
      provider: "llm",
      model: "sim-extract-1",
      promptVersion: PROMPT_VERSION,
      fellOver: false,
    });
    expect(validateExtraction(result.extraction)).toEqual({ ok: true, value: result.extraction });
    expect(result.attempts.map((a) => a.outcome)).toEqual(["ok"]);
    expect(result.costUsd).toBeGreaterThan(0);
    expect(result.costUsd).toBe(result.attempts[0]?.costUsd);
    expect(ledger.calls).toHaveLength(1);
    expect(ledger.calls[0]).toMatchObject({
      ...subject,
      outcome: "ok",
      correction: false,
      status: 200,
      attempt: 1,
    });
    ledger.calls.forEach(expectWellFormed);
  });

  it("malformed → one correction retry with the errors fed back → valid", async () => {
    sim.control.inject("llm", { kind: "malformed", calls: 1 });
    const corrections = sim.chat.stats.corrections;
    const { extractor, ledger } = chain();
    const result = await extractor.extract(item, { subject });
    expect(result).toMatchObject({ provider: "llm", fellOver: false });
    expect(result.attempts.map((a) => [a.outcome, a.correction])).toEqual([
      ["malformed", false],
      ["ok", true],
    ]);
    expect(result.attempts[0]?.rawText).toBeTruthy();
    expect(result.attempts[0]?.costUsd).toBeGreaterThan(0); // a billed bad answer still costs
    expect(result.costUsd).toBeCloseTo(
      (result.attempts[0]?.costUsd ?? 0) + (result.attempts[1]?.costUsd ?? 0),
      12,
    );
    expect(sim.chat.stats.corrections).toBe(corrections + 1);
    ledger.calls.forEach(expectWellFormed);
  });

  it("schema-violating twice → falls over to the local provider, every refusal on record", async () => {
    sim.control.inject("llm", { kind: "schema", calls: 2 });
    const { extractor, ledger } = chain();
    const result = await extractor.extract(item, { subject });
    expect(result).toMatchObject({ provider: "local", model: LOCAL_MODEL, fellOver: true });
    expect(result.attempts.map((a) => [a.provider, a.outcome, a.correction])).toEqual([
      ["llm", "schema_violation", false],
      ["llm", "schema_violation", true],
      ["local", "ok", false],
    ]);
    for (const a of result.attempts.slice(0, 2)) {
      expect(a.rawText).toBeTruthy();
      expect(a.error).toMatch(/\w+: /);
    }
    expect(result.extraction).toMatchObject({ language: "en", category: "weather" });
    expect(ledger.calls.map((c) => c.outcome)).toEqual([
      "schema_violation",
      "schema_violation",
      "ok",
    ]);
    ledger.calls.forEach(expectWellFormed);
  });

  it("429 with a long Retry-After → the local provider in the same call; llm skipped until it passes", async () => {
    sim.control.inject("llm", { kind: "429", retryAfter: 60 });
    const clock = testClock();
    const { extractor, ledger } = chain({ clock });
    const first = await extractor.extract(item, { subject });
    expect(first.provider).toBe("local");
    expect(first.attempts.map((a) => [a.provider, a.outcome, a.status])).toEqual([
      ["llm", "rate_limited", 429],
      ["local", "ok", null],
    ]);
    sim.control.clearAll();
    const requests = sim.chat.stats.requests;
    clock.advance(59_000);
    const second = await extractor.extract(item, { subject });
    expect(second.attempts.map((a) => [a.provider, a.outcome])).toEqual([
      ["llm", "skipped"],
      ["local", "ok"],
    ]);
    expect(sim.chat.stats.requests).toBe(requests);
    clock.advance(2_000);
    const third = await extractor.extract(item, { subject });
    expect(third).toMatchObject({ provider: "llm", fellOver: false });
    expect(sim.chat.stats.requests).toBe(requests + 1);
    ledger.calls.forEach(expectWellFormed);
  });

  it("429 with a short Retry-After is waited out inside the provider, each attempt its own row", async () => {
    sim.control.inject("llm", { kind: "429", retryAfter: 1, calls: 1 });
    const { extractor, ledger } = chain();
    const result = await extractor.extract(item, { subject });
    expect(result.attempts.map((a) => [a.provider, a.outcome])).toEqual([
      ["llm", "rate_limited"],
      ["llm", "ok"],
    ]);
    expect(ledger.calls.map((c) => c.attempt)).toEqual([1, 2]);
  });

  it("all failing → ExtractionFailedError with every attempt's raw answer and errors", async () => {
    sim.control.inject("llm", { kind: "malformed" });
    const { extractor, ledger } = chain({ llmOnly: true });
    const failed = await extractor.extract(item, { subject }).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(ExtractionFailedError);
    const err = failed as ExtractionFailedError;
    expect(err.permanent).toBe(false);
    expect(err.message).toMatch(/^every provider failed: llm: malformed/);
    expect(err.attempts.map((a) => [a.outcome, a.correction])).toEqual([
      ["malformed", false],
      ["malformed", true],
    ]);
    for (const a of err.attempts) {
      expect(a.rawText).toBeTruthy();
      expect(Buffer.byteLength(a.rawText ?? "")).toBeLessThanOrEqual(4_096);
      expect(a.error).toBeTruthy();
    }
    ledger.calls.forEach(expectWellFormed);
  });

  it("500 persisting, then the breaker: the local provider answers, no request while it is open", async () => {
    sim.control.inject("llm", { kind: "500" });
    const { extractor } = chain();
    const first = await extractor.extract(item);
    expect(first.attempts.map((a) => a.outcome)).toEqual([
      "provider_error",
      "provider_error",
      "provider_error",
      "ok",
    ]);
    await extractor.extract(item); // failures 4 and 5 open it
    const requests = sim.chat.stats.requests;
    const third = await extractor.extract(item);
    expect(third.attempts.map((a) => [a.provider, a.outcome])).toEqual([
      ["llm", "breaker_open"],
      ["local", "ok"],
    ]);
    expect(sim.chat.stats.requests).toBe(requests);
  });

  it("bad input is permanent: no provider after the first is asked", async () => {
    const { extractor, ledger } = chain();
    const err = (await extractor
      .extract({ title: "" }, { subject })
      .catch((e: unknown) => e)) as ExtractionFailedError;
    expect(err).toBeInstanceOf(ExtractionFailedError);
    expect(err.permanent).toBe(true);
    expect(err.attempts.map((a) => [a.provider, a.outcome])).toEqual([["llm", "bad_input"]]);
    expect(ledger.calls).toHaveLength(1);
  });

  it("emits extract:done for every call, with the fall-over and the cost", async () => {
    const events: EventMap["extract:done"][] = [];
    const off = on("extract:done", (e) => events.push(e));
    try {
      sim.control.inject("llm", { kind: "schema", calls: 2 });
      const { extractor } = chain();
      await extractor.extract(item);
      await extractor.extract(item);
    } finally {
      off();
    }
    expect(events.map((e) => [e.provider, e.fellOver, e.attempts, e.ok])).toEqual([
      ["local", true, 3, true],
      ["llm", false, 1, true],
    ]);
    expect(events[0]?.costUsd).toBeGreaterThan(0);
  });
});

describe("daily budget", () => {
  it("in memory: once the paid provider has spent its budget it is skipped and the local one answers; extract:budget once", async () => {
    const budgets: EventMap["extract:budget"][] = [];
    const off = on("extract:budget", (e) => budgets.push(e));
    try {
      // One sim-extract-1 call costs ~$0.0001 (≈600 tokens in at $0.15/M, ≈60 out at $0.60/M).
      const { extractor, ledger } = chain({ budget: { dailyUsd: { llm: 0.00015 } } });
      const providers: string[] = [];
      for (let i = 0; i < 4; i++)
        providers.push((await extractor.extract(item, { subject })).provider);
      expect(providers).toEqual(["llm", "llm", "local", "local"]);
      expect(ledger.calls.map((c) => c.outcome)).toEqual([
        "ok",
        "ok",
        "budget_exhausted",
        "ok",
        "budget_exhausted",
        "ok",
      ]);
      const skipped = ledger.calls.filter((c) => c.outcome === "budget_exhausted");
      for (const c of skipped) expect([c.costUsd, c.inputTokens, c.status]).toEqual([0, 0, null]);
      expect(budgets).toEqual([
        { provider: "llm", spentUsd: expect.any(Number), budgetUsd: 0.00015 },
      ]);
      expect(budgets[0]?.spentUsd).toBeGreaterThanOrEqual(0.00015);
      ledger.calls.forEach(expectWellFormed);
    } finally {
      off();
    }
  });

  it("from provider_calls: today's spend by any process counts, yesterday's does not; rows written whole", async () => {
    const now = Date.now();
    const row = {
      purpose: "extract",
      provider: "llm",
      model: "m",
      ok: true,
      items: 1,
      inputTokens: 0,
      outputTokens: 0,
      latencyMs: 1,
      attempt: 1,
    };
    await db.prisma.providerCall.createMany({
      data: [
        { ...row, at: new Date(utcDayStart(now) + 1_000), costUsd: 0.02 },
        { ...row, at: new Date(utcDayStart(now) - 1_000), costUsd: 5 },
        { ...row, at: new Date(now), purpose: "embed", costUsd: 7 },
      ],
    });
    expect(await dailySpend(db, "llm", now)).toBeCloseTo(0.02, 10);
    expect(await dailySpend(db, "other", now)).toBe(0);

    const ledger = new DatabaseCallLedger(db);
    // $0.02 spent today already: a budget of $0.0201 leaves room for one call (~$0.0001).
    const { extractor } = chain({
      ledger,
      budget: { dailyUsd: { llm: 0.0201 }, db, refreshMs: 0 },
    });
    const providers: string[] = [];
    for (let i = 0; i < 3; i++)
      providers.push((await extractor.extract(item, { subject })).provider);
    expect(providers[0]).toBe("llm");
    expect(providers[2]).toBe("local");
    await ledger.flush();
    const rows = await db.prisma.providerCall.findMany({
      where: { purpose: "extract", entryKey: subject.entryKey },
      orderBy: { id: "asc" },
    });
    expect(rows.length).toBeGreaterThanOrEqual(4);
    for (const r of rows) {
      expect(r).toMatchObject({
        entryKey: subject.entryKey,
        itemVersion: 2,
        sourceId: "src-a",
        items: 1,
      });
      expect(["ok", "budget_exhausted"]).toContain(r.outcome);
      expect(r.promptVersion).toBe(r.provider === "llm" ? PROMPT_VERSION : "local-v1");
    }
    expect(
      rows.filter((r) => r.outcome === "budget_exhausted").every((r) => Number(r.costUsd) === 0),
    ).toBe(true);
  });
});

describe("nothing invalid leaves the chain", () => {
  /** A provider that answers whatever it is given. */
  const garbage = (answers: unknown[]): ExtractionProvider => {
    let n = 0;
    return {
      name: "llm",
      model: "garbage-1",
      promptVersion: "g1",
      paid: false,
      async call(): Promise<ProviderAnswer> {
        const candidate = answers[n++ % answers.length];
        const usage = { tokensIn: 1, tokensOut: 1, costUsd: 0, latencyMs: 0, status: 200 };
        return { ok: true, candidate, rawText: JSON.stringify(candidate) ?? "undefined", ...usage };
      },
    };
  };
  const almost = fc.record(
    {
      language: fc.oneof(fc.constantFrom("bn", "en", "other"), fc.string()),
      category: fc.oneof(fc.constantFrom("sports", "politics", null), fc.string(), fc.integer()),
      entities: fc.oneof(
        fc.array(
          fc.record({
            text: fc.string({ maxLength: 250 }),
            type: fc.oneof(fc.constantFrom("person", "place"), fc.string()),
          }),
          { maxLength: 60 },
        ),
        fc.anything(),
      ),
      summary: fc.oneof(fc.constant(null), fc.string({ maxLength: 400 }), fc.integer()),
    },
    { requiredKeys: [] },
  );

  it("every result validates; every failure is ExtractionFailedError (random answers, valid and not)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(almost, fc.anything()), { minLength: 2, maxLength: 2 }),
        async (answers) => {
          const extractor = createExtractor({ providers: [garbage(answers)] });
          try {
            const result = await extractor.extract({ title: "t" });
            expect(validateExtraction(result.extraction)).toEqual({
              ok: true,
              value: result.extraction,
            });
          } catch (err) {
            expect(err).toBeInstanceOf(ExtractionFailedError);
            expect((err as ExtractionFailedError).attempts).toHaveLength(2);
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
