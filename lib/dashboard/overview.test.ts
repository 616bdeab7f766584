import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  resetIngestionStatus,
  setIngestionElsewhere,
  setIngestionState,
} from "@/lib/ingestionStatus";
import type { ReadPathProcess } from "@/lib/metrics/readPath";
import { seedClaimStats } from "@/lib/testing/claimStats";
import { COSTS_SEED, seedCostRows } from "@/lib/testing/costsSeed";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { BREAKER_SOURCES_SHOWN, overview, type Thresholds } from "./overview";
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
  await seedClaimStats(db, { queue, at: minutesBefore(now, minutesAgo), waitsMs: waits });
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
      "http_503",
      "ok",
      "ok",
      "ok",
      "ok",
      "ok",
      "ok",
      "ok",
      "ok",
      "ok",
    ]);
    let o = await overview(db, { now, thresholds });
    expect(o.ingest.lastHour).toBe(5);
    // The current rate: the 3 of the last 5 minutes, not the hour's average.
    expect(o.ingest).toMatchObject({ lastFiveMinutes: 3, perMinute: 0.6 });
    expect(o.ingest.series.reduce((n, p) => n + p.count, 0)).toBe(5);
    expect(o.lag.stages).toEqual([
      // Estimated from the wait histogram: the 3rd of 5 waits lies in (250, 500] ms with the 4th,
      // so a quarter of the way into it (313); the 5th, 200 s, in (120, 300] s.
      expect.objectContaining({ queue: "fetch", claims: 5, p50Ms: 313 }),
    ]);
    expect(o.lag.stages[0]?.p99Ms).toBeGreaterThan(190_000);
    expect(o.lag.level).toBe("amber");
    // Judged on the last 5 minutes (1 of the 6 made 0-5 minutes ago failed), with the hour beside.
    expect(o.fetches).toMatchObject({ attempts: 6, errors: 1, level: "amber" });
    expect(o.fetches.lastHour).toMatchObject({ attempts: 10, errors: 1, errorRate: 0.1 });
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

