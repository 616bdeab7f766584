import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { Random } from "@/simulator/random";
import { StoryDesk } from "@/simulator/stories/desk";
import type { ClaimedJob } from "@/workers/queue/types";
import type { StoryApi } from "@/workers/stories/api";
import type { Story, StoryEvent } from "@/workers/stories/events";
import { storyStage } from "./storyStage";

const job = (payload: Record<string, unknown>): ClaimedJob => ({
  lease: { id: 1n, attempt: 1, token: "t" } as unknown as ClaimedJob["lease"],
  queue: "story",
  key: null,
  payload,
  sourceId: "desk",
  priority: 0,
  maxAttempts: 5,
  waitMs: 0,
  reclaimed: false,
});
const signal = new AbortController().signal;

describe("the story stage", () => {
  let db: TestDatabase;
  const desk = new StoryDesk({ random: new Random(5), clock: Date.now, tickers: ["ACME"] });
  let down = false;
  const api: StoryApi = {
    getStory: async (id) => desk.story(id) as Story | null,
    listStories: async (t) => {
      if (down) throw new Error("connect ECONNREFUSED 10.0.0.9:443");
      return desk.list(t) as Story[];
    },
    listEvents: async (cursor, tickers) => {
      if (down) throw new Error("connect ECONNREFUSED 10.0.0.9:443");
      return desk.events({ cursor, tickers });
    },
  };
  beforeAll(async () => {
    db = await createTestDatabase();
    await db.prisma.source.create({
      data: {
        id: "desk",
        name: "Desk",
        kind: "story-api",
        url: "https://api.example/",
        tickers: ["ACME"],
        storyMode: "fetch",
        pollIntervalSeconds: 180,
        state: { create: {} },
      },
    });
  });
  afterAll(() => db?.drop());
  const stage = () => storyStage(db, { api: () => api, send: async () => {} });

  it("a catch-up reschedules itself at the poll interval and shows the source alive", async () => {
    for (let i = 0; i < 5; i++) desk.step();
    const outcome = await stage().handler(job({ kind: "catchup", sourceId: "desk" }), { signal });
    expect(outcome).toMatchObject({ reschedule: { delaySeconds: 180, payload: { failures: 0 } } });
    expect(await db.prisma.story.count({ where: { closed: false } })).toBe(
      desk.snapshot().open.length,
    );
    const state = await db.prisma.sourceState.findUniqueOrThrow({ where: { sourceId: "desk" } });
    expect(state.nextPollAt?.getTime()).toBeGreaterThan(Date.now() + 170_000);
    const status = await db.prisma.collectorStatus.findFirstOrThrow({
      where: { sourceId: "desk" },
    });
    expect(status.lastActivityAt).not.toBeNull();
  });

  it("a catch-up against an API that is down is an outcome: recorded, retried sooner, never dead", async () => {
    down = true;
    const first = await stage().handler(job({ kind: "catchup", sourceId: "desk" }), { signal });
    expect(first).toMatchObject({ reschedule: { delaySeconds: 10, payload: { failures: 1 } } });
    const again = await stage().handler(job({ kind: "catchup", sourceId: "desk", failures: 5 }), {
      signal,
    });
    expect(again).toMatchObject({ reschedule: { delaySeconds: 180, payload: { failures: 6 } } }); // 5·2⁶ s, capped at the poll interval
    const sync = await db.prisma.storySync.findUniqueOrThrow({ where: { sourceId: "desk" } });
    expect(sync.lastError).toMatch(/ECONNREFUSED/);
    const state = await db.prisma.sourceState.findUniqueOrThrow({ where: { sourceId: "desk" } });
    expect(state).toMatchObject({ lastErrorCode: "story_api" });
    down = false;
  });

  it("applies a webhook event (fetch mode) and marks it applied", async () => {
    const [event] = desk.create("ACME", "Acme opens a plant") as StoryEvent[];
    await db.prisma.storyEvent.create({
      data: {
        sourceId: "desk",
        eventId: (event as StoryEvent).id,
        type: "story.created",
        publishedAt: new Date(),
        webhookAt: new Date(),
        webhookDeliveries: 1,
      },
    });
    await stage().handler(job({ kind: "event", sourceId: "desk", event }), { signal });
    const id = ((event as StoryEvent).data as { story: Story }).story.id;
    const row = await db.prisma.story.findUniqueOrThrow({
      where: { sourceId_id: { sourceId: "desk", id } },
    });
    expect(row).toMatchObject({ closed: false, version: 1 });
    const recorded = await db.prisma.storyEvent.findFirstOrThrow({
      where: { eventId: (event as StoryEvent).id },
    });
    expect(recorded.appliedAt).not.toBeNull();
  });

  it("a job for a source removed meanwhile ends quietly", async () => {
    await db.prisma.source.update({ where: { id: "desk" }, data: { enabled: false } });
    expect(
      await stage().handler(job({ kind: "catchup", sourceId: "desk" }), { signal }),
    ).toBeUndefined();
  });
});
