import { describe, expect, it } from "vitest";
import { maxAgeFrom, nextPollSeconds } from "./nextPoll";

const mid = () => 0.5; // no jitter

describe("nextPollSeconds", () => {
  it("polls hot sources four times as often, never under 15 s", () => {
    expect(nextPollSeconds({ baseSeconds: 300, hot: false, failures: 0 }, mid)).toBe(300);
    expect(nextPollSeconds({ baseSeconds: 300, hot: true, failures: 0 }, mid)).toBe(75);
    expect(nextPollSeconds({ baseSeconds: 30, hot: true, failures: 0 }, mid)).toBe(15);
  });

  it("obeys the source's max-age, ttl and Retry-After, up to 6 h", () => {
    expect(
      nextPollSeconds({ baseSeconds: 60, hot: true, failures: 0, maxAgeSeconds: 600 }, mid),
    ).toBe(600);
    expect(nextPollSeconds({ baseSeconds: 60, hot: false, failures: 0, ttlMinutes: 30 }, mid)).toBe(
      1800,
    );
    expect(
      nextPollSeconds({ baseSeconds: 60, hot: false, failures: 0, retryAfterSeconds: 120 }, mid),
    ).toBe(120);
    expect(
      nextPollSeconds({ baseSeconds: 60, hot: false, failures: 0, maxAgeSeconds: 10 ** 7 }, mid),
    ).toBe(6 * 3600);
  });

  it("checks a failing source again within 30 s, so five failed polls fit in 3 minutes", () => {
    expect(nextPollSeconds({ baseSeconds: 10, hot: false, failures: 1 }, mid)).toBe(20);
    expect(nextPollSeconds({ baseSeconds: 60, hot: true, failures: 1 }, mid)).toBe(30);
    expect(nextPollSeconds({ baseSeconds: 60, hot: false, failures: 10 }, mid)).toBe(30);
    const highest = () => 0.999999;
    for (const baseSeconds of [5, 10, 30, 60, 300, 3_600, 86_400]) {
      let gaps = 0;
      for (let failures = 1; failures < 5; failures++) {
        gaps += nextPollSeconds({ baseSeconds, hot: false, failures }, highest);
      }
      expect(gaps).toBeLessThanOrEqual(4 * 33);
    }
  });

  it("a failing source's Retry-After is still obeyed", () => {
    expect(
      nextPollSeconds({ baseSeconds: 60, hot: false, failures: 2, retryAfterSeconds: 120 }, mid),
    ).toBe(120);
  });

  it("keeps the cadence from start to start: a slow poll does not push the next one back", () => {
    const page = { baseSeconds: 10, hot: false, failures: 0 };
    expect(nextPollSeconds({ ...page, elapsedSeconds: 0 }, mid)).toBe(15);
    expect(nextPollSeconds({ ...page, elapsedSeconds: 9.6 }, mid)).toBe(5);
    // Longer than the cadence: the next poll starts after a short pause, not back to back.
    expect(nextPollSeconds({ ...page, elapsedSeconds: 40 }, mid)).toBe(1);
    expect(
      nextPollSeconds({ baseSeconds: 300, hot: false, failures: 0, elapsedSeconds: 12 }, mid),
    ).toBe(288);
  });

  it("counts a source's own hints from now, however long the poll took", () => {
    expect(
      nextPollSeconds(
        { baseSeconds: 60, hot: false, failures: 2, retryAfterSeconds: 120, elapsedSeconds: 30 },
        mid,
      ),
    ).toBe(120);
    expect(
      nextPollSeconds(
        { baseSeconds: 60, hot: false, failures: 0, maxAgeSeconds: 600, elapsedSeconds: 30 },
        mid,
      ),
    ).toBe(600);
  });

  it("polls a feed a hub pushes 4× less often, at most hourly, hot or not; failures still rechecked", () => {
    const pushed = { hot: false, failures: 0, pushed: true };
    expect(nextPollSeconds({ ...pushed, baseSeconds: 30 }, mid)).toBe(120);
    expect(nextPollSeconds({ ...pushed, baseSeconds: 300, hot: true }, mid)).toBe(1200);
    expect(nextPollSeconds({ ...pushed, baseSeconds: 1800 }, mid)).toBe(3600);
    // An interval over the cap is kept, not shortened.
    expect(nextPollSeconds({ ...pushed, baseSeconds: 7200 }, mid)).toBe(7200);
    // The breaker still gets its verdict within minutes.
    expect(nextPollSeconds({ ...pushed, baseSeconds: 300, failures: 1 }, mid)).toBe(30);
  });

  it("spreads polls by ±10%", () => {
    expect(nextPollSeconds({ baseSeconds: 300, hot: false, failures: 0 }, () => 0)).toBe(270);
    expect(nextPollSeconds({ baseSeconds: 300, hot: false, failures: 0 }, () => 0.999999)).toBe(
      330,
    );
  });
});

describe("maxAgeFrom", () => {
  it("reads max-age and ignores s-maxage", () => {
    expect(maxAgeFrom("public, max-age=120")).toBe(120);
    expect(maxAgeFrom("s-maxage=60")).toBeNull();
    expect(maxAgeFrom(null)).toBeNull();
  });
});
