/**
 * Wrong-password throttling, in memory and per process (the embedded default is one process; on
 * PostgreSQL with several web processes each counts on its own, so the bound is per process).
 * After `maxFailures` wrong passwords from one client within `windowMs`, every login attempt from
 * it is refused with 429 until the oldest of them leaves the window. A ceiling across all clients
 * (`globalMaxFailures`) stops a guesser who varies the client address (x-forwarded-for is the
 * client's to write); reaching it locks everyone out for the rest of the window, which is the
 * price of a bound that address rotation cannot escape.
 */
export class LoginRateLimiter {
  private readonly failures = new Map<string, number[]>();
  private readonly all: number[] = [];

  constructor(
    readonly maxFailures = 10,
    readonly windowMs = 15 * 60 * 1000,
    readonly globalMaxFailures = 100,
  ) {}

  /** Seconds to wait before this client may try again, or null when it may try now. */
  retryAfter(client: string, now = Date.now()): number | null {
    const since = now - this.windowMs;
    prune(this.all, since);
    const mine = this.failures.get(client);
    if (mine) {
      prune(mine, since);
      if (mine.length === 0) this.failures.delete(client);
    }
    // Blocked while the limit's worth of failures is in the window: until the earliest of the
    // last `limit` failures leaves it.
    const starts: number[] = [];
    if (mine && mine.length >= this.maxFailures) starts.push(mine.at(-this.maxFailures) as number);
    if (this.all.length >= this.globalMaxFailures) {
      starts.push(this.all.at(-this.globalMaxFailures) as number);
    }
    if (starts.length === 0) return null;
    const blockedUntil = Math.max(...starts);
    return Math.max(1, Math.ceil((blockedUntil + this.windowMs - now) / 1000));
  }

  fail(client: string, now = Date.now()): void {
    const mine = this.failures.get(client) ?? [];
    mine.push(now);
    this.failures.set(client, mine);
    this.all.push(now);
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
