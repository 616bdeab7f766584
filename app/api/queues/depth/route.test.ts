import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { GET } from "./route";

const ORIGIN = "http://localhost:3000";
const MINUTE_MS = 60_000;

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
  (globalThis as unknown as { wirewatchDb?: Promise<unknown> }).wirewatchDb = Promise.resolve(db);
});
afterAll(async () => {
  await db?.drop();
});

const get = (query: string) => GET(new Request(`${ORIGIN}/api/queues/depth${query}`));

interface Body {
  range: string;
  from: string;
  to: string;
  bucketSeconds: number;
  queues: {
    queue: string;
    points: {
      t: number;
      due: number | null;
      running: number | null;
      retrying: number | null;
      dead: number | null;
    }[];
    peak: { due: number; running: number; retrying: number; dead: number };
  }[];
}

/** The start of the minute `minutesAgo` before the test began, as the sampler writes it. */
const began = Date.now();
const minuteAgo = (minutesAgo: number) =>
  new Date(Math.floor((began - minutesAgo * MINUTE_MS) / MINUTE_MS) * MINUTE_MS);

describe("GET /api/queues/depth", () => {
  it.each([
    ["?range=2h", "range"],
    ["?range=", "range"],
    ["?range=7D", "range"],
    ["?range=1h&range=6h", "range"],
    ["?hours=6", "hours"],
    ["?range=%00", "range"],
  ])("refuses %s with a 400 in the API's error shape", async (query, names) => {
    const res = await get(query);
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(body).toEqual({ error: { code: "bad_request", message: expect.any(String) } });
    expect(body.error.message).toContain(names);
  });

  it("answers the last hour by the minute when no range is given, a queue per sampled one", async () => {
    await db.prisma.queueDepthSample.createMany({
      data: [
        { queue: "fetch", minute: minuteAgo(3), due: 4, running: 1, retrying: 0, dead: 2 },
        { queue: "fetch", minute: minuteAgo(2), due: 9, running: 2, retrying: 1, dead: 2 },
        { queue: "dedup", minute: minuteAgo(2), due: 0, running: 0, retrying: 0, dead: 0 },
        // Older than any range: not in the answer at all.
        { queue: "old", minute: minuteAgo(8 * 24 * 60), due: 1, running: 0, retrying: 0, dead: 0 },
      ],
    });
    const res = await get("");
    expect(res.status).toBe(200);
    const body = (await res.json()) as Body;
    expect(body.range).toBe("1h");
    expect(body.bucketSeconds).toBe(60);
    expect(Date.parse(body.to) - Date.parse(body.from)).toBe(3_600_000);
    expect(body.queues.map((q) => q.queue)).toEqual(["dedup", "fetch"]);
    const fetch = body.queues.find((q) => q.queue === "fetch");
    // Every minute of the hour is a point, the unsampled ones null (a gap, not a zero).
    expect(fetch?.points.length).toBeGreaterThanOrEqual(60);
    expect(fetch?.points.length).toBeLessThanOrEqual(61);
    const at = (minutesAgo: number) =>
      fetch?.points.find((p) => p.t === minuteAgo(minutesAgo).getTime());
    expect(at(3)).toMatchObject({ due: 4, running: 1, retrying: 0, dead: 2 });
    expect(at(2)).toMatchObject({ due: 9, running: 2, retrying: 1, dead: 2 });
    expect(at(10)).toMatchObject({ due: null, running: null, retrying: null, dead: null });
    expect(fetch?.peak).toEqual({ due: 9, running: 2, retrying: 1, dead: 2 });
  });

  it("keeps every range within 200 buckets a series, each the largest sample in it", async () => {
    await db.prisma.$executeRaw`TRUNCATE queue_depth_samples`;
    // A week of samples, one a minute, a backlog of 500 for one minute two days ago.
    await db.prisma.$executeRaw`
      INSERT INTO queue_depth_samples (queue, minute, due, running, retrying, dead)
      SELECT 'fetch', m, CASE WHEN m = ${minuteAgo(2 * 24 * 60)} THEN 500 ELSE 3 END, 1, 0, 0
      FROM generate_series(${minuteAgo(7 * 24 * 60 - 1)}::timestamptz, ${minuteAgo(0)},
                           interval '1 minute') AS m`;
    const expected = { "1h": 60, "6h": 120, "24h": 600, "7d": 3600 } as const;
    for (const [range, bucketSeconds] of Object.entries(expected)) {
      const body = (await (await get(`?range=${range}`)).json()) as Body;
      expect(body.bucketSeconds).toBe(bucketSeconds);
      const points = body.queues[0]?.points ?? [];
      expect(points.length).toBeLessThanOrEqual(201);
      const span = Date.parse(body.to) - Date.parse(body.from);
      expect(points.length).toBeGreaterThanOrEqual(span / 1000 / bucketSeconds);
      // Epoch-aligned buckets, one apart.
      for (const [i, p] of points.entries()) {
        expect(p.t % (bucketSeconds * 1000)).toBe(0);
        if (i > 0) expect(p.t - (points[i - 1]?.t ?? 0)).toBe(bucketSeconds * 1000);
      }
      // The one-minute backlog is kept whole in the week's hour buckets, not averaged away.
      const peak = range === "7d" ? 500 : 3;
      expect(body.queues[0]?.peak.due).toBe(peak);
      expect(Math.max(...points.map((p) => p.due ?? 0))).toBe(peak);
    }
  });
});
