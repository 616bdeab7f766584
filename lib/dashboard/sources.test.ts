import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { BadSourceCursorError, encodeSourceCursor, type SourceListQuery } from "./sourceList";
import { ATTEMPT_MAX_POINTS, attemptBucketSeconds, listSources, sourceDetail } from "./sources";
import { minutesBefore, seedDownAndFine, seedSource } from "./testing";

let db: TestDatabase;
const now = new Date();

beforeAll(async () => {
  db = await createTestDatabase();
  await seedDownAndFine(db, now);
});

afterAll(async () => {
  await db?.drop();
});

describe("listSources", () => {
  it("gives health, breaker, the last hour's rates and a sparkline per source", async () => {
    const { sources: rows, nextCursor } = await listSources(db, {}, now);
    expect(rows.map((r) => r.id)).toEqual(["down", "fine"]);
    expect(nextCursor).toBeNull();
    const [down, fine] = rows;
    expect(down?.health.state).toBe("failing");
    expect(down?.breaker).toMatchObject({ state: "open", failures: 5 });
    expect(down?.breaker.nextProbeAt?.getTime()).toBe(
      (down?.breaker.since?.getTime() ?? 0) + 60_000,
    );
    expect(down?.lastHour).toMatchObject({ attempts: 4, errors: 3, errorRate: 0.75 });
    expect(down?.trustsValidators).toBe(false);
    expect(down?.lastError?.code).toBe("http_503");
    expect(fine?.health.state).toBe("healthy");
    expect(fine?.lastHour).toMatchObject({ attempts: 4, errors: 0, notModified: 2 });
    expect(fine?.lastHour.notModifiedRate).toBe(0.5);
    expect(fine?.collectors[0]).toMatchObject({ collector: "A", usualGapSeconds: 600 });
    expect(fine?.series.length).toBe(12);
    expect(fine?.series.reduce((n, p) => n + p.attempts, 0)).toBe(4);
    expect(fine?.nextPollAt).not.toBeNull();
  });
});

describe("listSources, one page at a time", () => {
  const ids = async (query: SourceListQuery) =>
    (await listSources(db, query, now)).sources.map((r) => r.id);

  it("pages by name with a keyset cursor, every source once", async () => {
    const first = await listSources(db, { limit: 1 }, now);
    expect(first.sources.map((r) => r.id)).toEqual(["down"]);
    expect(first.nextCursor).not.toBeNull();
    const second = await listSources(db, { limit: 1, cursor: first.nextCursor ?? "" }, now);
    expect(second.sources.map((r) => r.id)).toEqual(["fine"]);
    expect(second.nextCursor).toBeNull();
    expect(await ids({ dir: "desc" })).toEqual(["fine", "down"]);
  });

  it("sorts by health, error rate and last poll in the database", async () => {
    // failing (5) above healthy (0) when descending.
    expect(await ids({ sort: "health", dir: "desc" })).toEqual(["down", "fine"]);
    expect(await ids({ sort: "health" })).toEqual(["fine", "down"]);
    // 75 % against 0 %.
    expect(await ids({ sort: "errorRate", dir: "desc" })).toEqual(["down", "fine"]);
    const page = await listSources(db, { sort: "errorRate", dir: "desc", limit: 1 }, now);
    const rest = await listSources(
      db,
      { sort: "errorRate", dir: "desc", limit: 1, cursor: page.nextCursor ?? "" },
      now,
    );
    expect(rest.sources.map((r) => r.id)).toEqual(["fine"]);
    expect(await ids({ sort: "lastPolled", dir: "desc" })).toHaveLength(2);
  });

  it("filters by health, breaker, kind and text", async () => {
    expect(await ids({ health: "failing" })).toEqual(["down"]);
    expect(await ids({ health: "healthy" })).toEqual(["fine"]);
    expect(await ids({ health: "stalled" })).toEqual([]);
    expect(await ids({ breaker: "open" })).toEqual(["down"]);
    expect(await ids({ breaker: "closed" })).toEqual(["fine"]);
    expect(await ids({ kind: "stream" })).toEqual([]);
    expect(await ids({ kind: "feed", q: "FIN" })).toEqual(["fine"]);
    expect(await ids({ q: "example.test/down" })).toEqual(["down"]);
    // LIKE's wildcards are taken literally.
    expect(await ids({ q: "%" })).toEqual([]);
    expect(await ids({ q: "_own" })).toEqual([]);
  });

  it("refuses a cursor it did not make, or one made for another order", async () => {
    const { nextCursor } = await listSources(db, { limit: 1 }, now);
    await expect(
      listSources(db, { sort: "health", cursor: nextCursor ?? "" }, now),
    ).rejects.toBeInstanceOf(BadSourceCursorError);
    const bad: [SourceListQuery["sort"], string][] = [
      ["name", "!!"],
      ["name", encodeSourceCursor(["name", "asc", "a\u0000", "x"])],
      ["errorRate", encodeSourceCursor(["errorRate", "asc", "0.5" as unknown as number, "x"])],
      ["name", Buffer.from(JSON.stringify(["name", "asc", "a", 1])).toString("base64url")],
    ];
    for (const [sort, cursor] of bad) {
      await expect(listSources(db, { sort, cursor }, now)).rejects.toBeInstanceOf(
        BadSourceCursorError,
      );
    }
  });
});

