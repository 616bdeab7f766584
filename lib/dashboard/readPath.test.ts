import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ReadPathProcess } from "@/lib/metrics/readPath";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import {
  type BuildLag,
  buildSeries,
  mixQuantile,
  readModelSummary,
  readPathView,
} from "./readPath";

let db: TestDatabase;
const now = new Date();
const secondsAgo = (s: number) => new Date(now.getTime() - s * 1000);

/** A process that has served nothing and chose no store yet. */
const quiet = (over: Partial<ReadPathProcess> = {}): ReadPathProcess => ({
  since: secondsAgo(3600),
  store: null,
  requests: { hit: 0, miss: 0, stale: 0, not_modified: 0, not_found: 0, error: 0, rate_limited: 0 },
  ttfb: new Array(16).fill(0),
  ...over,
});

async function build(
  version: number,
  finishedSecondsAgo: number,
  over: { changed?: number; p50?: number; p99?: number; buildMs?: number; error?: string } = {},
) {
  const { changed = 10, p50 = 2_000, p99 = 8_000, buildMs = 300, error = null } = over;
  const finished = secondsAgo(finishedSecondsAgo);
  const started = new Date(finished.getTime() - buildMs);
  await db.prisma.$executeRaw`
    INSERT INTO read_model_builds (model_version, started_at, finished_at, build_ms, stories,
                                   changed, payloads, bytes, lag_p50_ms, lag_p99_ms, trigger, error)
    VALUES (${version}, ${started}, ${finished}, ${buildMs}, 500, ${changed}, 60, 250000,
            ${error ? null : p50}, ${error ? null : p99}, 'changed', ${error})`;
}

async function story(key: string, indexedSecondsAgo: number) {
  const at = secondsAgo(indexedSecondsAgo);
  await db.prisma.$executeRaw`
    INSERT INTO read_stories (story_key, source_id, item_version, title, first_seen_at,
                              fetched_at, updated_at, indexed_at)
    VALUES (${key}, 'wire', 1, ${`Story ${key}`}, ${at}, ${at}, ${at}, ${at})`;
}

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

describe("mixQuantile", () => {
  const same: BuildLag = { changed: 10, p50Ms: 2_000, p99Ms: 8_000 };

  it("gives a build's own figures back when every build has them", () => {
    expect(mixQuantile([same, same, same], 0.5)).toBeCloseTo(2_000, 0);
    expect(mixQuantile([same, same, same], 0.99)).toBeCloseTo(8_000, 0);
  });

  it("lies between the builds' smallest and largest figure of the quantile", () => {
    const builds: BuildLag[] = [
      { changed: 5, p50Ms: 500, p99Ms: 1_500 },
      { changed: 50, p50Ms: 3_000, p99Ms: 20_000 },
      { changed: 1, p50Ms: 60_000, p99Ms: 90_000 },
    ];
    const p50 = mixQuantile(builds, 0.5) ?? -1;
    const p99 = mixQuantile(builds, 0.99) ?? -1;
    expect(p50).toBeGreaterThanOrEqual(500);
    expect(p50).toBeLessThanOrEqual(60_000);
    expect(p99).toBeGreaterThanOrEqual(1_500);
    expect(p99).toBeLessThanOrEqual(90_000);
    expect(p50).toBeLessThan(p99);
  });

  it("follows the stories, not the builds: one big slow build outweighs many small quick ones", () => {
    const builds: BuildLag[] = [
      { changed: 1_000, p50Ms: 300_000, p99Ms: 600_000 },
      ...Array.from({ length: 99 }, () => ({ changed: 10, p50Ms: 500, p99Ms: 1_000 })),
    ];
    // 1,000 of 1,990 stories are in the slow build: the median is in it, and the p99 (the
    // 20 slowest) in its tail, near its own p99 — not the changed-weighted mean of p99s (~300 s).
    expect(mixQuantile(builds, 0.5) ?? 0).toBeGreaterThan(1_000);
    expect(mixQuantile(builds, 0.99) ?? 0).toBeGreaterThan(550_000);
  });

  it("has nothing to say without changed stories", () => {
    expect(mixQuantile([], 0.99)).toBeNull();
    expect(mixQuantile([{ changed: 0, p50Ms: 1, p99Ms: 2 }], 0.5)).toBeNull();
  });
});

