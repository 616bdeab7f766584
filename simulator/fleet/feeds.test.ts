import { describe, expect, it } from "vitest";
import { feedValidators, fleetItem, fleetItems, itemSlots, renderFleetFeed } from "./feeds";
import { type FleetPlan, planFleet, profile } from "./plan";

const NOW = Date.parse("2026-06-12T09:00:00Z");
const plan = (seed: number, options: Partial<Parameters<typeof planFleet>[1]> = {}): FleetPlan => ({
  ...planFleet(seed, { sources: 10_000, ...options }),
  port: 4242,
});
const firstOf = (p: FleetPlan, behaviour: string, from = 0) => {
  for (let i = from; i < p.size; i++) if (profile(p, i).behaviour === behaviour) return i;
  throw new Error(`no ${behaviour} feed`);
};

describe("fleet feeds", () => {
  it("the same seed and time give the same bodies; another seed other ones", () => {
    const [a, b, c] = [plan(5), plan(5), plan(6)];
    for (const i of [0, 1, 17, 4_321, 9_999]) {
      const body = renderFleetFeed(a, profile(a, i), NOW).body;
      expect(renderFleetFeed(b, profile(b, i), NOW).body).toBe(body);
      expect(renderFleetFeed(c, profile(c, i), NOW).body).not.toBe(body);
      expect(body).toContain("http://127.1.");
    }
  });

  it("a body changes exactly when its ETag does: when a new item appears", () => {
    const p = plan(1);
    for (const behaviour of ["quiet", "hot", "normal"]) {
      const f = profile(p, firstOf(p, behaviour));
      let last = feedValidators(p, f, NOW, "x");
      let lastBody = renderFleetFeed(p, f, NOW).body;
      let changes = 0;
      // Polls a minute apart for six hours.
      for (let t = NOW + 60_000; t <= NOW + 6 * 3_600_000; t += 60_000) {
        const v = feedValidators(p, f, t, "x");
        const body = renderFleetFeed(p, f, t).body;
        expect(body === lastBody, `${behaviour} at +${(t - NOW) / 60_000} min`).toBe(
          v.etag === last.etag,
        );
        if (v.etag !== last.etag) {
          changes += 1;
          expect(Date.parse(v.lastModified)).toBeGreaterThan(Date.parse(last.lastModified));
        }
        last = v;
        lastBody = body;
      }
      if (behaviour === "quiet") expect(changes).toBeLessThanOrEqual(6);
      if (behaviour === "hot") expect(changes).toBeGreaterThan(200);
    }
  });

  it("a 5-minute poll finds most feeds unchanged, hot ones changed", () => {
    const p = plan(3);
    const changed: Record<string, [number, number]> = {};
    for (let i = 0; i < 3_000; i++) {
      const f = profile(p, i);
      const a = itemSlots(p, f, NOW, 1)[0]?.slot;
      const b = itemSlots(p, f, NOW + 300_000, 1)[0]?.slot;
      const tally = changed[f.behaviour] ?? [0, 0];
      tally[0] += a === b ? 0 : 1;
      tally[1] += 1;
      changed[f.behaviour] = tally;
    }
    const share = (b: string) => (changed[b]?.[0] ?? 0) / (changed[b]?.[1] ?? 1);
    // Quiet: an item every 2–6 h, so a 5-minute window sees one about 3 % of the time.
    expect(share("quiet")).toBeLessThan(0.06);
    // Hot: one a minute, so nearly every 5-minute window has one.
    expect(share("hot")).toBeGreaterThan(0.9);
  });

  it("serves itemsPerFeed items, newest first, none from the future", () => {
    const p = plan(1, { itemsPerFeed: 12 });
    for (const i of [0, 5, 50]) {
      const items = fleetItems(p, profile(p, i), NOW);
      expect(items).toHaveLength(12);
      expect(items.every((s) => s.publishedAt <= NOW)).toBe(true);
      const times = items.map((s) => s.publishedAt);
      expect(times).toEqual([...times].sort((x, y) => y - x));
      expect(new Set(items.map((s) => s.guid)).size).toBe(12);
    }
  });

  it("republishes pooled stories across feeds and hosts, in several wordings", () => {
    const p = plan(2);
    const byStory = new Map<
      string,
      { feeds: Set<string>; hows: Set<string>; titles: Set<string> }
    >();
    let items = 0;
    // The last 15 minutes' items, all still in their feeds (a hot feed's 20 items span ~20 min).
    for (let i = 0; i < p.size; i++) {
      const f = profile(p, i);
      for (const slot of itemSlots(p, f, NOW, p.itemsPerFeed)) {
        if (slot.at <= NOW - 15 * 60_000) break;
        const s = fleetItem(p, f, slot);
        items += 1;
        if (!s.storyKey.startsWith("p")) continue;
        const entry = byStory.get(s.storyKey) ?? {
          feeds: new Set(),
          hows: new Set(),
          titles: new Set(),
        };
        entry.feeds.add(s.outlet);
        entry.hows.add(s.how);
        entry.titles.add(s.title);
        byStory.set(s.storyKey, entry);
      }
    }
    const copies = [...byStory.values()].reduce((n, e) => n + e.feeds.size, 0);
    expect(copies / items).toBeGreaterThan(0.25);
    expect(copies / items).toBeLessThan(0.35);
    // About copiesPerStory (6) feeds per pooled story, so nearly every one is carried twice or more.
    expect(copies / byStory.size).toBeGreaterThan(4);
    expect(copies / byStory.size).toBeLessThan(8);
    const multi = [...byStory.values()].filter((e) => e.feeds.size >= 2);
    expect(multi.length / byStory.size).toBeGreaterThan(0.8);
    const hows = new Set([...byStory.values()].flatMap((e) => [...e.hows]));
    expect([...hows].sort()).toEqual(
      expect.arrayContaining(["amp", "headline-edit", "tracking", "wire-copy"]),
    );
    expect([...hows].some((h) => h.startsWith("rewrite-"))).toBe(true);
    expect(multi.some((e) => e.titles.size >= 2)).toBe(true);
  });

  it("a large feed's document is 1 to 3 MB and says so with its validators", () => {
    const p = plan(1);
    const i = firstOf(p, "large");
    const f = profile(p, i);
    const started = performance.now();
    const { body } = renderFleetFeed(p, f, NOW);
    const ms = performance.now() - started;
    const bytes = Buffer.byteLength(body);
    expect(bytes).toBeGreaterThanOrEqual(f.largeBytes);
    expect(bytes).toBeLessThan(f.largeBytes * 1.1);
    expect(f.validators).toBe(true);
    expect(ms).toBeLessThan(2_000);
  });
});
