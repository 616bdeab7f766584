import { describe, expect, it } from "vitest";
import { RequestPacer } from "./pace";

/** Time that moves only when someone sleeps. */
function clock() {
  let now = 0;
  return {
    now: () => now,
    sleep: async (ms: number) => {
      now += ms;
    },
  };
}

describe("RequestPacer", () => {
  it("spaces requests evenly at the configured rate", async () => {
    const pacer = new RequestPacer(120, clock()); // one per 500 ms
    const waits = [];
    for (let i = 0; i < 3; i++) waits.push(await pacer.turn());
    expect(waits).toEqual([0, 500, 500]);
  });

  it("reserves turns for callers waiting at once, in order", async () => {
    const c = clock();
    const pacer = new RequestPacer(60, { now: c.now, sleep: async () => {} });
    expect(await Promise.all([pacer.turn(), pacer.turn(), pacer.turn()])).toEqual([
      0, 1_000, 2_000,
    ]);
  });

  it("holds every request until a Retry-After has passed, with no rate set too", async () => {
    const c = clock();
    const pacer = new RequestPacer(undefined, c);
    expect(await pacer.turn()).toBe(0);
    pacer.holdUntil(2_000);
    pacer.holdUntil(1_000); // an earlier hold does not shorten a later one
    expect(await pacer.turn()).toBe(2_000);
    expect(await pacer.turn()).toBe(0);
  });
});
