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
  it("processes sharing a host keep to its budget together: the busiest second of four", async () => {
    // One clock for all four: each process takes for the same host as fast as its share allows.
    let now = 0;
    const sent: number[] = [];
    const processes = Array.from({ length: 4 }, () => {
      const budget = new RateBudget({
        now: () => now,
        // Sleeping moves the shared clock to the sleeper's wake-up, as if the others waited too.
        sleep: async (ms) => {
          now += ms;
        },
      });
      budget.shareAmong(4);
      return budget;
    });
    // Round-robin over the processes for 20 s of their time.
    for (let i = 0; now < 20_000; i++) {
      const budget = processes[i % 4] as RateBudget;
      await budget.take("a.test");
      sent.push(now);
    }
    let busiest = 0;
    for (const at of sent) {
      busiest = Math.max(busiest, sent.filter((t) => t > at - 1_000 && t <= at).length);
    }
    // The whole budget: a burst of 5 and 1 a second, however many processes.
    expect(busiest).toBeLessThanOrEqual(5 + 1);
    expect(sent.length / 20).toBeLessThanOrEqual(1 + 5 / 20);
    // Unshared, the same four would have sent 4 bursts of 5 at once.
    const alone = Array.from({ length: 4 }, () => new RateBudget({ now: () => 0 }));
    let atZero = 0;
    for (const budget of alone)
      for (let k = 0; k < 5; k++) atZero += (await budget.take("a.test")) === 0 ? 1 : 0;
    expect(atZero).toBe(20);
  });
});
