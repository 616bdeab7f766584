import { describe, expect, it } from "vitest";
import type { Clock } from "@/lib/backoff";
import type { FetchCode } from "./classify";
import { DEFAULT_FETCH_RETRY, nextTry, parseRetryAfter, retryRequest } from "./retry";

// The delays themselves (full jitter, caps) are lib/backoff's and tested there.

function clock(random: number, slept: number[]): Clock {
  return { now: () => 0, random: () => random, sleep: async (ms) => void slept.push(ms) };
}

describe("nextTry", () => {
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
    expect(nextTry({ code }, DEFAULT_FETCH_RETRY)).toBeNull();
  });
  it.each<FetchCode>(["http_429", "http_5xx", "timeout"])(
    "retries %s with the back-off",
    (code) => {
      expect(nextTry({ code }, DEFAULT_FETCH_RETRY)).toBeUndefined();
    },
  );
  it("honours Retry-After instead of the jitter, capped", () => {
    expect(nextTry({ code: "http_429", retryAfterMs: 7_000 }, DEFAULT_FETCH_RETRY)).toBe(7_000);
    expect(nextTry({ code: "http_429", retryAfterMs: 3_600_000 }, DEFAULT_FETCH_RETRY)).toBe(
      60_000,
    );
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

describe("retryRequest", () => {
  it("sleeps the clock's full-jitter ceilings between attempts and stops on a final outcome", async () => {
    const slept: number[] = [];
    const codes: FetchCode[] = ["http_5xx", "timeout", "ok"];
    const seen: number[] = [];
    const out = await retryRequest(
      async (retry) => {
        seen.push(retry);
        return { code: codes[retry] as FetchCode };
      },
      { ...DEFAULT_FETCH_RETRY, attempts: 5 },
      clock(1, slept),
    );
    expect(out.code).toBe("ok");
    expect(seen).toEqual([0, 1, 2]);
    expect(slept).toEqual([500, 1_000]);
  });

  it("a 403 is tried once; a 503 no more than the attempts; Retry-After wins over the jitter", async () => {
    let calls = 0;
    await retryRequest(
      async () => {
        calls++;
        return { code: "http_4xx" as FetchCode };
      },
      DEFAULT_FETCH_RETRY,
      clock(0.5, []),
    );
    expect(calls).toBe(1);
    const slept: number[] = [];
    calls = 0;
    const out = await retryRequest(
      async () => {
        calls++;
        return { code: "http_429" as FetchCode, retryAfterMs: 2_000 };
      },
      DEFAULT_FETCH_RETRY,
      clock(0.5, slept),
    );
    expect([out.code, calls]).toEqual(["http_429", 3]);
    expect(slept).toEqual([2_000, 2_000]);
  });
});