describe("sourceDetail", () => {
  it("lists recent attempts newest first (bounded) and outcomes by code over a day", async () => {
    const d = await sourceDetail(db, "fine", { limit: 3, now });
    expect(d?.recentAttempts.length).toBe(3);
    expect(d?.recentAttempts[0]?.code).toBe("ok");
    expect(d?.codes).toEqual(
      [
        { code: "not_modified", count: 2 },
        { code: "ok", count: 2 },
        { code: "http_500", count: 2 },
      ].sort((a, b) => b.count - a.count || a.code.localeCompare(b.code)),
    );
    expect(await sourceDetail(db, "nope")).toBeNull();
  });
});

describe("sourceDetail over a window", () => {
  const HOUR = 60;
  /** One attempt each, its code naming when: a code is counted only inside its window. */
  const WEEKLY: [string, number][] = [
    ["ok", 30],
    ["timeout", 5 * HOUR],
    ["http_503", 20 * HOUR],
    ["not_modified", 3 * 24 * HOUR],
    ["http_500", 8 * 24 * HOUR],
  ];

  beforeAll(async () => {
    await seedSource(db, "weekly");
    await db.prisma.fetchAttempt.createMany({
      data: WEEKLY.map(([code, minutes]) => ({
        sourceId: "weekly",
        collector: "A",
        startedAt: minutesBefore(now, minutes),
        durationMs: 100,
        code,
        notModified: code === "not_modified",
      })),
    });
  });

  const codesOf = (d: Awaited<ReturnType<typeof sourceDetail>>) =>
    (d?.codes ?? []).map((c) => c.code).sort();
  const attemptsIn = (d: Awaited<ReturnType<typeof sourceDetail>>) =>
    (d?.fetching.series ?? []).reduce((n, p) => n + p.attempts, 0);

  it("keeps the hour in 5-minute buckets and the codes over a day when no window is asked", async () => {
    const d = await sourceDetail(db, "weekly", { now });
    expect(d?.fetching).toMatchObject({ hours: 1, bucketSeconds: 300, codesHours: 24 });
    expect(d?.fetching.series).toEqual(d?.series);
    expect(d?.fetching.series.length).toBe(12);
    expect(attemptsIn(d)).toBe(1);
    expect(codesOf(d)).toEqual(["http_503", "ok", "timeout"]);
  });

  it("draws attempts and counts codes over the same window, within 200 epoch-aligned buckets", async () => {
    const expected = [
      { hours: 1, bucketSeconds: 300, points: 12, codes: ["ok"] },
      { hours: 6, bucketSeconds: 300, points: 72, codes: ["ok", "timeout"] },
      { hours: 24, bucketSeconds: 600, points: 144, codes: ["http_503", "ok", "timeout"] },
      {
        hours: 168,
        bucketSeconds: 3600,
        points: 168,
        codes: ["http_503", "not_modified", "ok", "timeout"],
      },
    ];
    for (const { hours, bucketSeconds, points, codes } of expected) {
      const d = await sourceDetail(db, "weekly", { now, hours });
      expect(d?.fetching).toMatchObject({ hours, bucketSeconds, codesHours: hours });
      const series = d?.fetching.series ?? [];
      expect(series.length).toBe(points);
      for (const [i, p] of series.entries()) {
        expect(p.t % (bucketSeconds * 1000)).toBe(0);
        if (i > 0) expect(p.t - (series[i - 1]?.t ?? 0)).toBe(bucketSeconds * 1000);
      }
      // The series adds up to the codes: one window for both charts.
      expect(codesOf(d)).toEqual(codes);
      expect(attemptsIn(d)).toBe(codes.length);
      // The row's own figures (the Last hour fact) stay the hour's whatever the window.
      expect(d?.lastHour.attempts).toBe(1);
      expect(d?.series.length).toBe(12);
    }
    const week = await sourceDetail(db, "weekly", { now, hours: 168 });
    const notModified = week?.fetching.series.find((p) => p.notModified > 0);
    expect(notModified?.t).toBe(
      Math.floor(minutesBefore(now, 3 * 24 * HOUR).getTime() / 3_600_000) * 3_600_000,
    );
  });

  it("sizes buckets so no window, however long, has more than 200 points", () => {
    expect([1, 6, 24, 168].map(attemptBucketSeconds)).toEqual([300, 300, 600, 3600]);
    for (const hours of [0.5, 1, 6, 24, 48, 168, 720, 8760, 100_000]) {
      expect((hours * 3600) / attemptBucketSeconds(hours)).toBeLessThanOrEqual(ATTEMPT_MAX_POINTS);
    }
  });
});

describe("the breaker's outlook on a failing source", () => {
  it("says how many failures in a row of how many, and when it opens if it keeps failing", async () => {
    await seedSource(db, "wobbly", {
      breakerFailures: 3,
      nextPollAt: new Date(now.getTime() + 20_000),
    });
    await seedSource(db, "brink", { breakerFailures: 4 });
    const wobbly = await sourceDetail(db, "wobbly", { now });
    // The next poll in 20 s is the 4th failure, the one after it (within 30 s) the 5th.
    expect(wobbly?.breaker).toMatchObject({
      state: "closed",
      failures: 3,
      threshold: 5,
      outlook: "3 of 5 failures in a row; opens in about 1 min if it keeps failing",
    });
    expect(wobbly?.breaker.opensAt?.getTime()).toBe(now.getTime() + 50_000);
    const brink = await sourceDetail(db, "brink", { now });
    expect(brink?.breaker.outlook).toBe("4 of 5 failures in a row; opens at the next failure");
    const fine = await sourceDetail(db, "fine", { now });
    expect(fine?.breaker).toMatchObject({ failures: 0, outlook: null, opensAt: null });
  });
});
