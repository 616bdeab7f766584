/**
 * One token bucket per host, shared by every fetch path in the process (feeds, pages, backfill,
 * robots.txt, every redirect hop), so being polite to a site does not depend on which collector
 * asks. A caller that finds the bucket empty reserves the next token (the balance goes negative)
 * and waits for it, so waiting callers are served in arrival order and never burst together.
 */
export interface RateBudgetOptions {
  /** 1 request/s per host: Google's default crawl rate ceiling for small sites is lower still. */
  ratePerSecond?: number;
  /** 5: a poll of a feed plus its robots.txt and a redirect or two fit without waiting. */
  burst?: number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

interface Bucket {
  tokens: number;
  at: number;
}

export class RateBudget {
  private readonly buckets = new Map<string, Bucket>();
  private readonly rate: number;
  private readonly burst: number;
  private readonly now: () => number;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(options: RateBudgetOptions = {}) {
    this.rate = options.ratePerSecond ?? 1;
    this.burst = options.burst ?? 5;
    this.now = options.now ?? Date.now;
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  /** Waits until `host` may be sent one more request; returns the milliseconds waited. */
  async take(host: string): Promise<number> {
    const now = this.now();
    const bucket = this.buckets.get(host) ?? { tokens: this.burst, at: now };
    bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.at) / 1000) * this.rate);
    bucket.at = now;
    bucket.tokens -= 1;
    this.buckets.set(host, bucket);
    if (bucket.tokens >= 0) return 0;
    const wait = (-bucket.tokens / this.rate) * 1000;
    await this.sleep(wait);
    return wait;
  }
}

const globalForBudget = globalThis as unknown as { wirewatchRateBudget?: RateBudget };

/** The process's one budget (on globalThis so Next.js route handlers and workers share it). */
export function sharedRateBudget(): RateBudget {
  globalForBudget.wirewatchRateBudget ??= new RateBudget();
  return globalForBudget.wirewatchRateBudget;
}
