import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { Random } from "@/simulator/random";
import { CursorExpiredError as DeskCursorExpired, StoryDesk } from "@/simulator/stories/desk";
import { CursorExpiredError, type StoryApi } from "./api";
import { applyStoryEvent } from "./apply";
import { catchUp } from "./catchUp";
import type { Story, StoryEvent } from "./events";
import type { Sender } from "./notify";
import { loadStorySource } from "./source";

/** The story API over an in-process desk; `onList` runs inside each listing (a change meanwhile). */
function deskApi(
  desk: StoryDesk,
  hooks: { onList?: () => void; pageSize?: number } = {},
): StoryApi {
  return {
    getStory: async (id) => desk.story(id) as Story | null,
    listStories: async (ticker) => desk.list(ticker) as Story[],
    listEvents: async (cursor, tickers) => {
      hooks.onList?.();
      try {
        return desk.events({ cursor, tickers, limit: hooks.pageSize ?? 4 });
      } catch (err) {
        if (err instanceof DeskCursorExpired) throw new CursorExpiredError(err.message);
        throw err;
      }
    },
  };
}

describe("catch-up, reload and tickers (seed 001)", () => {
  let db: TestDatabase;
  let desk: StoryDesk;
  const sent: string[] = [];
  const send: Sender = async (_db, n) => void sent.push(n.story.id);
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(() => db?.drop());
  beforeEach(async () => {
    await db.prisma.source.deleteMany();
    sent.length = 0;
    desk = new StoryDesk({ random: new Random(7), clock: Date.now, tickers: ["ACME", "GLOBX"] });
  });

  const addSource = (tickers: string[]) =>
    db.prisma.source.create({
      data: { id: "desk", name: "Desk", kind: "story-api", url: "http://desk.invalid/", tickers },
    });
  const context = async (api: StoryApi) => {
    const source = await loadStorySource(db, "desk");
    if (!source) throw new Error("no source");
    return { db, source, api, send };
  };
  const openCopy = async () =>
    Object.fromEntries(
      (await db.prisma.story.findMany({ where: { closed: false } })).map((r) => [r.id, r.version]),
    );
  const openTruth = (tickers: string[]) =>
    Object.fromEntries(
      desk
        .snapshot()
        .open.filter((s) => tickers.includes(s.ticker))
        .map((s) => [s.id, s.version]),
    );

  it("catches up from the start of the window, page by page, saving the cursor after each", async () => {
    for (let i = 0; i < 30; i++) desk.step();
    await addSource(["ACME", "GLOBX"]);
    const saved: Array<string | null> = [];
    const api = deskApi(desk, { pageSize: 5 });
    const result = await catchUp(await context(api), {
      graceSeconds: 0,
      beforePage: async () => {
        const sync = await db.prisma.storySync.findUniqueOrThrow({ where: { sourceId: "desk" } });
        saved.push(sync.cursor);
      },
    });
    expect(result.pages).toBeGreaterThan(3);
    expect(result.events).toBe(desk.snapshot().seq);
    expect(result.missed).toBe(0); // history from before the ticker was followed is not "missed"
    expect(new Set(saved).size).toBe(saved.length); // a new cursor before every page
    expect(await openCopy()).toEqual(openTruth(["ACME", "GLOBX"]));
    // Every closed story is a closed row.
    const closed = await db.prisma.story.findMany({ where: { closed: true } });
    expect(closed.map((r) => r.id).sort()).toEqual(
      desk
        .snapshot()
        .closed.map((c) => c.id)
        .sort(),
    );
    const sync = await db.prisma.storySync.findUniqueOrThrow({ where: { sourceId: "desk" } });
    expect(sync.caughtUpAt).not.toBeNull();
    // None of that history was live: the ticker was added after it, so nobody is told.
    expect(sent).toEqual([]);
  });

  it("a crash in the middle of a page replays the page (the cursor was not saved)", async () => {
    for (let i = 0; i < 12; i++) desk.step();
    await addSource(["ACME", "GLOBX"]);
    const ctx = await context(deskApi(desk, { pageSize: 100 }));
    let applied = 0;
    const dying = {
      ...ctx,
      db: new Proxy(db, {
        get(target, key) {
          if (key === "prisma") {
            return new Proxy(target.prisma, {
              get(p, k) {
                if (k === "$queryRaw" && ++applied > 5) {
                  return () => Promise.reject(new Error("killed mid-page"));
                }
                return Reflect.get(p, k);
              },
            });
          }
          return Reflect.get(target, key);
        },
      }),
    };
    await expect(catchUp(dying, { graceSeconds: 0 })).rejects.toThrow(/killed mid-page/);
    expect(
      (await db.prisma.storySync.findUnique({ where: { sourceId: "desk" } }))?.cursor ?? null,
    ).toBeNull();
    await catchUp(await context(deskApi(desk)), { graceSeconds: 0 });
    expect(await openCopy()).toEqual(openTruth(["ACME", "GLOBX"]));
  });

  it("410 reloads in full while webhooks keep arriving, keeping closed rows and claims", async () => {
    for (let i = 0; i < 20; i++) desk.step();
    await addSource(["ACME", "GLOBX"]);
    await catchUp(await context(deskApi(desk)), { graceSeconds: 0 });
    // Live: a story becomes strong, its webhook is applied and notifies once.
    const story = desk.snapshot().open.find((s) => !s.strong) as Story;
    const [strong] = desk.becomeStrong(story.id) as StoryEvent[];
    await applyStoryEvent(await context(deskApi(desk)), strong as StoryEvent);
    expect(sent).toEqual([story.id]);

    desk.expireCursors();
    // During the reload's listing, more happens and is delivered as webhooks at once.
    let changes = 0;
    const webhooks: Promise<unknown>[] = [];
    const api = deskApi(desk, {
      onList: () => {
        if (changes++ < 3) {
          for (const e of desk.step()) {
            webhooks.push(applyStoryEvent({ db, source: ctxSource, api, send }, e as StoryEvent));
          }
        }
      },
    });
    const ctx = await context(api);
    const ctxSource = ctx.source;
    const result = await catchUp(ctx, { graceSeconds: 0 });
    await Promise.all(webhooks);
    expect(webhooks.length).toBeGreaterThan(0);
    expect(result.reloads).toBe(1);
    expect(await openCopy()).toEqual(openTruth(["ACME", "GLOBX"]));
    // The replay from the start of the window saw the became_strong event again: no second send.
    expect(sent).toEqual([story.id]);
    const sync = await db.prisma.storySync.findUniqueOrThrow({ where: { sourceId: "desk" } });
    expect(sync).toMatchObject({ reloads: 1 });
    expect(sync.reloadFinishedAt).not.toBeNull();
  });

  it("adding a ticker mid-stream loads its current stories once", async () => {
    for (let i = 0; i < 25; i++) desk.step();
    await addSource(["ACME"]);
    await catchUp(await context(deskApi(desk)), { graceSeconds: 0 });
    expect(await openCopy()).toEqual(openTruth(["ACME"]));
    for (let i = 0; i < 10; i++) desk.step();
    await db.prisma.source.update({ where: { id: "desk" }, data: { tickers: ["ACME", "GLOBX"] } });
    const result = await catchUp(await context(deskApi(desk)), { graceSeconds: 0 });
    expect(result.tickersLoaded).toEqual(["GLOBX"]);
    expect(await openCopy()).toEqual(openTruth(["ACME", "GLOBX"]));
    const again = await catchUp(await context(deskApi(desk)), { graceSeconds: 0 });
    expect(again.tickersLoaded).toEqual([]);
  });

  it("a ticker added makes the source's catch-up due now, so its stories load at once", async () => {
    await addSource(["ACME"]);
    await loadStorySource(db, "desk");
    const later = new Date(Date.now() + 3_600_000);
    await db.prisma.job.deleteMany({ where: { queue: "story" } });
    await db.prisma.job.create({
      data: { queue: "story", key: "catchup:desk", sourceId: "desk", runAt: later },
    });
    await loadStorySource(db, "desk"); // nothing new: stays where it was
    expect(
      (await db.prisma.job.findFirstOrThrow({ where: { key: "catchup:desk" } })).runAt,
    ).toEqual(later);
    await db.prisma.source.update({ where: { id: "desk" }, data: { tickers: ["ACME", "GLOBX"] } });
    await loadStorySource(db, "desk");
    const job = await db.prisma.job.findFirstOrThrow({ where: { key: "catchup:desk" } });
    expect(job.runAt.getTime()).toBeLessThanOrEqual(Date.now());
    await db.prisma.job.deleteMany({ where: { queue: "story" } });
  });

  it("counts events the catch-up found that no webhook delivered, and the reverse", async () => {
    await addSource(["ACME", "GLOBX"]);
    await catchUp(await context(deskApi(desk)), { graceSeconds: 0 });
    const events = [...desk.step(), ...desk.step(), ...desk.step()] as StoryEvent[];
    // The first came by webhook too; the others did not.
    await db.prisma.storyEvent.create({
      data: {
        sourceId: "desk",
        eventId: (events[0] as StoryEvent).id,
        type: (events[0] as StoryEvent).type,
        publishedAt: new Date((events[0] as StoryEvent).created_at),
        webhookAt: new Date(),
        webhookDeliveries: 1,
      },
    });
    // A webhook event the API's listing never had.
    await db.prisma.storyEvent.create({
      data: {
        sourceId: "desk",
        eventId: "evt_phantom",
        type: "story.updated",
        publishedAt: new Date(Date.now() - 1_000),
        webhookAt: new Date(),
        webhookDeliveries: 1,
      },
    });
    const result = await catchUp(await context(deskApi(desk)), { graceSeconds: 0 });
    expect(result.missed).toBe(events.length - 1);
    expect(result.unlisted).toBe(1);
    // Counted once: a second catch-up adds nothing.
    const again = await catchUp(await context(deskApi(desk)), { graceSeconds: 0 });
    expect(again).toMatchObject({ missed: 0, unlisted: 0 });
    const sync = await db.prisma.storySync.findUniqueOrThrow({ where: { sourceId: "desk" } });
    expect(sync).toMatchObject({ missedWebhooks: BigInt(events.length - 1), unlistedEvents: 1n });
  });

  it("an event the catch-up found early is counted as missed once its webhook is overdue", async () => {
    await addSource(["ACME", "GLOBX"]);
    await catchUp(await context(deskApi(desk)), { graceSeconds: 1 });
    const events = [...desk.step(), ...desk.step()];
    // Found within the grace: its webhook may still come, so not missed yet.
    expect((await catchUp(await context(deskApi(desk)), { graceSeconds: 1 })).missed).toBe(0);
    await new Promise((r) => setTimeout(r, 1_100));
    // Overdue now, and no webhook came: missed, once.
    expect((await catchUp(await context(deskApi(desk)), { graceSeconds: 1 })).missed).toBe(
      events.length,
    );
    expect((await catchUp(await context(deskApi(desk)), { graceSeconds: 1 })).missed).toBe(0);
  });

  it("a bad event on a page is recorded and passed over, not retried for ever", async () => {
    await addSource(["ACME"]);
    const api: StoryApi = {
      ...deskApi(desk),
      listEvents: async () => ({
        data: [
          { id: "evt_bad", type: "story.created", created_at: "nope", ticker: "ACME", data: {} },
        ],
        next_cursor: "c1",
        has_more: false,
      }),
    };
    const result = await catchUp(await context(api), { graceSeconds: 0 });
    expect(result.skipped).toBe(1);
    const rejection = await db.prisma.storyWebhookRejection.findFirstOrThrow({
      where: { sourceId: "desk" },
    });
    expect(rejection).toMatchObject({ reason: "malformed_event" });
    expect(rejection.lastDetail).toMatch(/created_at/);
    expect(
      (await db.prisma.storySync.findUniqueOrThrow({ where: { sourceId: "desk" } })).cursor,
    ).toBe("c1");
  });
});
