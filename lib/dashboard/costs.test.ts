import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COSTS_SEED, costKey, seedCostRows } from "@/lib/testing/costsSeed";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import {
  budgetStates,
  type CostsOverview,
  costsOverview,
  DAILY_BUCKETS,
  FORECAST_BASIS_DAYS,
  HOURLY_BUCKETS,
  MAX_SERIES,
} from "./costs";

// The Costs page's reads over the seeded ledger and extractions (lib/testing/costsSeed.ts), at a
// fixed instant: 15:30 UTC on the 18th of a 31-day month, so the hour and day buckets, the month
// and its days left are known.
let db: TestDatabase;
const now = new Date("2026-12-18T15:30:00.000Z");
const LLM = `llm/${COSTS_SEED.llmModel}`;
const LOCAL = `local/${COSTS_SEED.localModel}`;
const budgets = { llm: COSTS_SEED.budgetUsd };
let day: CostsOverview;

beforeAll(async () => {
  db = await createTestDatabase();
  await seedCostRows(db, now);
  day = await costsOverview(db, { now, window: "24h", budgets });
});
afterAll(async () => {
  await db?.drop();
});

const source = (o: CostsOverview, id: string) => o.sources.find((s) => s.sourceId === id);

describe("costsOverview: spend over time", () => {
  it("puts the last 24 clock hours' extraction spend in hourly buckets by provider and model", () => {
    const h = day.spend.hourly;
    expect(h.bucketSeconds).toBe(3600);
    expect(h.buckets).toHaveLength(HOURLY_BUCKETS);
    // The first bucket starts 23 hours before the running one (15:00).
    expect(h.buckets[0]?.t).toBe(Date.parse("2026-12-17T16:00:00Z"));
    expect(h.buckets.at(-1)?.t).toBe(Date.parse("2026-12-18T15:00:00Z"));
    expect(h.series.map((s) => s.key)).toEqual([LLM, LOCAL]);
    const llm = h.series[0];
    expect(llm).toMatchObject({ provider: "llm", model: COSTS_SEED.llmModel, calls: 8 });
    expect(llm?.costUsd).toBeCloseTo(COSTS_SEED.todayUsd, 10);
    expect(h.series[1]).toMatchObject({ costUsd: 0, calls: 3 });
    // 14:40-14:55 (w1, w2 and its correction, p1) and 15:20 (g3's two schema violations).
    expect(h.buckets[22]?.usd[LLM]).toBeCloseTo(0.0075, 10);
    expect(h.buckets[23]?.usd[LLM]).toBeCloseTo(0.002, 10);
    expect(h.buckets.slice(0, 22).every((b) => b.usd[LLM] === 0 && b.usd[LOCAL] === 0)).toBe(true);
    // The embedding call is not extraction's.
    expect(h.totalUsd).toBeCloseTo(COSTS_SEED.todayUsd, 10);
  });

  it("puts the last 30 UTC days in daily buckets, today running, the 40-day-old call outside", () => {
    const d = day.spend.daily;
    expect(d.buckets).toHaveLength(DAILY_BUCKETS);
    expect(d.buckets[0]?.t).toBe(Date.parse("2026-11-19T00:00:00Z"));
    expect(d.buckets[29]?.usd[LLM]).toBeCloseTo(COSTS_SEED.todayUsd, 10);
    expect(d.buckets[26]?.usd[LLM]).toBeCloseTo(COSTS_SEED.threeDaysUsd, 10);
    expect(d.buckets[21]?.usd[LLM]).toBeCloseTo(COSTS_SEED.eightDaysUsd, 10);
    expect(d.totalUsd).toBeCloseTo(
      COSTS_SEED.todayUsd + COSTS_SEED.threeDaysUsd + COSTS_SEED.eightDaysUsd,
      10,
    );
    expect(d.series.map((s) => s.model)).not.toContain("gpt-4o-mini");
  });

  it(`folds the series past ${MAX_SERIES} into one "other", summed`, async () => {
    const extra = await createTestDatabase();
    try {
      for (let i = 0; i < MAX_SERIES + 2; i++) {
        await extra.prisma.$executeRaw`
          INSERT INTO provider_calls (at, purpose, provider, model, ok, cost_usd, latency_ms, outcome)
          VALUES (${new Date(now.getTime() - 60_000)}, 'extract', 'llm', ${`m${i}`}, true,
                  ${(i + 1) / 1000}, 10, 'ok')`;
      }
      const o = await costsOverview(extra, { now, window: "24h" });
      const series = o.spend.hourly.series;
      expect(series).toHaveLength(MAX_SERIES);
      // The most spent first: m7 … m3, then m2 + m1 + m0 as other.
      expect(series.slice(0, MAX_SERIES - 1).map((s) => s.model)).toEqual([
        "m7",
        "m6",
        "m5",
        "m4",
        "m3",
      ]);
      expect(series.at(-1)).toMatchObject({ key: "other", calls: 3 });
      expect(series.at(-1)?.costUsd).toBeCloseTo(0.006, 10);
      expect(o.spend.hourly.buckets[23]?.usd.other).toBeCloseTo(0.006, 10);
      expect(o.spend.hourly.totalUsd).toBeCloseTo(0.036, 10);
    } finally {
      await extra.drop();
    }
  });
});

