import { describe, expect, it } from "vitest";
import { LoginRateLimiter } from "./rateLimit";

describe("LoginRateLimiter", () => {
  it("locks a client out after 10 failures until the oldest leaves the 15-minute window", () => {
    const limiter = new LoginRateLimiter();
    const t0 = 1_000_000;
    for (let i = 0; i < 10; i++) {
      expect(limiter.retryAfter("a", t0 + i * 1000)).toBeNull();
      limiter.fail("a", t0 + i * 1000);
    }
    expect(limiter.retryAfter("a", t0 + 10_000)).toBe(15 * 60 - 10);
    expect(limiter.retryAfter("b", t0 + 10_000)).toBeNull();
    expect(limiter.retryAfter("a", t0 + 15 * 60 * 1000 + 1)).toBeNull();
  });

  it("a success clears the client's failures", () => {
    const limiter = new LoginRateLimiter(2);
    limiter.fail("a", 0);
    limiter.succeed("a");
    limiter.fail("a", 1);
    expect(limiter.retryAfter("a", 2)).toBeNull();
  });

  it("caps failures across clients, so rotating addresses does not help", () => {
    const limiter = new LoginRateLimiter(10, 60_000, 5);
    for (let i = 0; i < 5; i++) limiter.fail(`client-${i}`, i);
    expect(limiter.retryAfter("someone-new", 10)).toBe(60);
  });
});
