import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { requeueDeadLetters } from "@/workers/queue/deadLetters";
import { makeDeadLetters } from "@/workers/queue/deadLetters/testing";
import { enqueue } from "@/workers/queue/enqueue";
import { FETCH_QUEUE, syncFrontier } from "./frontier";

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db?.drop());

describe("syncFrontier", () => {
  it("deletes waiting jobs of collectors it no longer wants, but never a requeued dead letter", async () => {
    const [dead] = await makeDeadLetters(db, FETCH_QUEUE, [
      { key: "gone-src/probe", sourceId: "gone-src", payload: { sourceId: "gone-src" } },
    ]);
    await enqueue(db, FETCH_QUEUE, [{ key: "gone-src/A", sourceId: "gone-src" }]);
    const requeued = await requeueDeadLetters(db, {
      actor: "admin",
      filter: { ids: [dead as string] },
    });
    expect(requeued.requeued).toBe(1);
    await syncFrontier(db);
    const left = await db.prisma.job.findMany({ where: { queue: FETCH_QUEUE } });
    // The admin asked for that run: it happens (the fetch stage ends it, its source not wanted),
    // rather than the requeue vanishing unrun.
    expect(left.map((j) => [j.key, j.state])).toEqual([["gone-src/probe", "ready"]]);
  });
});
