import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { claim } from "@/workers/queue/claim";
import { PAUSED_MARKER_QUEUE } from "@/workers/queue/paused";
import { pausedQueues, pauseQueue, QUEUE_AUDIT_ACTIONS, resumeQueue } from "./queues";

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
  await db.prisma.job.createMany({
    data: [
      { queue: "fetch", key: "a" },
      { queue: "fetch", key: "b" },
      { queue: "dedup", key: "c" },
    ],
  });
});

afterAll(async () => {
  await db?.drop();
});

describe("pause and resume a queue", () => {
  it("a paused queue claims nothing, others claim as before; audited", async () => {
    const paused = await pauseQueue(db, "fetch", "admin");
    expect(paused).toMatchObject({ affected: 1, message: expect.stringMatching(/^paused/) });
    expect(await claim(db, "fetch", "w1", 10, 30)).toEqual([]);
    expect(await claim(db, "dedup", "w1", 10, 30)).toHaveLength(1);
    // The marker is never claimed, and is no job of its own queue's workers.
    expect(await claim(db, PAUSED_MARKER_QUEUE, "w1", 10, 30)).toEqual([]);
    expect((await pausedQueues(db)).map((p) => p.queue)).toEqual(["fetch"]);

    const audit = await db.prisma.adminAudit.findFirst({
      where: { id: BigInt(paused?.auditId ?? 0) },
    });
    expect(audit).toMatchObject({
      actor: "admin",
      action: QUEUE_AUDIT_ACTIONS.pause,
      target: { queue: "fetch" },
      affected: 1,
    });
  });

  it("pausing twice changes nothing more, and says so", async () => {
    expect(await pauseQueue(db, "fetch", "admin")).toMatchObject({
      affected: 0,
      message: "already paused",
    });
    expect(await pausedQueues(db)).toHaveLength(1);
  });

  it("resume lets the queue's jobs be claimed again", async () => {
    expect(await resumeQueue(db, "fetch", "admin")).toMatchObject({
      affected: 1,
      message: "resumed",
    });
    expect(await claim(db, "fetch", "w1", 10, 30)).toHaveLength(2);
    expect(await pausedQueues(db)).toEqual([]);
    expect(await resumeQueue(db, "fetch", "admin")).toMatchObject({
      affected: 0,
      message: "was not paused",
    });
  });

  it("refuses a queue nobody has used, and the marker queue itself", async () => {
    expect(await pauseQueue(db, "fetchh", "admin")).toBeNull();
    expect(await pauseQueue(db, PAUSED_MARKER_QUEUE, "admin")).toBeNull();
    expect(
      await db.prisma.adminAudit.count({ where: { target: { equals: { queue: "fetchh" } } } }),
    ).toBe(0);
  });
});
