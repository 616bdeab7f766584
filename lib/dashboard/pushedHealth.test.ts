import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { sourceDetail } from "./sources";
import { minutesBefore, seedSource } from "./testing";

// A feed polled on a longer schedule than its configured interval by the scheduler's own
// choice (a WebSub hub pushes it, so polling is the 4× slower safety net) is judged by that
// schedule: 12 minutes without a poll is stalled at 5 minutes, not at 20.

let db: TestDatabase;
const now = new Date();

beforeAll(async () => {
  db = await createTestDatabase();
  for (const [id, pollEverySeconds] of [
    ["pushed", 1_200],
    ["polled", null],
  ] as const) {
    await seedSource(db, id, { pollEverySeconds });
    await db.prisma.source.update({
      where: { id },
      data: { pollIntervalSeconds: 300, createdAt: minutesBefore(now, 600) },
    });
    await db.prisma.collectorStatus.create({
      data: {
        sourceId: id,
        collector: "A",
        lastActivityAt: minutesBefore(now, 12),
        lastActivityKind: "not_modified",
        lastContentAt: minutesBefore(now, 30),
      },
    });
  }
});

afterAll(async () => {
  await db?.drop();
});

describe("health on the scheduler's own schedule", () => {
  it("a pushed feed polled every 20 minutes is not stalled 12 minutes after its last poll", async () => {
    const pushed = await sourceDetail(db, "pushed", { now });
    const polled = await sourceDetail(db, "polled", { now });
    expect(polled?.health.state).toBe("stalled");
    expect(pushed?.health.state).not.toBe("stalled");
  });
});

describe("the WebSub subscription on the source page", () => {
  it("shows a feed's subscription: state, hub, pushes and refusals", async () => {
    const at = minutesBefore(now, 5);
    await db.prisma.websubSubscription.create({
      data: {
        sourceId: "pushed",
        state: "active",
        hub: "https://hub.example/",
        topic: "http://example.test/pushed.xml",
        expiresAt: minutesBefore(now, -600),
        pushes: 3n,
        lastPushAt: at,
        rejectedPushes: 1n,
        lastRejection: "bad_signature: X-Hub-Signature does not match",
      },
    });
    expect((await sourceDetail(db, "pushed", { now }))?.websub).toMatchObject({
      state: "active",
      hub: "https://hub.example/",
      pushes: 3,
      lastPushAt: at,
      rejectedPushes: 1,
      lastRejection: "bad_signature: X-Hub-Signature does not match",
    });
    expect((await sourceDetail(db, "polled", { now }))?.websub).toBeNull();
  });
});
