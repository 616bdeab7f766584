import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { minutesBefore, seedSource } from "@/lib/dashboard/testing";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { GET } from "./route";

const ORIGIN = "http://localhost:3000";
const HOUR = 60;

let db: TestDatabase;
const began = new Date();

beforeAll(async () => {
  db = await createTestDatabase();
  // Route handlers reach the database through getDb(): hand them this test's.
  (globalThis as unknown as { wirewatchDb?: Promise<unknown> }).wirewatchDb = Promise.resolve(db);
  await seedSource(db, "s1");
  // One attempt 30 minutes ago, one 3 hours ago, one 2 days ago, one 9 days ago.
  await db.prisma.fetchAttempt.createMany({
    data: [
      ["ok", 30],
      ["timeout", 3 * HOUR],
      ["http_503", 2 * 24 * HOUR],
      ["http_500", 9 * 24 * HOUR],
    ].map(([code, minutes]) => ({
      sourceId: "s1",
      collector: "A",
      startedAt: minutesBefore(began, minutes as number),
      durationMs: 100,
      code: code as string,
    })),
  });
});

afterAll(async () => {
  await db?.drop();
});

const get = (id: string, query = "") =>
  GET(new Request(`${ORIGIN}/api/sources/${id}${query}`), {
    params: Promise.resolve({ id }),
  });

interface Fetching {
  hours: number;
  bucketSeconds: number;
  codesHours: number;
  series: { t: number; attempts: number }[];
}
interface Body {
  source: { fetching: Fetching; codes: { code: string; count: number }[] };
}

describe("GET /api/sources/:id?range=", () => {
  /** What a bad range is told: the four it may be. */
  const RANGES = /^range: .*"1h".*"6h".*"24h".*"7d"/;
  it.each([
    ["?range=2h", RANGES],
    ["?range=", RANGES],
    ["?range=7D", RANGES],
    ["?range=%00", RANGES],
    ["?range=1h&range=6h", /^range: given more than once/],
    ["?range=24h&hours=6", /"hours"/],
  ])(
    "refuses %s with a 400 in the API's error shape, before looking the source up",
    async (query, message) => {
      for (const id of ["s1", "nope"]) {
        const res = await get(id, query);
        expect(res.status).toBe(400);
        const body = await res.json();
        expect(body).toEqual({ error: { code: "bad_request", message: expect.any(String) } });
        expect(body.error.message).toMatch(message);
      }
    },
  );

  it("without a range keeps the hour in 5-minute buckets and the codes over a day", async () => {
    const res = await get("s1");
    expect(res.status).toBe(200);
    const { source } = (await res.json()) as Body;
    expect(source.fetching).toMatchObject({ hours: 1, bucketSeconds: 300, codesHours: 24 });
    expect(source.fetching.series).toHaveLength(12);
    expect(source.codes.map((c) => c.code).sort()).toEqual(["ok", "timeout"]);
  });

  it("draws attempts and codes over the range asked, never more than 200 points", async () => {
    const expected = {
      "1h": { hours: 1, bucketSeconds: 300, codes: ["ok"] },
      "6h": { hours: 6, bucketSeconds: 300, codes: ["ok", "timeout"] },
      "24h": { hours: 24, bucketSeconds: 600, codes: ["ok", "timeout"] },
      "7d": { hours: 168, bucketSeconds: 3600, codes: ["http_503", "ok", "timeout"] },
    } as const;
    for (const [range, { hours, bucketSeconds, codes }] of Object.entries(expected)) {
      const res = await get("s1", `?range=${range}&limit=1`);
      expect(res.status).toBe(200);
      const { source } = (await res.json()) as Body;
      expect(source.fetching).toMatchObject({ hours, bucketSeconds, codesHours: hours });
      expect(source.fetching.series).toHaveLength((hours * 3600) / bucketSeconds);
      expect(source.fetching.series.length).toBeLessThanOrEqual(200);
      expect(source.fetching.series.reduce((n, p) => n + p.attempts, 0)).toBe(codes.length);
      expect(source.codes.map((c) => c.code).sort()).toEqual(codes);
    }
  });

  it("answers an unknown source with a 404 whatever the range", async () => {
    const res = await get("nope", "?range=7d");
    expect(res.status).toBe(404);
    expect((await res.json()).error.code).toBe("not_found");
  });
});
