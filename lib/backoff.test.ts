import { describe, expect, it } from "vitest";
import { Backoff, backoffDelay, type Clock, retry } from "./backoff";

function fakeClock(random = 0.5): Clock & { slept: number[] } {
  let now = 0;
  const slept: number[] = [];
  return {
    slept,
    now: () => now,
    random: () => random,
    sleep: async (ms) => {
      slept.push(ms);
      now += ms;
    },
  };
}

describe("backoffDelay", () => {
  it("doubles from base up to the cap, with full jitter by default", () => {
    const policy = { baseMs: 100, capMs: 1_000 };
    expect([1, 2, 3, 4, 5].map((n) => backoffDelay(n, policy, () => 1))).toEqual([
      100, 200, 400, 800, 1_000,
    ]);
    expect(backoffDelay(3, policy, () => 0.25)).toBe(100);
    expect(backoffDelay(3, policy, () => 0)).toBe(0);
  });

  it("without jitter gives the ceiling; a huge retry number stays at the cap", () => {
    const policy = { baseMs: 5_000, capMs: 3_600_000, jitter: "none" as const };
    expect(backoffDelay(1, policy, () => 0)).toBe(5_000);
    expect(backoffDelay(10_000, policy)).toBe(3_600_000);
  });
});

describe("Backoff", () => {
  it("grows with the streak and starts over on reset", async () => {
    const clock = fakeClock(1);
    const b = new Backoff({ baseMs: 250, capMs: 5_000 }, clock);
    await b.wait();
    await b.wait();
    await b.wait();
    expect(clock.slept).toEqual([250, 500, 1_000]);
    expect(b.failures).toBe(3);
    b.reset();
    await b.wait();
    expect(clock.slept.at(-1)).toBe(250);
    b.restartAt(2);
    expect(b.next()).toBe(1_000);
  });
});

describe("retry", () => {
  it("retries thrown errors until one attempt succeeds", async () => {
    const clock = fakeClock(1);
    let calls = 0;
    const value = await retry(
      async () => {
        if (++calls < 3) throw new Error("blip");
        return "ok";
      },
      { attempts: 5, policy: { baseMs: 10, capMs: 100 }, clock },
    );
    expect(value).toBe("ok");
    expect(clock.slept).toEqual([10, 20]);
  });

  it("throws the last error once the attempts are spent", async () => {
    const clock = fakeClock();
    await expect(
      retry(
        async (n) => {
          throw new Error(`fail ${n}`);
        },
        { attempts: 3, policy: { baseMs: 10, capMs: 100 }, clock },
      ),
    ).rejects.toThrow("fail 2");
    expect(clock.slept).toHaveLength(2);
  });

  it("lets decide() retry values, wait exactly (Retry-After) or stop", async () => {
    const clock = fakeClock();
    const seen: number[] = [];
    const value = await retry(
      async (n) => {
        seen.push(n);
        return n < 2 ? 503 : 200;
      },
      {
        attempts: 5,
        policy: { baseMs: 10, capMs: 100 },
        clock,
        decide: (o) => ("value" in o && o.value === 503 ? 7_000 : null),
      },
    );
    expect(value).toBe(200);
    expect(seen).toEqual([0, 1, 2]);
    expect(clock.slept).toEqual([7_000, 7_000]);
  });

  it("stops between tries once the signal aborts", async () => {
    const clock = fakeClock();
    const abort = new AbortController();
    let calls = 0;
    await expect(
      retry(
        async () => {
          calls++;
          abort.abort();
          throw new Error("down");
        },
        { attempts: 10, policy: { baseMs: 10, capMs: 100 }, clock, signal: abort.signal },
      ),
    ).rejects.toThrow("down");
    expect(calls).toBe(1);
  });
});