describe("costsOverview: what each source's spend buys", () => {
  it("gives cost, unique stories, duplicate rate, error rate and cost per unique story", () => {
    expect(day.sources.map((s) => s.sourceId)).toEqual(["wire", "padma", "digest"]);
    const wire = source(day, "wire");
    expect(wire).toMatchObject({
      sourceName: "Wire",
      attempts: COSTS_SEED.day.wire.attempts,
      failed: COSTS_SEED.day.wire.failed,
      uniqueStories: COSTS_SEED.day.wire.uniqueStories,
      duplicates: COSTS_SEED.day.wire.duplicates,
      tokensIn: COSTS_SEED.day.wire.tokensIn,
      tokensOut: COSTS_SEED.day.wire.tokensOut,
    });
    expect(wire?.costUsd).toBeCloseTo(0.0045, 10);
    expect(wire?.errorRate).toBeCloseTo(2 / 5, 10);
    expect(wire?.duplicateRate).toBeCloseTo(1 / 4, 10);
    expect(wire?.costPerUniqueStory).toBeCloseTo(0.0015, 10);
    // The attempt skipped at the budget is not a call: padma made two and none failed.
    const padma = source(day, "padma");
    expect(padma).toMatchObject({ attempts: 2, failed: 0, errorRate: 0, uniqueStories: 1 });
    expect(padma?.duplicateRate).toBeCloseTo(2 / 3, 10);
    expect(padma?.costPerUniqueStory).toBeCloseTo(0.003, 10);
    const digest = source(day, "digest");
    expect(digest).toMatchObject({ attempts: 3, failed: 2, uniqueStories: 1, duplicates: 2 });
    expect(digest?.errorRate).toBeCloseTo(2 / 3, 10);
    // A source with neither spend nor stories in the window is left out.
    expect(source(day, "quiet")).toBeUndefined();
  });

  it("reads the wider window: the 3-day-old story and its call join the wire's figures", async () => {
    const week = await costsOverview(db, { now, window: "7d", budgets });
    const wire = source(week, "wire");
    expect(wire?.costUsd).toBeCloseTo(0.0145, 10);
    expect(wire?.uniqueStories).toBe(4);
    expect(wire?.costPerUniqueStory).toBeCloseTo(0.0145 / 4, 10);
    const month = await costsOverview(db, { now, window: "30d", budgets });
    // w8 (8 days) joins; the 40-day-old item and call stay out.
    expect(source(month, "wire")?.uniqueStories).toBe(5);
    expect(source(month, "wire")?.costUsd).toBeCloseTo(0.0645, 10);
  });
});

