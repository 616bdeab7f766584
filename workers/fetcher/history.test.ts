import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createTestDatabase, requireRealPostgres, type TestDatabase } from "@/lib/testing/db";
import { housekeeping } from "@/workers/queue/housekeeping";
import { trimFetchHistory } from "./history";

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});
beforeEach(async () => {
  await db.prisma.$executeRaw`TRUNCATE fetch_attempts, fetch_attempts_daily, page_looks`;
});

const DAY_MS = 86_400_000;

/** `n` attempts of one source `daysAgo` days back, alternately ok and http_503. */
async function attempts(sourceId: string, daysAgo: number, n: number): Promise<void> {
  const at = new Date(Date.now() - daysAgo * DAY_MS);
  await db.prisma.fetchAttempt.createMany({
    data: Array.from({ length: n }, (_, i) => ({
      sourceId,
      collector: "A",
      startedAt: new Date(at.getTime() + i * 1_000),
      durationMs: 100 + i,
      code: i % 2 ? "http_503" : "ok",
      bytes: 1_000,
    })),
  });
}

describe("fetch history past its days", () => {
  it("folds old attempts into a row per source, UTC day and code, deletes them, keeps the recent ones", async () => {
    await attempts("a", 20, 5); // 3 ok, 2 http_503
    await attempts("b", 30, 2);
    await attempts("a", 1, 4);
    expect(await trimFetchHistory(db, 14)).toEqual({ attemptsFolded: 7, pageLooks: 0 });
    expect(await db.prisma.fetchAttempt.count()).toBe(4);
    const daily = await db.prisma.fetchAttemptDaily.findMany({
      orderBy: [{ sourceId: "asc" }, { code: "asc" }],
    });
    expect(
      daily.map((d) => [
        d.sourceId,
        d.code,
        d.attempts,
        Number(d.bytes),
        Number(d.durationMsSum),
        d.durationMsMax,
      ]),
    ).toEqual([
      ["a", "http_503", 2, 2_000, 101 + 103, 103],
      ["a", "ok", 3, 3_000, 100 + 102 + 104, 104],
      ["b", "http_503", 1, 1_000, 101, 101],
      ["b", "ok", 1, 1_000, 100, 100],
    ]);
    // Nothing left to fold: a second run changes nothing.
    expect(await trimFetchHistory(db, 14)).toEqual({ attemptsFolded: 0, pageLooks: 0 });
    expect(await db.prisma.fetchAttemptDaily.count()).toBe(4);
  });

  it("adds a later run's rows of the same day to the day's counts", async () => {
    await attempts("a", 20, 2);
    await trimFetchHistory(db, 14);
    await attempts("a", 20, 2);
    await trimFetchHistory(db, 14);
    const ok = await db.prisma.fetchAttemptDaily.findFirstOrThrow({
      where: { sourceId: "a", code: "ok" },
    });
    expect(ok.attempts).toBe(2);
    expect(Number(ok.bytes)).toBe(2_000);
  });

  it("works through a backlog larger than one batch", async () => {
    await db.prisma.$executeRaw`
      INSERT INTO fetch_attempts (source_id, collector, started_at, duration_ms, code, bytes)
      SELECT 's' || (g % 7), 'A', now() - interval '20 days' + g * interval '1 second', 50, 'ok', 10
      FROM generate_series(1, 25000) g`;
    const trimmed = await trimFetchHistory(db, 14);
    expect(trimmed.attemptsFolded).toBe(25_000);
    const [sum] = await db.prisma.$queryRaw<{ n: number }[]>`
      SELECT sum(attempts)::int AS n FROM fetch_attempts_daily`;
    expect(sum?.n).toBe(25_000);
  });

  it("deletes page looks past the days, and housekeeping runs it with the configured days", async () => {
    for (const daysAgo of [20, 1]) {
      await db.prisma.pageLook.create({
        data: {
          sourceId: "p",
          collector: "A",
          at: new Date(Date.now() - daysAgo * DAY_MS),
          mode: "http",
          code: "ok",
          wallMs: 10,
          cpuMs: 1,
        },
      });
    }
    await attempts("a", 20, 1);
    const done = await housekeeping(db);
    expect(done).toMatchObject({ attemptsFolded: 1, pageLooks: 1 });
    expect(await db.prisma.pageLook.count()).toBe(1);
  });
});

describe.skipIf(!requireRealPostgres("two processes folding fetch history at once"))(
  "two worker processes",
  () => {
    it("count every attempt once however their batches interleave", async () => {
      await db.prisma.$executeRaw`
        INSERT INTO fetch_attempts (source_id, collector, started_at, duration_ms, code, bytes)
        SELECT 's' || (g % 3), 'A', now() - interval '20 days' + g * interval '1 second', 5,
               'ok', 1
        FROM generate_series(1, 30000) g`;
      const other = await db.connectAnother(2);
      await other.prisma.$queryRaw`SELECT 1`;
      const runs = await Promise.all([trimFetchHistory(db, 14), trimFetchHistory(other, 14)]);
      expect(runs.reduce((n, r) => n + r.attemptsFolded, 0)).toBe(30_000);
      const [sum] = await db.prisma.$queryRaw<{ n: number }[]>`
        SELECT sum(attempts)::int AS n FROM fetch_attempts_daily`;
      expect(sum?.n).toBe(30_000);
      expect(await db.prisma.fetchAttempt.count()).toBe(0);
    }, 60_000);
  },
);
