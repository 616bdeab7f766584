// The Meaning page's route in-process, over seeded models, vectors and supplier calls: the answer
// the page draws from, and a 400 for what it must refuse (never a 500). The reader check itself
// is requireReader's, tested in lib/auth/guard.test.ts.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { trackSearchLatency } from "@/lib/dashboard/searchLatency";
import type { Database } from "@/lib/db";
import { emit } from "@/lib/events";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { MEANING_SEED, seedMeaningRows } from "@/lib/testing/meaningSeed";

let db: TestDatabase;
const ORIGIN = "http://localhost:3000";
process.env.DASHBOARD_READ = "open";

beforeAll(async () => {
  db = await createTestDatabase();
  (globalThis as unknown as { wirewatchDb?: Promise<Database> }).wirewatchDb = Promise.resolve(db);
  await seedMeaningRows(db);
  // As the server does at its start (instrumentation-node.ts), before any page asks.
  trackSearchLatency();
});
afterAll(async () => {
  await db?.drop();
});

const get = (path: string) =>
  new Request(`${ORIGIN}${path}`, { headers: { host: "localhost:3000" } });

describe("GET /api/meaning", () => {
  it("answers the backend, the models with their labels, the search model and the latency", async () => {
    const { GET } = await import("./route");
    emit("search:done", { seconds: 0.012, model: MEANING_SEED.use, backend: "portable", hits: 2 });
    const res = await GET(get("/api/meaning"));
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const body = await res.json();
    expect(body.backend.kind).toMatch(/^(pgvector|portable)$/);
    expect(body.canonical).toBe(MEANING_SEED.canonical);
    expect(
      body.models.map((m: { model: string; kindLabel: string }) => [m.model, m.kindLabel]),
    ).toEqual([
      [MEANING_SEED.use, "meaning"],
      [MEANING_SEED.lexical, "lexical — not meaning"],
      [MEANING_SEED.e5, "meaning"],
    ]);
    expect(body.models[0].limits).toEqual(["no Bangla ↔ English", "English only"]);
    expect(body.searchModel.model).toBe(MEANING_SEED.use);
    expect(body.unregistered.map((u: { model: string }) => u.model)).toEqual([
      MEANING_SEED.failing,
    ]);
    expect(body.latency.count).toBeGreaterThanOrEqual(1);
  });

  it("refuses parameters it does not take", async () => {
    const { GET } = await import("./route");
    for (const q of ["x=1", "hours=24", "model=1&model=2"]) {
      const res = await GET(get(`/api/meaning?${q}`));
      expect(res.status, q).toBe(400);
      expect((await res.json()).error.code, q).toBe("bad_request");
    }
  });
});