describe("costsOverview: forecast and budget", () => {
  it("forecasts the month at the last 7 days' rate against the daily budget × days in month", () => {
    const f = day.forecast;
    const mtd = COSTS_SEED.todayUsd + COSTS_SEED.threeDaysUsd + COSTS_SEED.eightDaysUsd;
    // 15:30 on the 18th: 13 days and 8.5 hours to the 1st.
    const daysLeft = 13 + 8.5 / 24;
    const rate = (COSTS_SEED.todayUsd + COSTS_SEED.threeDaysUsd) / FORECAST_BASIS_DAYS;
    expect(f.month).toBe("2026-12");
    expect(f.daysInMonth).toBe(31);
    expect(f.daysLeft).toBeCloseTo(daysLeft, 10);
    expect(f.monthToDateUsd).toBeCloseTo(mtd, 10);
    // There were calls before the 7 days: the rate is over all seven.
    expect(f.basisDays).toBe(FORECAST_BASIS_DAYS);
    expect(f.dailyAverageUsd).toBeCloseTo(rate, 10);
    expect(f.forecastUsd).toBeCloseTo(mtd + rate * daysLeft, 10);
    expect(f.budgetUsd).toBeCloseTo(COSTS_SEED.budgetUsd * 31, 10);
    expect(f.share).toBeCloseTo((mtd + rate * daysLeft) / (COSTS_SEED.budgetUsd * 31), 10);
    expect(f.embeddingMonthToDateUsd).toBeCloseTo(COSTS_SEED.embeddingUsd, 10);
  });

  it("averages over the days since the calls began when that is under 7, at least one", async () => {
    const fresh = await createTestDatabase();
    try {
      const insert = (hoursAgo: number, cost: number) => fresh.prisma.$executeRaw`
        INSERT INTO provider_calls (at, purpose, provider, model, ok, cost_usd, latency_ms, outcome)
        VALUES (${new Date(now.getTime() - hoursAgo * 3_600_000)}, 'extract', 'llm', 'm', true,
                ${cost}, 10, 'ok')`;
      await insert(2, 0.01);
      let f = (await costsOverview(fresh, { now })).forecast;
      // Two hours of calls: averaged over one day, not extrapolated ×12.
      expect(f.basisDays).toBe(1);
      expect(f.dailyAverageUsd).toBeCloseTo(0.01, 10);
      expect(f.budgetUsd).toBeNull();
      expect(f.share).toBeNull();
      await insert(72, 0.02);
      f = (await costsOverview(fresh, { now })).forecast;
      expect(f.basisDays).toBeCloseTo(3, 10);
      expect(f.dailyAverageUsd).toBeCloseTo(0.03 / 3, 10);
    } finally {
      await fresh.drop();
    }
  });

  it("says a paid provider past its daily budget is exhausted, with the attempts it skipped", () => {
    expect(day.budgets).toHaveLength(1);
    const llm = day.budgets[0];
    expect(llm).toMatchObject({
      provider: "llm",
      budgetUsd: COSTS_SEED.budgetUsd,
      exhausted: true,
      skippedToday: 1,
      resetsAt: "2026-12-19T00:00:00.000Z",
    });
    expect(llm?.spentUsd).toBeCloseTo(COSTS_SEED.todayUsd, 10);
    expect(llm?.lastSkippedAt).toBe(new Date(now.getTime() - 5 * 60_000).toISOString());
    expect(day.today.costUsd).toBeCloseTo(COSTS_SEED.todayUsd, 10);
    expect(day.today.calls).toBe(COSTS_SEED.todayCalls);
  });

  it("is not exhausted under the budget; with no budget a paid provider with spend is listed", async () => {
    const under = await budgetStates(db, { now, budgets: { llm: 1 } });
    expect(under.states[0]).toMatchObject({ provider: "llm", exhausted: false, budgetUsd: 1 });
    const none = await budgetStates(db, { now });
    expect(none.states.map((s) => [s.provider, s.budgetUsd, s.exhausted])).toEqual([
      ["llm", null, false],
    ]);
    // Tomorrow: nothing spent yet, the budget is whole again.
    const tomorrow = await budgetStates(db, {
      now: new Date("2026-12-19T00:10:00Z"),
      budgets: { llm: COSTS_SEED.budgetUsd },
    });
    expect(tomorrow.states[0]).toMatchObject({ spentUsd: 0, exhausted: false, skippedToday: 0 });
  });
});

