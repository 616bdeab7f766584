import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "@/lib/db";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { enqueue } from "./enqueue";
import { JOBS_CHANNEL, wakeQueue } from "./wakeQueues";

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db?.drop());

/** Every notification on the jobs channel while `work` runs, and a little after. */
async function heardDuring(work: () => Promise<unknown>): Promise<string[]> {
  const heard: string[] = [];
  const unlisten = await db.listen(JOBS_CHANNEL, (queue) => heard.push(queue));
  try {
    await work();
    await new Promise((r) => setTimeout(r, 300));
  } finally {
    await unlisten();
  }
  return heard;
}

describe("wakeQueue", () => {
  it("gathers the wakes of many enqueues into a few notifying commits", async () => {
    // Each enqueue used to notify in its own statement: 100 enqueues were 100 commits queued on
    // PostgreSQL's notify lock, and 100 notifications (NOTIFY folds duplicates only within one
    // transaction).
    const heard = await heardDuring(() =>
      Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          enqueue(db, i % 2 === 0 ? "even" : "odd", [{ key: `k${i}` }]),
        ),
      ),
    );
    expect(heard).toContain("even");
    expect(heard).toContain("odd");
    expect(heard.length).toBeLessThan(20);
    expect(await db.prisma.job.count({ where: { queue: { in: ["even", "odd"] } } })).toBe(100);
  });

  it("sends nothing for jobs that are not due yet, nor for keys already live", async () => {
    await enqueue(db, "live", [{ key: "same" }]);
    await new Promise((r) => setTimeout(r, 300)); // its own wake, sent after it returned
    const heard = await heardDuring(async () => {
      await enqueue(db, "later", [{ key: "a", delaySeconds: 60 }]);
      await enqueue(db, "live", [{ key: "same" }]);
    });
    expect(heard).toEqual([]);
  });

  it("wakes after the jobs are visible: a woken worker finds them", async () => {
    const found: number[] = [];
    const unlisten = await db.listen(JOBS_CHANNEL, (queue) => {
      if (queue !== "visible") return;
      void db.prisma.job.count({ where: { queue: "visible" } }).then((n) => found.push(n));
    });
    await enqueue(db, "visible", [{ key: "v1" }, { key: "v2" }]);
    await new Promise((r) => setTimeout(r, 300));
    await unlisten();
    expect(found).toEqual([2]);
  });

  it("a wake that cannot be sent is dropped with a log line, never thrown", async () => {
    const broken = {
      ...db,
      pool: undefined,
      prisma: {
        $queryRaw: () => Promise.reject(new Error("connection terminated")),
      },
    } as unknown as Database;
    await expect(wakeQueue(broken, "q")).resolves.toBeUndefined();
    // The next wake is not stuck behind the failed one.
    await expect(wakeQueue(broken, "q")).resolves.toBeUndefined();
  });
});
