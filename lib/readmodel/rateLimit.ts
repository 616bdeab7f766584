import { clientAddress } from "../auth/client";
import { rateLimitKey } from "../auth/rateLimit";
import { config } from "../config";

/**
 * The public API's limit per client (WIREWATCH_PUBLIC_RATE_LIMIT a minute, 1,200 by default: 20
 * a second, far above a reader paging and far below one client holding the read path).
 *
 * A token bucket per client: `perMinute` tokens at most, refilled evenly (perMinute / 60 a
 * second), one per request, so a reader may burst a minute's worth and then goes at the rate.
 * The client is lib/auth's: the socket's peer, X-Forwarded-For only behind
 * WIREWATCH_TRUSTED_PROXIES, IPv6 by its /64. Per process, in memory: with N instances behind a
 * balancer a client gets up to N× the limit, which is what a limit against one client holding
 * one instance needs.
 */
export class PublicRateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private calls = 0;

  constructor(
    readonly perMinute: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Null when the client may go on (a token is taken), else seconds until its next token. */
  take(client: string): number | null {
    const now = this.now();
    const perMs = this.perMinute / 60_000;
    const bucket = this.buckets.get(client) ?? { tokens: this.perMinute, at: now };
    bucket.tokens = Math.min(this.perMinute, bucket.tokens + (now - bucket.at) * perMs);
    bucket.at = now;
    this.buckets.set(client, bucket);
    this.sweep(now, perMs);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return null;
    }
    return Math.max(1, Math.ceil((1 - bucket.tokens) / perMs / 1000));
  }

  /**
   * A client whose bucket has refilled is the same as one never seen: dropped, one pass over
   * the map per 10,000 requests, so clients that never come back do not pile up.
   */
  private sweep(now: number, perMs: number): void {
    if (++this.calls % 10_000 !== 0) return;
    for (const [client, b] of this.buckets) {
      if (b.tokens + (now - b.at) * perMs >= this.perMinute) this.buckets.delete(client);
    }
  }
}

const globalForLimiter = globalThis as unknown as { wirewatchPublicLimiter?: PublicRateLimiter };

function limiter(): PublicRateLimiter {
  const perMinute = config().WIREWATCH_PUBLIC_RATE_LIMIT;
  const current = globalForLimiter.wirewatchPublicLimiter;
  if (current?.perMinute === perMinute) return current;
  globalForLimiter.wirewatchPublicLimiter = new PublicRateLimiter(perMinute);
  return globalForLimiter.wirewatchPublicLimiter;
}

/** Seconds the request's client must wait, or null when it may go on (its token is taken). */
export function publicRateLimit(request: Request): number | null {
  return limiter().take(rateLimitKey(clientAddress(request)));
}

/** The same limit for a server-rendered page, which has the headers but not a Request. */
export function publicRateLimitFor(headers: Headers): number | null {
  return publicRateLimit(new Request("http://localhost/news", { headers }));
}
