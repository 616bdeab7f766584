import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { emit } from "./events";
import { registerMetrics, scrape } from "./metrics";
import { COSTS_SEED, seedCostRows } from "./testing/costsSeed";
import { createTestDatabase, type TestDatabase } from "./testing/db";
import { requireTool } from "./testing/requireTool";

// Extraction's metrics (issue 15): calls by outcome, tokens in and out, cost, corrections,
// extractions and fallovers counted from events; the paid provider's day against its budget and
// coverage read from the ledger and item_extractions at scrape time.
const promtool = requireTool(
  "promtool",
  "promtool check metrics on the extraction metrics",
  "apt-get install prometheus; .ci/run installs it",
);
// Read by config() at the first scrape: the seeded llm provider is past it today.
process.env.WIREWATCH_EXTRACT_LLM_DAILY_BUDGET_USD = String(COSTS_SEED.budgetUsd);
let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
  await seedCostRows(db);
  registerMetrics();
});
afterAll(async () => {
  await db?.drop();
});

const value = (body: string, series: string): number | undefined => {
  const line = body.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

const call = (over: Partial<Parameters<typeof emit<"provider:call">>[1]>) =>
  emit("provider:call", {
    purpose: "extract",
    provider: "llm",
    model: "sim-extract-1",
    ok: true,
    status: 200,
    costUsd: 0.001,
    inputTokens: 500,
    outputTokens: 80,
    latencyMs: 120,
    outcome: "ok",
    correction: false,
    ...over,
  });

describe("extraction metrics", () => {
  it("counts calls by outcome code, tokens in and out, cost and correction retries", async () => {
    call({});
    call({ ok: false, outcome: "malformed", costUsd: 0.0005, outputTokens: 20 });
    call({ correction: true, costUsd: 0.0015, inputTokens: 900, outputTokens: 100 });
    call({
      ok: false,
      outcome: "rate_limited",
      status: 429,
      costUsd: 0,
      inputTokens: 0,
      outputTokens: 0,
    });
    call({
      provider: "local",
      model: "local-rules@1",
      costUsd: 0,
      inputTokens: 0,
      outputTokens: 0,
      status: null,
    });
    // An outcome outside the codes, and an embedding call's plain error: bounded.
    call({ ok: false, outcome: "<script>", costUsd: 0 });
    call({
      purpose: "embed",
      provider: "http",
      model: "m",
      ok: false,
      outcome: "error",
      costUsd: 0,
    });
    const { body } = await scrape({ database: async () => db });
    const c = (labels: string) => value(body, `wirewatch_provider_calls_total{${labels}}`);
    const llm = 'purpose="extract",provider="llm",model="sim-extract-1"';
    expect(c(`${llm},outcome="ok"`)).toBe(2);
    expect(c(`${llm},outcome="malformed"`)).toBe(1);
    expect(c(`${llm},outcome="rate_limited"`)).toBe(1);
    expect(c(`${llm},outcome="other"`)).toBe(1);
    // A model id with "@" is a model, not "invalid".
    expect(c('purpose="extract",provider="local",model="local-rules@1",outcome="ok"')).toBe(1);
    expect(c('purpose="embed",provider="http",model="m",outcome="error"')).toBe(1);
    expect(value(body, `wirewatch_provider_input_tokens_total{${llm}}`)).toBe(2400);
    expect(value(body, `wirewatch_provider_output_tokens_total{${llm}}`)).toBe(280);
    expect(value(body, `wirewatch_provider_cost_usd_total{${llm}}`)).toBeCloseTo(0.003, 10);
    expect(value(body, `wirewatch_provider_correction_retries_total{${llm}}`)).toBe(1);
    expect(body).not.toContain("<script>");
  });

  it("counts extractions by who answered, fallovers, failures and budgets reached", async () => {
    const done = (e: Partial<Parameters<typeof emit<"extract:done">>[1]>) =>
      emit("extract:done", {
        provider: "llm",
        model: "sim-extract-1",
        ok: true,
        fellOver: false,
        attempts: 1,
        costUsd: 0.001,
        ...e,
      });
    done({});
    done({ provider: "local", model: "local-rules@1", fellOver: true, attempts: 3 });
    done({ provider: null, model: null, ok: false, fellOver: false, attempts: 4 });
    emit("extract:budget", { provider: "llm", spentUsd: 0.0051, budgetUsd: 0.005 });
    const { body } = await scrape({ database: async () => db });
    const x = (labels: string) => value(body, `wirewatch_extractions_total{${labels}}`);
    expect(x('provider="llm",model="sim-extract-1",outcome="ok"')).toBe(1);
    expect(x('provider="local",model="local-rules@1",outcome="ok"')).toBe(1);
    expect(x('provider="none",model="none",outcome="failed"')).toBe(1);
    expect(
      value(body, 'wirewatch_extract_fallovers_total{provider="local",model="local-rules@1"}'),
    ).toBe(1);
    expect(
      value(body, 'wirewatch_extract_fallovers_total{provider="llm",model="sim-extract-1"}'),
    ).toBeUndefined();
    expect(value(body, 'wirewatch_extract_budget_reached_total{provider="llm"}')).toBe(1);
  });

  it("reads the paid provider's day against its budget, exhausted, and coverage at scrape time", async () => {
    const { body } = await scrape({ database: async () => db });
    expect(value(body, 'wirewatch_extract_spend_today_usd{provider="llm"}')).toBeCloseTo(
      COSTS_SEED.todayUsd,
      10,
    );
    expect(value(body, 'wirewatch_extract_budget_usd{provider="llm"}')).toBe(COSTS_SEED.budgetUsd);
    expect(value(body, 'wirewatch_extract_budget_exhausted{provider="llm"}')).toBe(1);
    // The local provider is free: no budget series.
    expect(body).not.toMatch(/wirewatch_extract_budget_exhausted\{provider="local"\}/);
    // Six rows by the newest extraction's chain over eight canonical items.
    expect(value(body, "wirewatch_extract_coverage_ratio")).toBeCloseTo(6 / 8, 10);
  });

  it("says 0 for exhausted under the budget and coverage 1 with nothing to extract", async () => {
    const empty = await createTestDatabase();
    try {
      await empty.prisma.$executeRaw`
        INSERT INTO provider_calls (at, purpose, provider, model, ok, cost_usd, latency_ms, outcome)
        VALUES (now(), 'extract', 'llm', 'sim-extract-1', true, 0.001, 10, 'ok')`;
      const { body } = await scrape({ database: async () => empty });
      expect(value(body, 'wirewatch_extract_budget_exhausted{provider="llm"}')).toBe(0);
      expect(value(body, 'wirewatch_extract_spend_today_usd{provider="llm"}')).toBeCloseTo(
        0.001,
        10,
      );
      expect(value(body, "wirewatch_extract_coverage_ratio")).toBe(1);
    } finally {
      await empty.drop();
    }
  });

  it.skipIf(promtool.skip)(`passes promtool check metrics${promtool.note}`, async () => {
    const { body } = await scrape({ database: async () => db });
    const families = body
      .split("\n")
      .filter((l) => /wirewatch_(provider|extract)/.test(l))
      .join("\n");
    const out = execFileSync(promtool.need(), ["check", "metrics"], {
      input: `${families}\n`,
      encoding: "utf8",
    });
    console.log(
      `promtool check metrics (extraction families, ${families.split("\n").filter((l) => !l.startsWith("#")).length} series): ${out.trim() || "OK"}`,
    );
  });
});