describe("the read model on the dashboard", () => {
  it("says nothing was built on an empty database, with no banner", async () => {
    const s = await readModelSummary(db, { now, intervalMs: 2_000, process: quiet() });
    expect(s.head).toBeNull();
    expect(s.lag).toEqual({ lastFiveMinutes: null, lastHour: null });
    expect(s.pending).toEqual({ stories: 0, oldestAt: null, stale: false });
    expect(s.banners).toEqual([]);
  });

  it("reads the head, the lag over 5 minutes and the hour, and a stale model with its banner", async () => {
    await build(1, 3_000, { changed: 100, p50: 50_000, p99: 200_000 }); // 50 min ago: hour only
    await build(2, 4_000, { error: "database down" }); // older than the head: not failing now
    await build(3, 120, { changed: 10, p50: 1_000, p99: 4_000 });
    await build(4, 60, { changed: 10, p50: 1_000, p99: 4_000, buildMs: 450 });
    await build(5, 7_200); // two hours ago: outside every window
    // Indexed before the head's build started: held by it.
    await story("held", 61);
    let s = await readModelSummary(db, { now, intervalMs: 2_000, process: quiet() });
    expect(s.head).toMatchObject({ version: 4, buildMs: 450, changed: 10, trigger: "changed" });
    expect(s.head?.ageSeconds).toBeCloseTo(60, 0);
    expect(s.failing).toBeNull();
    expect(s.lag.lastFiveMinutes).toEqual({ builds: 2, stories: 20, p50Ms: 1_000, p99Ms: 4_000 });
    expect(s.lag.lastHour?.builds).toBe(3);
    expect(s.lag.lastHour?.stories).toBe(120);
    // 100 of 120 stories waited ~50 s: the hour's median is theirs.
    expect(s.lag.lastHour?.p50Ms).toBeGreaterThan(4_000);
    expect(s.pending.stale).toBe(false);
    expect(s.banners).toEqual([]);

    // Changed 30 s ago (15 build intervals) and no build since: stale.
    await story("waiting", 30);
    await story("recent", 1);
    s = await readModelSummary(db, { now, intervalMs: 2_000, process: quiet() });
    expect(s.pending).toMatchObject({ stories: 2, stale: true });
    expect(s.banners.map((b) => b.kind)).toEqual(["stale"]);
    expect(s.banners[0]?.text).toMatch(/No read model built for 30 s: 2 changed stories wait/);
    // At a 10 s interval, 30 s is under 5 intervals: not yet.
    s = await readModelSummary(db, { now, intervalMs: 10_000, process: quiet() });
    expect(s.pending.stale).toBe(false);
  });

  it("shows a failed last build and Redis's fallback from this process's store state", async () => {
    await build(6, 10, { error: "read_payloads: connection refused" });
    const s = await readModelSummary(db, {
      now,
      intervalMs: 60_000,
      process: quiet({
        store: { kind: "memory", fallback: true, error: "connect ECONNREFUSED", at: now },
      }),
    });
    expect(s.failing?.error).toBe("read_payloads: connection refused");
    expect(s.store).toMatchObject({ kind: "memory", fallback: true });
    expect(s.banners.map((b) => b.kind)).toEqual(["fallback", "failing"]);
    expect(s.banners[0]?.text).toContain("Redis is down");
  });

  it("plots builds over time with their duration and lag, failures apart", async () => {
    const { bucketSeconds, points } = await buildSeries(db, { hours: 1, now });
    expect(bucketSeconds).toBe(120);
    expect(points.length).toBeGreaterThanOrEqual(30);
    expect(points.reduce((n, p) => n + p.builds, 0)).toBe(3);
    expect(points.reduce((n, p) => n + p.failed, 0)).toBe(1);
    const withLag = points.filter((p) => p.lagP99Ms !== null);
    expect(Math.max(...withLag.map((p) => p.lagP99Ms ?? 0))).toBeGreaterThan(100_000);
    expect(Math.max(...points.map((p) => p.buildMaxMs ?? 0))).toBe(450);
  });

  it("gives this process's cache hit ratio and time to first byte", async () => {
    const ttfb = new Array(16).fill(0);
    ttfb[0] = 98; // ≤ 1 ms
    ttfb[7] = 2; // 30–50 ms
    const v = await readPathView(db, {
      now,
      intervalMs: 60_000,
      process: quiet({
        requests: {
          hit: 80,
          not_modified: 10,
          miss: 5,
          stale: 5,
          not_found: 3,
          error: 0,
          rate_limited: 7,
        },
        ttfb,
      }),
    });
    expect(v.requests.total).toBe(110);
    expect(v.requests.hitRatio).toBeCloseTo(0.9, 10);
    expect(v.requests.ttfbP50Ms).toBeLessThanOrEqual(1);
    expect(v.requests.ttfbP99Ms).toBeGreaterThan(30);
    expect(v.requests.ttfbP99Ms).toBeLessThanOrEqual(50);
    expect(v.builds.length).toBeGreaterThanOrEqual(30);
    expect(v.summary.head?.version).toBe(4);
  });
});
