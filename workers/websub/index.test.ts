import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { startWebSub } from "./index";

describe("startWebSub", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ embedded: true });
  });
  afterAll(() => db?.drop());

  it("runs a round at start and on demand, and stops after the round in flight", async () => {
    let rounds = 0;
    await db.prisma.source.create({
      data: { id: "f", name: "F", kind: "feed", url: "http://127.0.0.1:9/feed.xml" },
    });
    const websub = startWebSub(
      db,
      {
        callbackBase: "http://127.0.0.1:9",
        leaseSeconds: 600,
        discover: async () => {
          rounds++;
          return { hub: null, self: null };
        },
      },
      60_000,
    );
    await websub.runOnce(); // the start's round, still running, or a second one
    await websub.runOnce();
    await websub.stop();
    // The feed was looked at once: no hub, recorded, not looked at again for a day.
    expect(rounds).toBe(1);
    expect(
      await db.prisma.websubSubscription.findUnique({ where: { sourceId: "f" } }),
    ).toMatchObject({
      state: "no_hub",
    });
  });
});
