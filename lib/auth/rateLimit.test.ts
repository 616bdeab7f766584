import { describe, expect, it } from "vitest";
import { LoginRateLimiter, rateLimitKey } from "./rateLimit";

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

  it("one client's failures, however many, never lock out another", () => {
    const limiter = new LoginRateLimiter();
    for (let i = 0; i < 100; i++) limiter.fail("attacker", i);
    expect(limiter.retryAfter("attacker", 200)).toBe(15 * 60);
    expect(limiter.retryAfter("admin", 200)).toBeNull();
  });

  it("keys IPv6 clients by their /64, IPv4 ones by address", () => {
    expect(rateLimitKey("2001:db8:1:2:aaaa::1")).toBe(rateLimitKey("2001:db8:1:2:bbbb::9"));
    expect(rateLimitKey("2001:db8:1:2::1")).not.toBe(rateLimitKey("2001:db8:1:3::1"));
    expect(rateLimitKey("::ffff:203.0.113.7")).toBe("203.0.113.7");
    expect(rateLimitKey("203.0.113.7")).not.toBe(rateLimitKey("203.0.113.8"));
  });
});
