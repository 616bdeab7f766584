import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { type Simulator, startSimulator } from "@/simulator/server";
import { httpStoryApi } from "./api";
import { catchUp } from "./catchUp";
import { loadStorySource } from "./source";

// The embedded default restarts its simulator with the app: the new desk has issued nothing yet,
// so the cursor saved against the old one is "not a cursor this API issued" (400), not expired.
describe("catch-up over HTTP against a restarted story API", () => {
  let db: TestDatabase;
  let before: Simulator;
  let after: Simulator;
  beforeAll(async () => {
    db = await createTestDatabase();
    before = await startSimulator({ seed: 5, manual: true });
    after = await startSimulator({ seed: 5, manual: true });
  });
  afterAll(async () => {
    await before?.stop();
    await after?.stop();
    await db?.drop();
  });

  it("a cursor the API rejects with 400 reloads the copy in full and catches up from the start", async () => {
    const old = before.control.stories.desk;
    for (let i = 0; i < 40; i++) old.create("ACME", `Acme story ${i}`);
    await db.prisma.source.create({
      data: {
        id: "desk",
        name: "Desk",
        kind: "story-api",
        url: `${before.url}/stories-api`,
        tickers: ["ACME"],
        allowPrivate: true,
      },
    });
    const source = await loadStorySource(db, "desk");
    if (!source) throw new Error("no source");
    const api = (url: string) => httpStoryApi(url, { allowPrivate: true });
    await catchUp({ db, source, api: api(`${before.url}/stories-api`) }, { graceSeconds: 0 });
    const saved = await db.prisma.storySync.findUniqueOrThrow({ where: { sourceId: "desk" } });
    expect(saved.cursor).toBeTruthy();
    const stale = await fetch(`${after.url}/stories-api/v1/events?cursor=${saved.cursor}`);
    expect(stale.status).toBe(400);

    const fresh = after.control.stories.desk;
    fresh.create("ACME", "After the restart");
    const result = await catchUp(
      { db, source, api: api(`${after.url}/stories-api`) },
      { graceSeconds: 0 },
    );
    expect(result.reloads).toBe(1);
    const sync = await db.prisma.storySync.findUniqueOrThrow({ where: { sourceId: "desk" } });
    expect(sync.lastError).toBeNull();
    expect(sync.reloads).toBe(1);
    expect(sync.cursor).not.toBe(saved.cursor);
    // The copy is the new API's: the 40 stories it does not know (404) are closed, its one is open.
    const open = await db.prisma.story.count({ where: { sourceId: "desk", closed: false } });
    expect(open).toBe(fresh.snapshot().open.length);
    expect(await db.prisma.story.count({ where: { sourceId: "desk", closed: true } })).toBe(
      40 - open,
    );
    // The cursor the new API issued is accepted: the next run is an ordinary catch-up.
    const next = await catchUp(
      { db, source, api: api(`${after.url}/stories-api`) },
      { graceSeconds: 0 },
    );
    expect(next.reloads).toBe(0);
  });
});
