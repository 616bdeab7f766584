import { describe, expect, it } from "vitest";
import { Newsroom, type SimStory } from "./newsroom";
import { DEFAULT_OUTLETS } from "./outlets";
import { Random } from "./random";
import { Scheduler } from "./scheduler";

const T0 = Date.parse("2026-06-12T09:00:00Z");

function newsroom(seed: number, ratePerMinute = 8) {
  const scheduler = new Scheduler(T0);
  const room = new Newsroom({
    random: new Random(seed),
    scheduler,
    outlets: DEFAULT_OUTLETS,
    baseUrl: "http://sim.test",
    ratePerMinute,
    burstEveryMs: 15 * 60_000,
    pageLeadMs: 28,
    pageLeadShare: 0.25,
    isQuiet: () => false,
  });
  return { room, scheduler };
}

const all = (room: Newsroom): SimStory[] => DEFAULT_OUTLETS.flatMap((o) => room.stories(o.id));

describe("Newsroom", () => {
  it("replays the same news for the same seed and different news for another", () => {
    const a = newsroom(42);
    const b = newsroom(42);
    const c = newsroom(43);
    for (const { scheduler } of [a, b, c]) scheduler.runUntil(T0 + 3_600_000);
    const titles = (room: Newsroom) => all(room).map((s) => `${s.guid} ${s.title}`);
    expect(titles(a.room)).toEqual(titles(b.room));
    expect(titles(a.room)).not.toEqual(titles(c.room));
  });

  it("over two hours writes in both languages, edits, retracts, republishes and breaks news", () => {
    const { room, scheduler } = newsroom(7);
    scheduler.runUntil(T0 + 2 * 3_600_000);
    const stories = all(room);
    // 8 originals a minute for 120 minutes, plus republications: roughly 1,000 to 2,000.
    expect(stories.length).toBeGreaterThan(900);
    expect(stories.length).toBeLessThan(2_500);
    expect(stories.some((s) => s.language === "bn" && /[\u0980-\u09FF]/.test(s.title))).toBe(true);
    expect(stories.some((s) => s.language === "en")).toBe(true);
    expect(stories.some((s) => s.revision > 1 && s.retractedAt === null)).toBe(true);
    expect(stories.some((s) => s.retractedAt !== null)).toBe(true);
    expect(stories.some((s) => s.breaking)).toBe(true);
    // Escalated by an edit: breaking at a later revision.
    expect(stories.some((s) => s.breaking && s.revision > 1 && s.retractedAt === null)).toBe(true);
    expect(stories.some((s) => s.instruments.includes("GP.DH"))).toBe(true);

    // Republished news: same story key at several outlets, worded differently at least once.
    // (Map.groupBy is Node 21+; this project runs on 20.)
    const byKey = new Map<string, SimStory[]>();
    for (const s of stories) byKey.set(s.storyKey, [...(byKey.get(s.storyKey) ?? []), s]);
    const shared = [...byKey.values()].filter((g) => new Set(g.map((s) => s.outlet)).size > 1);
    expect(shared.length).toBeGreaterThan(50);
    expect(shared.some((g) => new Set(g.map((s) => s.title)).size > 1)).toBe(true);
    for (const group of shared) expect(new Set(group.map((s) => s.language)).size).toBe(1);
  });

  it("keeps guids stable per outlet; a stream outlet's guid is its permalink", () => {
    const { room, scheduler } = newsroom(3);
    scheduler.runUntil(T0 + 600_000);
    for (const outlet of DEFAULT_OUTLETS) {
      const guids = room.stories(outlet.id).map((s) => s.guid);
      expect(new Set(guids).size).toBe(guids.length);
    }
    for (const s of room.stories("wire")) expect(s.guid).toBe(s.link);
  });

  it("an edit bumps the revision and changes the title; a retraction drops it from feed and page", () => {
    const { room, scheduler } = newsroom(5, 0);
    const story = room.publish({ outlet: "ledger", language: "bn" });
    const before = story.title;
    room.edit("ledger", story.guid);
    expect(story.revision).toBe(2);
    expect(story.title).not.toBe(before);
    expect(room.feedItems("ledger").map((s) => s.guid)).toContain(story.guid);
    scheduler.runUntil(T0 + 1_000);
    room.retract("ledger", story.guid);
    expect(story.revision).toBe(3);
    expect(room.feedItems("ledger")).toHaveLength(0);
    expect(room.pageItems("ledger")).toHaveLength(0);
    expect(room.lastChanged("ledger")).toBe(T0 + 1_000);
  });

  it("rate 0 stops organic news, bursts included; a new rate takes effect at once", () => {
    const { room, scheduler } = newsroom(9, 0);
    scheduler.runUntil(T0 + 3_600_000);
    expect(all(room)).toHaveLength(0);
    room.setRate(60);
    scheduler.runUntil(T0 + 3_660_000);
    expect(all(room).length).toBeGreaterThan(20);
    expect(() => room.setRate(-1)).toThrow(/rate/);
  });
});
