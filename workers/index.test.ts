import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { startWorkers } from "./index";

// The runtime's bookkeeping: one collector per enabled source and collector name, following the
// sources table as it changes. The URLs point at a closed local port: every fetch fails fast.
let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db?.drop());

const closed = "http://127.0.0.1:9/feed.xml";
const until = async (what: string, ok: () => boolean) => {
  const deadline = Date.now() + 5_000;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
};

describe("startWorkers", () => {
  it("runs one collector per source and name, and follows the sources table", async () => {
    await db.prisma.source.createMany({
      data: [
        {
          id: "a",
          name: "A",
          kind: "feed",
          url: closed,
          allowPrivate: true,
          collectors: ["A", "B"],
        },
        { id: "b", name: "B", kind: "page", url: closed, allowPrivate: true },
        { id: "c", name: "C", kind: "feed", url: null },
        { id: "d", name: "D", kind: "feed", url: closed, enabled: false },
      ],
    });
    const workers = await startWorkers(db, { sourcesRefreshMs: 50, fetch: { robots: false } });
    try {
      expect(workers.running().sort()).toEqual(["a/A", "a/B", "b/A"]);
      await db.prisma.source.update({ where: { id: "a" }, data: { collectors: ["A"] } });
      await db.prisma.source.update({ where: { id: "d" }, data: { enabled: true } });
      await db.prisma.source.update({ where: { id: "b" }, data: { enabled: false } });
      await until("the changes", () => workers.running().sort().join() === "a/A,d/A");
    } finally {
      await workers.stop();
    }
    expect(workers.running()).toEqual([]);
    // the failing fetches were recorded, not thrown
    expect(
      await db.prisma.fetchAttempt.count({ where: { sourceId: "a", code: "connect" } }),
    ).toBeGreaterThan(0);
  });
});
