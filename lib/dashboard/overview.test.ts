import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { overview, type Thresholds } from "./overview";
import { minutesBefore, seedAttempts, seedSource } from "./testing";

let db: TestDatabase;
const now = new Date();
const thresholds: Thresholds = {
  ALERT_DLQ_AMBER: 1,
  ALERT_DLQ_RED: 3,
  ALERT_LAG_P99_AMBER_SECONDS: 120,
  ALERT_LAG_P99_RED_SECONDS: 900,
  ALERT_ERROR_RATE_AMBER: 0.05,
  ALERT_ERROR_RATE_RED: 0.25,
};

async function newsEvents(minutesAgo: number[]) {
  await db.prisma.newsEvent.createMany({
    data: minutesAgo.map((m) => ({
      sourceId: "fine",
      collector: "A",
      origin: "feed",
      kind: "item",
      observedAt: minutesBefore(now, m),
      receivedAt: minutesBefore(now, m),
      payload: {},
      result: "inserted",
    })),
  });
}

async function claims(queue: string, waits: number[], minutesAgo = 5) {
  await db.prisma.leaseEvent.createMany({
    data: waits.map((waitMs, i) => ({
      at: minutesBefore(now, minutesAgo),
      jobId: BigInt(i + 1),
      queue,
      attempt: 1,
      kind: "claimed",
      waitMs,
    })),
  });
}

beforeAll(async () => {
  db = await createTestDatabase();
  await seedSource(db, "fine");
  await db.prisma.collectorStatus.create({
    data: { sourceId: "fine", collector: "A", lastActivityAt: now, lastContentAt: now },
  });
});

afterAll(async () => {
  await db?.drop();
});

describe("overview", () => {
  it("is all ok on a quiet, healthy system", async () => {
    const o = await overview(db, { now, thresholds });
    expect(o.status).toBe("ok");
    expect(o.ingest).toMatchObject({ lastHour: 0, perMinute: 0 });
    expect(o.ingest.series.length).toBe(60);
    expect(o.lag.worstP99Seconds).toBeNull();
    expect(o.health.byState.healthy).toBe(1);
    expect(o.outage).toBeNull();
  });

  it("counts the last hour only and turns amber, then red, at the thresholds", async () => {
    await newsEvents([1, 1, 2, 30, 59.5, 61, 120]);
    await claims("fetch", [100, 200, 300, 400, 200_000]);
    await claims("fetch", [999_999_999], 70); // older than the hour
    await seedAttempts(db, "fine", now, [
      "ok",
      "ok",
      "ok",
      "ok",
      "ok",
      "ok",
      "ok",
      "ok",
      "ok",
      "http_503",
    ]);
    let o = await overview(db, { now, thresholds });
    expect(o.ingest.lastHour).toBe(5);
    expect(o.ingest.perMinute).toBeCloseTo(5 / 60, 1);
    expect(o.ingest.series.reduce((n, p) => n + p.count, 0)).toBe(5);
    expect(o.lag.stages).toEqual([
      expect.objectContaining({ queue: "fetch", claims: 5, p50Ms: 300 }),
    ]);
    expect(o.lag.stages[0]?.p99Ms).toBeGreaterThan(190_000);
    expect(o.lag.level).toBe("amber");
    expect(o.fetches).toMatchObject({ attempts: 10, errors: 1, errorRate: 0.1, level: "amber" });
    expect(o.status).toBe("amber");

    await db.prisma.job.createMany({
      data: [1, 2, 3].map((i) => ({ queue: "fetch", state: "dead", key: `d${i}`, deadAt: now })),
    });
    await db.prisma.sourceState.update({
      where: { sourceId: "fine" },
      data: { breakerState: "open", breakerChangedAt: now, lastErrorCode: "http_503" },
    });
    await db.prisma.networkOutage.create({
      data: { startedAt: minutesBefore(now, 3), failingHosts: 5, totalHosts: 6 },
    });
    o = await overview(db, { now, thresholds });
    expect(o.deadLetters).toMatchObject({ total: 3, level: "red" });
    expect(o.breakers).toMatchObject({ open: 1, sources: ["fine"], level: "amber" });
    expect(o.health.byState.failing).toBe(1);
    expect(o.outage).toMatchObject({ failingHosts: 5, totalHosts: 6 });
    expect(o.status).toBe("red");
  });
});
