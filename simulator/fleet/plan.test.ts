import { describe, expect, it } from "vitest";
import {
  BEHAVIOURS,
  type Behaviour,
  DEFAULT_SHARES,
  FleetOptionsError,
  hostAddress,
  hostIndex,
  hostOf,
  planFleet,
  profile,
} from "./plan";

describe("fleet plan", () => {
  it("deals behaviours by the configured shares over 10,000 feeds (within 0.6 points)", () => {
    for (const seed of [1, 2]) {
      const plan = planFleet(seed, { sources: 10_000 });
      const counts = Object.fromEntries(BEHAVIOURS.map((b) => [b, 0])) as Record<Behaviour, number>;
      for (let i = 0; i < plan.size; i++) counts[profile(plan, i).behaviour] += 1;
      const expected = { ...DEFAULT_SHARES, normal: 0.02 };
      for (const b of BEHAVIOURS) {
        expect(Math.abs(counts[b] / plan.size - expected[b]), `${b} at seed ${seed}`).toBeLessThan(
          0.006,
        );
      }
    }
  });

  it("takes other shares, and what they leave is normal", () => {
    const plan = planFleet(1, {
      sources: 10_000,
      shares: { quiet: 0.5, hot: 0.2, slow: 0, failing: 0.1, large: 0 },
    });
    const counts: Record<string, number> = {};
    for (let i = 0; i < plan.size; i++) {
      const b = profile(plan, i).behaviour;
      counts[b] = (counts[b] ?? 0) + 1;
    }
    expect(counts.slow).toBeUndefined();
    expect(counts.large).toBeUndefined();
    expect(Math.abs((counts.hot ?? 0) / plan.size - 0.2)).toBeLessThan(0.015);
    expect(Math.abs((counts.normal ?? 0) / plan.size - 0.2)).toBeLessThan(0.015);
  });

  it("gives failing feeds each way of failing, and a share of quiet feeds no validators", () => {
    const plan = planFleet(1, { sources: 20_000 });
    const failures = new Set<string>();
    let quiet = 0;
    let bare = 0;
    for (let i = 0; i < plan.size; i++) {
      const f = profile(plan, i);
      if (f.failure) failures.add(f.failure);
      if (f.behaviour === "quiet") {
        quiet += 1;
        if (!f.validators) bare += 1;
      }
      if (f.behaviour === "large") expect(f.largeBytes).toBeGreaterThanOrEqual(1_000_000);
      if (f.behaviour === "large") expect(f.largeBytes).toBeLessThan(3_000_000);
      if (f.behaviour !== "quiet" && f.behaviour !== "normal") expect(f.validators).toBe(true);
    }
    expect([...failures].sort()).toEqual(["down", "flapping", "recovering", "timeout"]);
    expect(Math.abs(bare / quiet - 0.1)).toBeLessThan(0.015);
  });

  it("spreads 100,000 feeds over 1,000 distinct loopback hosts, 100 each", () => {
    const plan = planFleet(1, { sources: 100_000 });
    expect(plan.hosts).toBe(1_000);
    const perHost = new Uint32Array(plan.hosts);
    for (let i = 0; i < plan.size; i++) {
      const h = hostOf(plan, i);
      perHost[h] = (perHost[h] as number) + 1;
    }
    expect(Math.min(...perHost)).toBe(100);
    expect(Math.max(...perHost)).toBe(100);
    const addresses = Array.from({ length: plan.hosts }, (_, h) => hostAddress(h));
    expect(new Set(addresses).size).toBe(plan.hosts);
    for (const [h, a] of addresses.entries()) {
      expect(a).toMatch(/^127\.1\.\d{1,3}\.\d{1,3}$/);
      expect(a).not.toMatch(/\.(0|255)$/);
      expect(hostIndex(a)).toBe(h);
    }
    expect(addresses.slice(0, 2)).toEqual(["127.1.0.1", "127.1.0.2"]);
    expect(addresses[999]).toBe("127.1.3.250");
    // Uneven sizes: every host within one feed of the others.
    const odd = planFleet(1, { sources: 150 });
    expect(odd.hosts).toBe(2);
    expect(hostOf(odd, 149)).toBe(1);
    expect(hostAddress(64_000)).toBe("127.2.0.1");
    expect(hostIndex("127.2.0.1")).toBe(64_000);
    for (const other of ["127.0.0.1", "127.1.0.0", "127.1.0.251", "10.1.0.1", "::1", ""]) {
      expect(hostIndex(other)).toBeNull();
    }
    expect(hostIndex("::ffff:127.1.0.3")).toBe(2);
  });

  it("sizes the story pool so a pooled story is carried by about copiesPerStory feeds", () => {
    const small = planFleet(1, { sources: 1_000 });
    const large = planFleet(1, { sources: 100_000 });
    expect(large.poolSize.en).toBeGreaterThan(50 * small.poolSize.en);
    expect(planFleet(1, { sources: 100_000, copiesPerStory: 12 }).poolSize.en).toBeCloseTo(
      large.poolSize.en / 2,
      -1,
    );
  });

  it("refuses bad options with a clear message", () => {
    const bad: [object, RegExp][] = [
      [{ sources: 0 }, /sources must be a whole number from 1 to 1000000, not 0/],
      [{ sources: 1.5 }, /sources must be a whole number/],
      [{ sources: 10, feedsPerHost: 0 }, /feedsPerHost must be/],
      [{ sources: 1_000_000, feedsPerHost: 10 }, /need 100000 hosts, over 20000/],
      [{ sources: 10, shares: { hot: 1.5 } }, /shares.hot must be between 0 and 1, not 1.5/],
      [{ sources: 10, shares: { quiet: 0.9, hot: 0.2 } }, /shares add up to 1.1/],
      [
        { sources: 10, pollIntervalSeconds: 2 },
        /pollIntervalSeconds must be a whole number from 5/,
      ],
      [{ sources: 10, slowMs: [5, 1] }, /slowMs must be \[min, max\]/],
      [{ sources: 10, bind: "all" }, /bind must be "per-host" or "any"/],
      [{ sources: 10, port: 70_000 }, /port must be/],
    ];
    for (const [options, message] of bad) {
      expect(() => planFleet(1, options as never)).toThrow(FleetOptionsError);
      expect(() => planFleet(1, options as never)).toThrow(message);
    }
  });
});