describe("costsOverview: calls, items, coverage", () => {
  it("counts calls by outcome, correction retries, extractions and fallovers", () => {
    const c = day.calls;
    const count = (provider: string, outcome: string) =>
      c.byOutcome.find((o) => o.provider === provider && o.outcome === outcome)?.calls;
    expect(count("llm", "ok")).toBe(3);
    expect(count("llm", "malformed")).toBe(1);
    expect(count("llm", "rate_limited")).toBe(1);
    expect(count("llm", "schema_violation")).toBe(2);
    expect(count("llm", "budget_exhausted")).toBe(1);
    expect(count("local", "ok")).toBe(3);
    expect(c).toMatchObject({
      total: 11,
      attempts: 10,
      failed: 4,
      corrections: 2,
      correctionsOk: 1,
      extractions: 5,
      fallovers: 3,
    });
    expect(c.byProvider).toEqual([
      { provider: "local", model: COSTS_SEED.localModel, extractions: 3, fallovers: 3 },
      { provider: "llm", model: COSTS_SEED.llmModel, extractions: 2, fallovers: 0 },
    ]);
  });

  it("lists the most expensive items with their title, source, cost and calls", () => {
    expect(
      day.topItems.map((i) => [i.entryKey, i.title, i.sourceId, i.sourceName, i.calls]),
    ).toEqual([
      [costKey("p1"), "Story p1", "padma", "Padma RSS", 3],
      [costKey("w2"), "Story w2", "wire", "Wire", 2],
      // Same cost as w1: the one that took more calls first.
      [costKey("g3"), "Story g3", "digest", "Digest", 3],
      [costKey("w1"), "Story w1", "wire", "Wire", 1],
    ]);
    expect(day.topItems[1]?.costUsd).toBeCloseTo(0.0025, 10);
    expect(day.topItems[1]).toMatchObject({ tokensIn: 2100, tokensOut: 330 });
  });

  it("counts coverage for the newest extraction's chain: canonical items at their version", async () => {
    expect(day.coverage).toMatchObject({
      extractor: COSTS_SEED.chain,
      canonical: COSTS_SEED.canonical,
      done: COSTS_SEED.covered,
      remaining: COSTS_SEED.canonical - COSTS_SEED.covered,
    });
    expect(day.coverage.ratio).toBeCloseTo(COSTS_SEED.covered / COSTS_SEED.canonical, 10);
    // Another chain configured: only the item it made counts.
    const old = await costsOverview(db, { now, window: "24h", extractor: COSTS_SEED.oldChain });
    expect(old.coverage).toMatchObject({ extractor: COSTS_SEED.oldChain, done: 1 });
  });

  it("answers on an empty database: zeros, no budget, no extractor", async () => {
    const empty = await createTestDatabase();
    try {
      const o = await costsOverview(empty, { now });
      expect(o.sources).toEqual([]);
      expect(o.topItems).toEqual([]);
      expect(o.budgets).toEqual([]);
      expect(o.spend.hourly.series).toEqual([]);
      expect(o.spend.daily.buckets).toHaveLength(DAILY_BUCKETS);
      expect(o.forecast).toMatchObject({ monthToDateUsd: 0, forecastUsd: 0, budgetUsd: null });
      expect(o.coverage).toEqual({
        extractor: null,
        canonical: 0,
        done: 0,
        remaining: 0,
        ratio: null,
      });
      // With a budget set and nothing spent, the provider is listed, whole.
      const b = await costsOverview(empty, { now, budgets });
      expect(b.budgets).toMatchObject([{ provider: "llm", spentUsd: 0, exhausted: false }]);
      expect(b.forecast.budgetUsd).toBeCloseTo(COSTS_SEED.budgetUsd * 31, 10);
    } finally {
      await empty.drop();
    }
  });
});
