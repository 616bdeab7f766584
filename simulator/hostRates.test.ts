import { describe, expect, it } from "vitest";
import { HostRates } from "./hostRates";
import { Random } from "./random";
import { RequestLog } from "./requestLog";

/** The busiest 1 s window (t - 1000, t] over all arrivals, by brute force. */
function bruteMax(times: number[]): number {
  let best = 0;
  for (const t of times) best = Math.max(best, times.filter((u) => u > t - 1000 && u <= t).length);
  return best;
}

describe("HostRates", () => {
  it("finds the busiest 1 s window per host exactly, below the ring's size", () => {
    const random = new Random(9);
    for (let round = 0; round < 50; round++) {
      const rates = new HostRates();
      const arrivals: Record<string, number[]> = { a: [], b: [], c: [] };
      let t = 1_000_000;
      for (let n = 0; n < 300; n++) {
        t += random.exponential(random.chance(0.1) ? 20 : 400);
        const host = random.pick(["a", "b", "c"]);
        arrivals[host]?.push(t);
        rates.record(host, t);
      }
      for (const [host, times] of Object.entries(arrivals)) {
        const expected = Math.min(bruteMax(times), HostRates.RING + 1);
        expect(rates.get(host)?.maxPerSecond, `${host} in round ${round}`).toBe(expected);
        expect(rates.get(host)?.requests).toBe(times.length);
      }
    }
  });

  it("a window is 1 s: requests 1000 ms apart never share one, 999 ms apart do", () => {
    const rates = new HostRates();
    for (const t of [0, 1000, 2000, 3000]) rates.record("polite", t);
    for (const t of [0, 999]) rates.record("eager", t);
    expect(rates.get("polite")).toMatchObject({ requests: 4, maxPerSecond: 1 });
    expect(rates.get("eager")).toMatchObject({ requests: 2, maxPerSecond: 2, maxAt: 999 });
    expect(rates.busiest()?.host).toBe("eager");
    expect(rates.list().map((r) => r.host)).toEqual(["eager", "polite"]);
  });

  it("past the ring's size it reports a floor and says so", () => {
    const rates = new HostRates();
    for (let n = 0; n < 100; n++) rates.record("burst", 5_000 + n);
    expect(rates.get("burst")).toMatchObject({
      requests: 100,
      maxPerSecond: HostRates.RING + 1,
      saturated: true,
    });
  });

  it("tracks at most maxHosts hosts and counts the rest as untracked", () => {
    const rates = new HostRates(100);
    for (let h = 0; h < 150; h++) rates.record(`h${h}`, h);
    expect(rates.hosts).toBe(100);
    expect(rates.untracked).toBe(50);
    expect(rates.get("h99")?.requests).toBe(1);
    expect(rates.get("h120")).toBeNull();
    rates.clear();
    expect(rates.hosts).toBe(0);
    expect(rates.busiest()).toBeNull();
  });
});

describe("RequestLog", () => {
  const entry = (at: number, host = "x:1", path = "/f") => ({
    at,
    host,
    path,
    method: "GET",
    userAgent: "t",
  });

  it("keeps the last `capacity` requests oldest first, and rates over all of them", () => {
    const log = new RequestLog(5);
    for (let n = 0; n < 12; n++) log.add(entry(n * 100, n % 2 ? "odd:1" : "even:1", `/p${n}`));
    expect(log.size).toBe(5);
    expect(log.list().map((e) => e.path)).toEqual(["/p7", "/p8", "/p9", "/p10", "/p11"]);
    expect(log.list({ sinceMs: 1000, pathPrefix: "/p1" }).map((e) => e.path)).toEqual([
      "/p10",
      "/p11",
    ]);
    // 12 requests 100 ms apart, alternating: each host gets 6, 200 ms apart, 5 in any second.
    expect(log.hostRates()).toEqual([
      expect.objectContaining({ host: "even:1", requests: 6, maxPerSecond: 5 }),
      expect.objectContaining({ host: "odd:1", requests: 6, maxPerSecond: 5 }),
    ]);
    log.clear();
    expect(log.list()).toEqual([]);
    expect(log.hostRates()).toEqual([]);
  });

  it("refuses a capacity that is not a whole number ≥ 1", () => {
    expect(() => new RequestLog(0)).toThrow(/capacity must be a whole number/);
  });
});
