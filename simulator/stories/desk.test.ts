import { describe, expect, it } from "vitest";
import { storyEventSchema, storySchema } from "@/workers/stories/events";
import { Random } from "../random";
import { CursorExpiredError, CursorInvalidError, type DeskEvent, StoryDesk } from "./desk";

const START = Date.parse("2026-06-12T09:00:00Z");
const DAY = 86_400_000;

function makeDesk(seed = 1, idPrefix?: string) {
  let now = START;
  const desk = new StoryDesk({
    random: new Random(seed),
    clock: () => now,
    ...(idPrefix ? { idPrefix } : {}),
  });
  return { desk, advance: (ms: number) => (now += ms) };
}

/** Every event of the tickers, read page by page. */
function readAll(desk: StoryDesk, limit: number, tickers?: string[]): DeskEvent[] {
  const seen: DeskEvent[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 10_000; pages++) {
    const page = desk.events({ cursor, limit, ...(tickers ? { tickers } : {}) });
    expect(page.next_cursor).toBeTruthy();
    seen.push(...page.data);
    cursor = page.next_cursor;
    if (!page.has_more) return seen;
  }
  throw new Error("pagination did not end");
}

describe("StoryDesk", () => {
  it("bumps the version by exactly one per change and publishes the documented events", () => {
    const { desk, advance } = makeDesk();
    const [created] = desk.create("ACME", "Acme beats");
    expect(created?.type).toBe("story.created");
    const id = created?.type === "story.created" ? created.data.story.id : "";
    expect(id).toBe("st_1");
    advance(1_000);
    expect(desk.update(id, "Acme beats again").map((e) => e.type)).toEqual(["story.updated"]);
    expect(desk.story(id)?.version).toBe(2);
    const shortlisted = desk.shortlist(id);
    expect(shortlisted.map((e) => e.type)).toEqual(["article.shortlisted", "story.updated"]);
    expect(desk.story(id)?.version).toBe(3);
    expect(desk.becomeStrong(id)[0]?.type).toBe("story.became_strong");
    expect(() => desk.becomeStrong(id)).toThrow(/already strong/);
    const story = desk.story(id);
    expect(story).toMatchObject({ version: 4, strong: true, ticker: "ACME" });
    expect(story?.articles).toHaveLength(2);
    expect(story?.updated_at).toBe(new Date(START + 1_000).toISOString());
    expect(story?.created_at).toBe(new Date(START).toISOString());

    const [closed] = desk.close(id);
    expect(closed).toMatchObject({
      type: "story.closed",
      ticker: "ACME",
      data: { story_id: id, version: 5, merged_into: null },
    });
    expect(desk.story(id)).toBeNull();
    expect(() => desk.update(id)).toThrow(/st_1: it was closed at version 5/);
    expect(() => desk.close(id)).toThrow(/closed/);
    expect(() => desk.update("st_99")).toThrow(/no such story/);
  });

  it("merges a chain A→B→C: A and B closed, C holds every article", () => {
    const { desk } = makeDesk();
    const ids = ["A", "B", "C"].map((t) => {
      const [e] = desk.create("ACME", t);
      return e?.type === "story.created" ? e.data.story.id : "";
    });
    const [a, b, c] = ids as [string, string, string];
    desk.shortlist(a);
    const [ab] = desk.merge(a, b);
    expect(ab).toMatchObject({ type: "story.closed", data: { story_id: a, version: 3 } });
    const [bc] = desk.merge(b, c);
    expect(bc?.type === "story.closed" && bc.data.merged_into?.id).toBe(c);
    expect(desk.story(a)).toBeNull();
    expect(desk.story(b)).toBeNull();
    const survivor = desk.story(c);
    expect(survivor?.articles).toHaveLength(4);
    expect(survivor?.articles.every((x) => x.story_id === c)).toBe(true);
    expect(survivor?.version).toBe(2);
    expect(desk.list("ACME").map((s) => s.id)).toEqual([c]);
    expect(() => desk.merge(a, c)).toThrow(/merged into st_2/);
    desk.create("GLOBX");
    expect(() => desk.merge(c, "st_4")).toThrow(/tickers differ/);
    const snapshot = desk.snapshot();
    expect(snapshot.closed.map((x) => [x.id, x.version, x.merged_into])).toEqual([
      [a, 3, b],
      [b, 3, c],
    ]);
  });

  it("publishes events and stories wirewatch's schema parses, ids padded, seqs consecutive", () => {
    const { desk, advance } = makeDesk(3);
    for (let i = 0; i < 400; i++) {
      desk.step();
      advance(7_000);
    }
    const events = readAll(desk, 1_000);
    expect(events.length).toBeGreaterThan(400);
    const types = new Set<string>();
    events.forEach((event, i) => {
      const parsed = storyEventSchema.safeParse(event);
      expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
      expect(event.id).toBe(`evt_${String(i + 1).padStart(12, "0")}`);
      types.add(event.type);
    });
    expect(types.size).toBe(5);
    for (const story of desk.snapshot().open) expect(storySchema.parse(story)).toBeTruthy();
  });

  it("pages through every event exactly once in order, with and without a ticker filter", () => {
    const { desk } = makeDesk(5);
    for (let i = 0; i < 300; i++) desk.step();
    const all = readAll(desk, 1_000);
    expect(readAll(desk, 7)).toEqual(all);
    for (const tickers of [["ACME"], ["GLOBX", "UMBRA"], ["NOPE"]]) {
      const wanted = all.filter((e) => tickers.includes(e.ticker));
      expect(readAll(desk, 3, tickers)).toEqual(wanted);
      expect(readAll(desk, 1, tickers)).toEqual(wanted);
    }
    // The head: an empty page still has a cursor, and it picks up what comes next.
    const head = desk.events({ cursor: desk.events({ limit: 1_000 }).next_cursor });
    expect(head.data).toEqual([]);
    expect(head.has_more).toBe(false);
    const [next] = desk.create("ACME");
    expect(desk.events({ cursor: head.next_cursor }).data).toEqual([next]);
  });

  it("410s cursors issued before expireCursors() while a fresh cursor works", () => {
    const { desk } = makeDesk();
    desk.create("ACME");
    const old = desk.events().next_cursor;
    desk.expireCursors();
    expect(() => desk.events({ cursor: old })).toThrow(CursorExpiredError);
    const fresh = desk.events({ cursor: null });
    expect(fresh.data).toHaveLength(1);
    expect(desk.events({ cursor: fresh.next_cursor }).data).toEqual([]);
    expect(() => desk.events({ cursor: "garbage" })).toThrow(CursorInvalidError);
    expect(() => desk.events({ limit: 1_001 })).toThrow(/limit/);
  });

  it("drops events past the 30-day window and 410s cursors from before it", () => {
    const { desk, advance } = makeDesk();
    desk.create("ACME");
    const atStart = desk.events({ limit: 1 });
    const beforeAny = desk.events({ limit: 1, cursor: null });
    expect(beforeAny.data).toHaveLength(1);
    advance(20 * DAY);
    desk.create("GLOBX");
    advance(11 * DAY); // the first event is now 31 days old
    desk.create("UMBRA");
    const early = Buffer.from(JSON.stringify({ s: 0, e: 0, t: START + 20 * DAY })).toString(
      "base64url",
    );
    expect(() => desk.events({ cursor: early })).toThrow(CursorExpiredError);
    // Issued 31 days ago: older than the window, even though its position is still kept.
    expect(() => desk.events({ cursor: atStart.next_cursor })).toThrow(/30-day window/);
    expect(desk.events().data.map((e) => e.ticker)).toEqual(["GLOBX", "UMBRA"]);
  });

  it("replays the same desk from the same seed; prefixes keep desks apart", () => {
    const run = (seed: number, prefix?: string) => {
      const { desk, advance } = makeDesk(seed, prefix);
      for (let i = 0; i < 200; i++) {
        desk.step();
        advance(1_000);
      }
      return { events: desk.events({ limit: 1_000 }).data, snapshot: desk.snapshot() };
    };
    expect(run(9)).toEqual(run(9));
    expect(run(9)).not.toEqual(run(10));
    const prefixed = run(9, "r17-");
    expect(prefixed.events[0]?.id).toBe("evt_r17-000000000001");
    expect(prefixed.snapshot.open[0]?.id).toMatch(/^st_r17-\d+$/);
    expect(prefixed.snapshot.open[0]?.articles[0]?.id).toMatch(/^ar_r17-\d+$/);
  });

  it("tells listeners about every event, in order, and snapshots are copies", () => {
    const { desk } = makeDesk();
    const heard: string[] = [];
    const off = desk.onEvent((e) => heard.push(e.id));
    const [e] = desk.create("ACME");
    const id = e?.type === "story.created" ? e.data.story.id : "";
    desk.shortlist(id);
    off();
    desk.update(id);
    expect(heard).toEqual(["evt_000000000001", "evt_000000000002", "evt_000000000003"]);
    const snap = desk.snapshot();
    snap.open[0]?.articles.pop();
    expect(desk.story(id)?.articles).toHaveLength(2);
    expect(desk.snapshot().strong).toEqual([]);
  });
});
