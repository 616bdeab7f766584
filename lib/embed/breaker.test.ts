import { describe, expect, it } from "vitest";
import { CallBreaker } from "./breaker";

function clock() {
  let now = 1_000;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

describe("CallBreaker", () => {
  it("opens after `threshold` failures in a row; an answer between resets the count", () => {
    const c = clock();
    const breaker = new CallBreaker({ threshold: 3, coolDownMs: 500 }, c);
    breaker.failed();
    breaker.failed();
    breaker.answered();
    breaker.failed();
    breaker.failed();
    expect(breaker.state).toBe("closed");
    expect(breaker.allow()).toBe(true);
    breaker.failed();
    expect(breaker.state).toBe("open");
    expect(breaker.allow()).toBe(false);
    expect(breaker.reopensAt).toBe(1_500);
  });

  it("after the cool-down lets one probe go: its answer closes, its failure reopens", () => {
    const c = clock();
    const breaker = new CallBreaker({ threshold: 1, coolDownMs: 500 }, c);
    breaker.failed();
    c.advance(499);
    expect(breaker.allow()).toBe(false);
    c.advance(1);
    expect(breaker.state).toBe("half_open");
    expect(breaker.allow()).toBe(true);
    expect(breaker.allow()).toBe(false); // one probe at a time
    breaker.failed();
    expect(breaker.state).toBe("open");
    c.advance(500);
    expect(breaker.allow()).toBe(true);
    breaker.answered();
    expect(breaker.state).toBe("closed");
    expect(breaker.allow()).toBe(true);
  });

  it("frees the probe slot when the probe was never sent", () => {
    const c = clock();
    const breaker = new CallBreaker({ threshold: 1, coolDownMs: 10 }, c);
    breaker.failed();
    c.advance(10);
    expect(breaker.allow()).toBe(true);
    breaker.cancel();
    expect(breaker.state).toBe("half_open");
    expect(breaker.allow()).toBe(true);
  });
});
