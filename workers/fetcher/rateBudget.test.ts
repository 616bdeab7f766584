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
    const budget = new RateBudget({
      ratePerSecond: 1,
      burst: 1,
      now: clock.now,
      sleep: clock.sleep,
    });
    // All five ask at 0; each returns how long it waited.
    const waited = await Promise.all(Array.from({ length: 5 }, () => budget.take("a.test")));
    expect(waited).toEqual([0, 1_000, 2_000, 3_000, 4_000]);
  });

  it("waiters that wake late together (a blocked event loop) still go out one token apart", async () => {
    // Timers as Node runs them, but the event loop is blocked until 3.5 s: every timer due
    // before then fires at 3.5 s. A budget that reserved tokens ahead would send the waiters due
    // at 1 s, 2 s and 3 s back to back at 3.5 s.
    let now = 0;
    const timers: { at: number; fire: () => void }[] = [];
    const budget = new RateBudget({
      ratePerSecond: 1,
      burst: 1,
      now: () => now,
      sleep: (ms) =>
        new Promise<void>((fire) => timers.push({ at: Math.max(now + ms, 3_500), fire })),
    });
    const sentAt: number[] = [];
    const all = Promise.all(
      Array.from({ length: 4 }, () => budget.take("a.test").then(() => sentAt.push(now))),
    );
    for (let turns = 0; turns < 100 && sentAt.length < 4; turns++) {
      for (let i = 0; i < 10; i++) await Promise.resolve();
      timers.sort((a, b) => a.at - b.at);
      const next = timers.shift();
      if (!next) continue;
      now = next.at;
      next.fire();
    }
    await all;
    expect(sentAt).toEqual([0, 3_500, 4_500, 5_500]);
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
