import { describe, expect, it } from "vitest";
import { DEFAULT_RANK_WEIGHTS, rank, score } from "@/lib/readmodel/rank";

const now = new Date("2026-12-19T12:00:00Z");
const ago = (h: number) => new Date(now.getTime() - h * 3_600_000);
const s = (id: string, ageH: number, outlets = 1, breaking = false) => ({
  id,
  firstSeenAt: ago(ageH),
  outlets,
  breaking,
});

describe("score", () => {
  it("halves every half-life, grows with log2 of the outlets, doubles when breaking", () => {
    const w = DEFAULT_RANK_WEIGHTS;
    expect(score(s("a", 0), now, w)).toBe(1);
    expect(score(s("a", 6), now, w)).toBeCloseTo(0.5);
    expect(score(s("a", 24), now, w)).toBeCloseTo(1 / 16);
    expect(score(s("a", 0, 4), now, w)).toBeCloseTo(2);
    expect(score(s("a", 0, 16), now, w)).toBeCloseTo(3);
    expect(score(s("a", 0, 1, true), now, w)).toBe(2);
    // Seen "after" the build (another host's clock): fresh, not fresher.
    expect(score(s("a", -1), now, w)).toBe(1);
    // Four outlets buy one half-life; so does the breaking flag.
    expect(score(s("a", 6, 4), now, w)).toBeCloseTo(score(s("b", 0), now, w));
    expect(score(s("a", 6, 1, true), now, w)).toBeCloseTo(score(s("b", 0), now, w));
  });

  it("follows its weights", () => {
    const w = { halfLifeHours: 1, outletWeight: 0, breakingBoost: 1 };
    expect(score(s("a", 2, 8, true), now, w)).toBeCloseTo(0.25);
  });
});

describe("rank", () => {
  it("orders by score, ties by newest first seen then id, the same every time", () => {
    const stories = [
      s("old-wide", 12, 16), // 0.25 × 3 = 0.75
      s("fresh", 0), // 1
      s("breaking", 3, 1, true), // 0.707 × 2 = 1.41
      s("b-tie", 1),
      s("a-tie", 1),
      s("stale", 48),
    ];
    const order = rank(stories, now, DEFAULT_RANK_WEIGHTS).map((x) => x.id);
    expect(order).toEqual(["breaking", "fresh", "a-tie", "b-tie", "old-wide", "stale"]);
    expect(rank([...stories].reverse(), now, DEFAULT_RANK_WEIGHTS).map((x) => x.id)).toEqual(order);
  });
});
