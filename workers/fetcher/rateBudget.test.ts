import { describe, expect, it } from "vitest";
import { RateBudget, sharedRateBudget } from "./rateBudget";

function fakeClock() {
  let now = 0;
  const slept: number[] = [];
  return {
    now: () => now,
    sleep: async (ms: number) => {
      slept.push(ms);
      now += ms;
    },
    advance: (ms: number) => {
      now += ms;
    },
    slept,
  };
}

describe("RateBudget", () => {
  it("lets a burst through, then paces at the rate", async () => {
    const clock = fakeClock();
    const budget = new RateBudget({
      ratePerSecond: 2,
      burst: 3,
      now: clock.now,
      sleep: clock.sleep,
    });
    for (let i = 0; i < 3; i++) expect(await budget.take("a.test")).toBe(0);
    expect(await budget.take("a.test")).toBe(500);
    expect(await budget.take("a.test")).toBe(500);
  });

  it("concurrent producers wait in turn, never bursting together", async () => {
    const clock = fakeClock();
    // The sleep does not advance the clock here: all ten reserve at the same instant.
    const waits: number[] = [];
    const budget = new RateBudget({
      ratePerSecond: 1,
      burst: 1,
      now: clock.now,
      sleep: async (ms) => void waits.push(ms),
    });
    await Promise.all(Array.from({ length: 10 }, () => budget.take("a.test")));
    expect(waits).toEqual([1_000, 2_000, 3_000, 4_000, 5_000, 6_000, 7_000, 8_000, 9_000]);
  });

  it("keeps one bucket per host", async () => {
    const clock = fakeClock();
    const budget = new RateBudget({
      ratePerSecond: 1,
      burst: 1,
      now: clock.now,
      sleep: clock.sleep,
    });
    expect(await budget.take("a.test")).toBe(0);
    expect(await budget.take("b.test")).toBe(0);
    expect(await budget.take("a.test")).toBe(1_000);
  });

  it("refills over time up to the burst", async () => {
    const clock = fakeClock();
    const budget = new RateBudget({
      ratePerSecond: 1,
      burst: 2,
      now: clock.now,
      sleep: clock.sleep,
    });
    await budget.take("a.test");
    await budget.take("a.test");
    clock.advance(60_000);
    expect(await budget.take("a.test")).toBe(0);
    expect(await budget.take("a.test")).toBe(0);
    expect(await budget.take("a.test")).toBe(1_000);
  });

  it("is one budget per process", () => {
    expect(sharedRateBudget()).toBe(sharedRateBudget());
  });
});
