import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { overview } from "./overview";
import { forgetSourceSnapshot, SNAPSHOT_MAX_AGE_MS, sourceSnapshot } from "./sourceIndex";
import { listSources } from "./sources";
import { seedDownAndFine, seedSource } from "./testing";

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
  await seedDownAndFine(db, new Date());
});
afterAll(async () => {
  vi.useRealTimers();
  await db?.drop();
});

describe("the process's snapshot of every source's keys", () => {
  it("orders and filters the live list by health and error rate, rows read fresh", async () => {
    forgetSourceSnapshot(db);
    const ids = async (q: Parameters<typeof listSources>[1]) =>
      (await listSources(db, q)).sources.map((s) => s.id);
    expect(await ids({ sort: "health", dir: "desc" })).toEqual(["down", "fine"]);
    expect(await ids({ sort: "errorRate", dir: "desc" })).toEqual(["down", "fine"]);
    expect(await ids({ health: "healthy" })).toEqual(["fine"]);
    const o = await overview(db);
    expect(o.health.byState).toMatchObject({ failing: 1, healthy: 1 });
    expect(o.health.total).toBe(2);
  });

  it("is reused while young, answered stale while a newer one is read, then replaced", async () => {
    forgetSourceSnapshot(db);
    const first = await sourceSnapshot(db);
    await seedSource(db, "late");
    // Young: the same snapshot, without the source just added.
    expect(await sourceSnapshot(db)).toBe(first);
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() + SNAPSHOT_MAX_AGE_MS + 1_000);
    // Old: still answered at once from the previous one, while the next is read.
    const stale = await sourceSnapshot(db);
    expect(stale).toBe(first);
    vi.useRealTimers();
    await vi.waitFor(async () => {
      const next = await sourceSnapshot(db);
      expect(next.keys.map((k) => k.id)).toContain("late");
    });
    expect(first.keys.map((k) => k.id)).not.toContain("late");
  });
});
