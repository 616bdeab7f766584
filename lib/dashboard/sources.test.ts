import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { listSources, sourceDetail } from "./sources";
import { seedDownAndFine, seedSource } from "./testing";

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
    const rows = await listSources(db, now);
    expect(rows.map((r) => r.id)).toEqual(["down", "fine"]);
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