describe("overview judged on the last 5 minutes beside the hour", () => {
  let fresh: TestDatabase;
  const at = new Date();
  beforeAll(async () => {
    fresh = await createTestDatabase();
  });
  afterAll(async () => {
    await fresh?.drop();
  });
  beforeEach(async () => {
    resetIngestionStatus();
    await fresh.prisma
      .$executeRaw`TRUNCATE sources, news_events, fetch_attempts, network_outages CASCADE`;
  });

  async function source(id: string, health: "fine" | "failing", createdMinutesAgo = 120) {
    await seedSource(
      fresh,
      id,
      health === "failing"
        ? {
            breakerState: "open",
            breakerChangedAt: minutesBefore(at, 2),
            lastErrorAt: minutesBefore(at, 2),
            lastErrorCode: "http_503",
          }
        : {},
    );
    await fresh.prisma.source.update({
      where: { id },
      data: { createdAt: minutesBefore(at, createdMinutesAgo) },
    });
    await fresh.prisma.collectorStatus.create({
      data: {
        sourceId: id,
        collector: "A",
        lastActivityAt: minutesBefore(at, health === "fine" ? 0.5 : 3),
        lastContentAt: minutesBefore(at, health === "fine" ? 0.5 : 40),
      },
    });
  }

  it("is red, with a red ingest tile, when every source is failing", async () => {
    for (const id of ["a", "b", "c", "d"]) {
      await source(id, "failing");
      await seedAttempts(fresh, id, minutesBefore(at, 2), ["http_503", "http_503", "http_503"]);
    }
    const o = await overview(fresh, { now: at, thresholds });
    expect(o.health).toMatchObject({ level: "red", byState: { failing: 4 } });
    expect(o.ingest.level).toBe("red");
    expect(o.status).toBe("red");
  });

  it("counts every open breaker and names the first BREAKER_SOURCES_SHOWN, open before half-open", async () => {
    for (let i = 0; i < BREAKER_SOURCES_SHOWN + 5; i++) await source(`open-${i}`, "failing");
    await source("probing", "fine");
    await fresh.prisma.sourceState.update({
      where: { sourceId: "probing" },
      data: { breakerState: "half_open" },
    });
    const o = await overview(fresh, { now: at, thresholds });
    expect(o.breakers).toMatchObject({ open: BREAKER_SOURCES_SHOWN + 5, halfOpen: 1 });
    expect(o.breakers.sources).toHaveLength(BREAKER_SOURCES_SHOWN);
    expect(o.breakers.sources.every((id) => id.startsWith("open-"))).toBe(true);
    expect(o.health).toMatchObject({ total: BREAKER_SOURCES_SHOWN + 6 });
    expect(o.health.byState.failing).toBe(BREAKER_SOURCES_SHOWN + 6);
  });

  it("is red when most sources fail, amber when a few do", async () => {
    for (const id of ["a", "b", "c"]) await source(id, "failing");
    await source("d", "fine");
    expect((await overview(fresh, { now: at, thresholds })).health.level).toBe("red");
    await fresh.prisma.sourceState.updateMany({
      where: { sourceId: { in: ["b", "c"] } },
      data: { breakerState: "closed", lastErrorAt: minutesBefore(at, 30) },
    });
    await fresh.prisma.collectorStatus.updateMany({
      where: { sourceId: { in: ["b", "c"] } },
      data: { lastActivityAt: minutesBefore(at, 0.5), lastContentAt: minutesBefore(at, 0.5) },
    });
    expect((await overview(fresh, { now: at, thresholds })).health.level).toBe("amber");
  });

  it("is back to ok within 5 minutes of recovery, with the hour's errors still shown", async () => {
    await source("a", "fine");
    // 30 failed polls 6-35 minutes ago, then 5 good ones in the last 5 minutes.
    await seedAttempts(fresh, "a", minutesBefore(at, 6), Array(30).fill("http_503"));
    await seedAttempts(fresh, "a", minutesBefore(at, 0.5), Array(5).fill("ok"));
    const o = await overview(fresh, { now: at, thresholds });
    expect(o.fetches).toMatchObject({ attempts: 5, errors: 0, errorRate: 0, level: "ok" });
    expect(o.fetches.lastHour).toMatchObject({ attempts: 35, errors: 30 });
    expect(o.status).toBe("ok");
  });

  it("shows the current ingest rate (last 5 minutes), beside the hour's count", async () => {
    await source("fine", "fine");
    const minutes = [
      ...Array.from({ length: 50 }, (_, i) => 20 + i * 0.5), // a burst 20-45 min ago
      ...Array.from({ length: 10 }, (_, i) => 0.2 + i * 0.4), // 10 in the last 5 min
    ];
    await fresh.prisma.newsEvent.createMany({
      data: minutes.map((m) => ({
        sourceId: "fine",
        collector: "A",
        origin: "feed",
        kind: "item",
        observedAt: minutesBefore(at, m),
        receivedAt: minutesBefore(at, m),
        payload: {},
        result: "inserted",
      })),
    });
    const o = await overview(fresh, { now: at, thresholds });
    expect(o.ingest).toMatchObject({ perMinute: 2, lastFiveMinutes: 10, lastHour: 60 });
  });

  it("counts sources not yet reported right after boot as starting, not stalled", async () => {
    await seedSource(fresh, "new-feed");
    await seedSource(fresh, "old-feed");
    await fresh.prisma.source.update({
      where: { id: "old-feed" },
      data: { createdAt: minutesBefore(at, 60) },
    });
    const o = await overview(fresh, { now: at, thresholds });
    expect(o.health.byState).toMatchObject({ starting: 1, stalled: 1 });
  });

  it("is red with the reason when ingestion in this process is not running", async () => {
    await source("a", "fine");
    setIngestionState("failed", {
      code: "sources_file_invalid",
      reason: "ingestion did not start: wirewatch.config.json is not valid",
    });
    const o = await overview(fresh, { now: at, thresholds });
    expect(o.ingestion).toMatchObject({
      level: "red",
      state: "failed",
      reason: "ingestion did not start: wirewatch.config.json is not valid",
    });
    expect(o.status).toBe("red");
    setIngestionElsewhere();
    expect((await overview(fresh, { now: at, thresholds })).status).toBe("ok");
  });

  it("is red when no source's collector is active (ingestion stopped, wherever it runs)", async () => {
    setIngestionElsewhere();
    for (const id of ["a", "b"]) await source(id, "fine");
    await fresh.prisma.collectorStatus.updateMany({
      data: { lastActivityAt: minutesBefore(at, 30), lastContentAt: minutesBefore(at, 30) },
    });
    const o = await overview(fresh, { now: at, thresholds });
    expect(o.health.byState.stalled).toBe(2);
    expect(o.ingestion).toMatchObject({ level: "red" });
    expect(o.ingestion.reason).toMatch(/no source's collector/);
    expect(o.status).toBe("red");
  });
});

describe("overview: extraction's budget", () => {
  it("shows today's extraction spend, and turns amber while a paid provider is stopped at its budget", async () => {
    const costs = await createTestDatabase();
    try {
      // Every source the seed adds is fresh (starting): only the budget can move the level.
      await seedCostRows(costs, now);
      setIngestionElsewhere();
      const stopped = await overview(costs, {
        now,
        thresholds,
        budgets: { llm: COSTS_SEED.budgetUsd },
      });
      expect(stopped.extraction.level).toBe("amber");
      expect(stopped.extraction.todayUsd).toBeCloseTo(COSTS_SEED.todayUsd, 10);
      expect(stopped.extraction.todayCalls).toBe(COSTS_SEED.todayCalls);
      expect(stopped.extraction.budgets).toMatchObject([
        { provider: "llm", budgetUsd: COSTS_SEED.budgetUsd, exhausted: true, skippedToday: 1 },
      ]);
      expect(stopped.status).toBe("amber");
      // A budget above today's spend: listed, not stopped, all clear.
      const under = await overview(costs, { now, thresholds, budgets: { llm: 1 } });
      expect(under.extraction.level).toBe("ok");
      expect(under.extraction.budgets[0]).toMatchObject({ exhausted: false, budgetUsd: 1 });
      expect(under.status).toBe("ok");
    } finally {
      resetIngestionStatus();
      await costs.drop();
    }
  });
});

describe("overview: the read path", () => {
  const idle: ReadPathProcess = {
    since: now,
    store: { kind: "redis", fallback: false, error: null, at: now },
    requests: {
      hit: 0,
      miss: 0,
      stale: 0,
      not_modified: 0,
      not_found: 0,
      error: 0,
      rate_limited: 0,
    },
    ttfb: [],
  };

  it("heads the lag tile with fetch → read model, stage lags beside it; store and staleness on their own tile", async () => {
    const read = await createTestDatabase();
    try {
      setIngestionElsewhere();
      const build = (secondsAgo: number, p50: number, p99: number) => read.prisma.$executeRaw`
        INSERT INTO read_model_builds (model_version, started_at, finished_at, build_ms, changed,
                                       lag_p50_ms, lag_p99_ms, trigger)
        VALUES (${Math.round(1_000 - secondsAgo)}, ${new Date(now.getTime() - secondsAgo * 1000 - 200)},
                ${new Date(now.getTime() - secondsAgo * 1000)}, 200, 4, ${p50}, ${p99}, 'changed')`;
      await build(1_800, 100_000, 400_000); // half an hour ago: the hour only
      await build(30, 1_500, 6_000);
      await seedClaimStats(read, { queue: "dedup", at: minutesBefore(now, 2), waitsMs: [5, 10] });
      const readPath = { intervalMs: 2_000, process: idle };
      let o = await overview(read, { now, thresholds, readPath });
      expect(o.lag.readModel.lastFiveMinutes).toMatchObject({
        builds: 1,
        p50Ms: 1_500,
        p99Ms: 6_000,
      });
      expect(o.lag.readModel.lastHour?.builds).toBe(2);
      expect(o.lag.stages.map((s) => s.queue)).toEqual(["dedup"]);
      expect(o.lag.level).toBe("ok");
      expect(o.readModel).toMatchObject({ level: "ok", head: { changed: 4 }, banners: [] });
      expect(o.readModel.store).toMatchObject({ kind: "redis", fallback: false });
      expect(o.status).toBe("ok");

      // Over the amber threshold (120 s) on the read model alone: the tile is amber.
      await build(20, 60_000, 200_000);
      o = await overview(read, { now, thresholds, readPath });
      expect(o.lag.level).toBe("amber");

      // Redis down, this process on memory: amber with the banner.
      o = await overview(read, {
        now,
        thresholds,
        readPath: {
          intervalMs: 2_000,
          process: {
            ...idle,
            store: { kind: "memory", fallback: true, error: "ECONNREFUSED", at: now },
          },
        },
      });
      expect(o.readModel.level).toBe("amber");
      expect(o.readModel.banners.map((b) => b.kind)).toEqual(["fallback"]);

      // A story changed 15 s ago (after the newest build started) and no build since: stale.
      await read.prisma.$executeRaw`
        INSERT INTO read_stories (story_key, source_id, item_version, title, first_seen_at,
                                  fetched_at, updated_at, indexed_at)
        VALUES ('k', 'wire', 1, 'Waiting', now(), now(), now(), ${minutesBefore(now, 0.25)})`;
      o = await overview(read, { now, thresholds, readPath });
      expect(o.readModel.level).toBe("red");
      expect(o.readModel.banners.map((b) => b.kind)).toEqual(["stale"]);
      expect(o.status).toBe("red");
    } finally {
      resetIngestionStatus();
      await read.drop();
    }
  });
});
