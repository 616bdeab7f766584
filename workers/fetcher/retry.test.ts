import { describe, expect, it } from "vitest";
import type { FetchCode } from "./classify";
import { DEFAULT_RETRY, jitterDelay, parseRetryAfter, retryDelay, withRetry } from "./retry";

/** A seeded generator (mulberry32), so the distribution test is deterministic. */
function seeded(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe("full jitter", () => {
  const policy = { attempts: 10, baseMs: 100, capMs: 1_000, retryAfterCapMs: 60_000 };

  it("10,000 delays are uniform over [0, min(cap, base·2^n)]", () => {
    for (const [retry, ceiling] of [
      [1, 100],
      [3, 400],
      [6, 1_000], // 100·2^5 = 3,200, capped at 1,000
    ] as const) {
      const random = seeded(retry);
      const samples = Array.from({ length: 10_000 }, () => jitterDelay(retry, policy, random));
      expect(Math.min(...samples)).toBeGreaterThanOrEqual(0);
      expect(Math.max(...samples)).toBeLessThanOrEqual(ceiling);
      const mean = samples.reduce((a, b) => a + b, 0) / samples.length;
      expect(mean / ceiling).toBeCloseTo(0.5, 1.5); // uniform: mean = ceiling/2 (±~0.03)
      // Ten equal buckets each hold 10 % ± 1.5 % (the standard error is 0.3 %).
      const buckets = new Array(10).fill(0);
      for (const s of samples) buckets[Math.min(9, Math.floor((s / ceiling) * 10))]++;
      for (const count of buckets) expect(Math.abs(count - 1_000)).toBeLessThan(150);
    }
  });

  it("uses the injected random source at its extremes", () => {
    expect(jitterDelay(2, policy, () => 0)).toBe(0);
    expect(jitterDelay(2, policy, () => 0.999999)).toBeCloseTo(200, 2);
  });
});

describe("retryDelay", () => {
  it.each<FetchCode>([
    "http_4xx",
    "http_404",
    "http_410",
    "dns",
    "tls",
    "blocked_ssrf",
    "ok",
    "not_modified",
  ])("never retries %s", (code) => {
    expect(retryDelay({ code }, 1, DEFAULT_RETRY, () => 0.5)).toBeNull();
  });
  it.each<FetchCode>(["http_429", "http_5xx", "timeout"])("retries %s", (code) => {
    expect(retryDelay({ code }, 1, DEFAULT_RETRY, () => 0.5)).toBe(250);
  });
  it("stops at the attempt limit", () => {
    expect(
      retryDelay({ code: "http_5xx" }, DEFAULT_RETRY.attempts, DEFAULT_RETRY, () => 0.5),
    ).toBeNull();
  });
  it("honours Retry-After instead of the jitter, capped", () => {
    expect(retryDelay({ code: "http_429", retryAfterMs: 7_000 }, 1, DEFAULT_RETRY, () => 0)).toBe(
      7_000,
    );
    expect(
      retryDelay({ code: "http_429", retryAfterMs: 3_600_000 }, 1, DEFAULT_RETRY, () => 0),
    ).toBe(60_000);
  });
});

describe("parseRetryAfter", () => {
  const now = Date.parse("2026-11-30T08:00:00Z");
  it("reads seconds and HTTP dates", () => {
    expect(parseRetryAfter("120", now)).toBe(120_000);
    expect(parseRetryAfter("Mon, 30 Nov 2026 08:00:30 GMT", now)).toBe(30_000);
    expect(parseRetryAfter("Mon, 30 Nov 2026 07:00:00 GMT", now)).toBe(0);
    expect(parseRetryAfter("soon", now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
});

describe("withRetry", () => {
  it("sleeps the injected sleep between attempts and stops on a final outcome", async () => {
    const slept: number[] = [];
    const codes: FetchCode[] = ["http_5xx", "timeout", "ok"];
    const seen: number[] = [];
    const out = await withRetry(
      async (retry) => {
        seen.push(retry);
        return { code: codes[retry] as FetchCode };
      },
      { ...DEFAULT_RETRY, attempts: 5 },
      { random: () => 1, sleep: async (ms) => void slept.push(ms) },
    );
    expect(out.code).toBe("ok");
    expect(seen).toEqual([0, 1, 2]);
    expect(slept).toEqual([500, 1_000]);
  });

  it("a 403 is tried once", async () => {
    let calls = 0;
    await withRetry(
      async () => {
        calls++;
        return { code: "http_4xx" as FetchCode };
      },
      DEFAULT_RETRY,
      { random: Math.random, sleep: async () => {} },
    );
    expect(calls).toBe(1);
  });
});
