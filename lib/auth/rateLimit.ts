import ipaddr from "ipaddr.js";

/**
 * Wrong-password throttling, in memory and per process (the embedded default is one process; on
 * PostgreSQL with several web processes each counts on its own, so the bound is per process).
 * After `maxFailures` wrong passwords from one client within `windowMs`, every login attempt from
 * it is refused with 429 until the oldest of them leaves the window. The client is the peer
 * address (lib/auth/client.ts), which a client cannot choose, so there is no ceiling across
 * clients: one would let anyone's wrong guesses lock the admin out (docs/decisions/013).
 * 10 per 15 minutes is 960 guesses a day per address, hopeless against a password of 8+
 * characters chosen by a person who was told it guards the dashboard.
 */
export class LoginRateLimiter {
  private readonly failures = new Map<string, number[]>();
  private writes = 0;

  constructor(
    readonly maxFailures = 10,
    readonly windowMs = 15 * 60 * 1000,
  ) {}

  /** Seconds to wait before this client may try again, or null when it may try now. */
  retryAfter(client: string, now = Date.now()): number | null {
    const since = now - this.windowMs;
    const mine = this.failures.get(client);
    if (!mine) return null;
    prune(mine, since);
    if (mine.length === 0) {
      this.failures.delete(client);
      return null;
    }
    // Blocked while the limit's worth of failures is in the window: until the earliest of the
    // last `limit` failures leaves it.
    if (mine.length < this.maxFailures) return null;
    const blockedUntil = mine.at(-this.maxFailures) as number;
    return Math.max(1, Math.ceil((blockedUntil + this.windowMs - now) / 1000));
  }

  fail(client: string, now = Date.now()): void {
    const mine = this.failures.get(client) ?? [];
    mine.push(now);
    this.failures.set(client, mine);
    // Entries of clients that never come back would stay forever: drop the expired ones now
    // and then (one pass over the clients per 1,000 failures).
    if (++this.writes % 1000 === 0) {
      for (const [key, times] of this.failures) {
        prune(times, now - this.windowMs);
        if (times.length === 0) this.failures.delete(key);
      }
    }
  }

  /** A correct password clears that client's failures. */
  succeed(client: string): void {
    this.failures.delete(client);
  }
}

function prune(times: number[], since: number): void {
  let drop = 0;
  while (drop < times.length && (times[drop] ?? 0) <= since) drop++;
  if (drop) times.splice(0, drop);
}

const globalForLimiter = globalThis as unknown as { wirewatchLoginLimiter?: LoginRateLimiter };

/** The process's limiter, shared by every route module. */
export function loginLimiter(): LoginRateLimiter {
  globalForLimiter.wirewatchLoginLimiter ??= new LoginRateLimiter();
  return globalForLimiter.wirewatchLoginLimiter;
}

/**
 * The limiter's key for a client address: the address itself for IPv4, its /64 for IPv6, since
 * one home or one server is normally handed a whole /64 and could otherwise rotate through 2^64
 * addresses.
 */
export function rateLimitKey(address: string): string {
  try {
    const parsed = ipaddr.process(address);
    if (parsed.kind() === "ipv4") return parsed.toString();
    const parts = (parsed as ipaddr.IPv6).toNormalizedString().split(":").slice(0, 4);
    return `${parts.join(":")}::/64`;
  } catch {
    return address;
  }
}
