// The Costs page's route in-process, over the seeded ledger and extractions: the answer the page
// draws from, with the budget from the settings, and a 400 for what it must refuse (never a
// 500). The reader check itself is requireReader's, tested in lib/auth/guard.test.ts.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "@/lib/db";
import { COSTS_SEED, seedCostRows } from "@/lib/testing/costsSeed";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";

let db: TestDatabase;
const ORIGIN = "http://localhost:3000";
process.env.DASHBOARD_READ = "open";
// Read by config() on the route's first request: the llm provider is past it today.
process.env.WIREWATCH_EXTRACT_LLM_DAILY_BUDGET_USD = String(COSTS_SEED.budgetUsd);

beforeAll(async () => {
  db = await createTestDatabase();
  (globalThis as unknown as { wirewatchDb?: Promise<Database> }).wirewatchDb = Promise.resolve(db);
  await seedCostRows(db);
});
afterAll(async () => {
  await db?.drop();
});

const get = (path: string) =>
  new Request(`${ORIGIN}${path}`, { headers: { host: "localhost:3000" } });

describe("GET /api/costs", () => {
  it("answers spend, sources, the forecast against the budget and the exhausted provider", async () => {
    const { GET } = await import("./route");
    const res = await GET(get("/api/costs?window=24h"));
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const body = await res.json();
    expect(body.window).toBe("24h");
    expect(body.sources.map((s: { sourceId: string }) => s.sourceId)).toEqual([
      "wire",
      "padma",
      "digest",
    ]);
    expect(body.budgets).toMatchObject([
      { provider: "llm", budgetUsd: COSTS_SEED.budgetUsd, exhausted: true, skippedToday: 1 },
    ]);
    expect(body.forecast.budgetUsd).toBeGreaterThan(0);
    expect(body.forecast.forecastUsd).toBeGreaterThanOrEqual(body.forecast.monthToDateUsd);
    expect(body.spend.hourly.buckets).toHaveLength(24);
    expect(body.spend.daily.buckets).toHaveLength(30);
    expect(body.coverage.extractor).toBe(COSTS_SEED.chain);
    expect(body.topItems.length).toBeGreaterThan(0);
  });

  it("reads the 7-day window by default", async () => {
    const { GET } = await import("./route");
    const body = await (await GET(get("/api/costs"))).json();
    expect(body.window).toBe("7d");
  });

  it("refuses parameters it does not take and windows it does not know", async () => {
    const { GET } = await import("./route");
    for (const q of ["x=1", "window=1h", "window=", "window=7d&window=30d", "window=__proto__"]) {
      const res = await GET(get(`/api/costs?${q}`));
      expect(res.status, q).toBe(400);
      const body = await res.json();
      expect(body.error.code, q).toBe("bad_request");
      expect(typeof body.error.message, q).toBe("string");
    }
  });
});
