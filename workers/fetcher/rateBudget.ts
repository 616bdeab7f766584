/**
 * One token bucket per host, shared by every fetch path in the process (feeds, pages, the
 * browser's requests, backfill, robots.txt, every redirect hop), so being polite to a site does
 * not depend on which collector asks. Callers for one host take turns in arrival order; each one
 * takes a token only when the bucket, refilled up to the clock's actual now, has one, and sleeps
 * until then otherwise. Tokens are never reserved ahead: a waiter that wakes late (a busy event
 * loop) finds the bucket as it really is, so late waiters cannot go out together.
 */
/** What a host is promised across every process that fetches (see shareAmong). */
export const DEFAULT_HOST_BUDGET = { ratePerSecond: 1, burst: 5 } as const;

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
  /** The last caller in line per host; absent when nobody waits. */
  private readonly turns = new Map<string, Promise<void>>();
  private readonly baseRate: number;
  private readonly baseBurst: number;
  private rate: number;
  private burst: number;
  private readonly now: () => number;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(options: RateBudgetOptions = {}) {
    this.baseRate = options.ratePerSecond ?? DEFAULT_HOST_BUDGET.ratePerSecond;
    this.baseBurst = options.burst ?? DEFAULT_HOST_BUDGET.burst;
    this.rate = this.baseRate;
    this.burst = this.baseBurst;
    this.now = options.now ?? Date.now;
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  /** Waits until `host` may be sent one more request; returns the milliseconds waited. */
  async take(host: string): Promise<number> {
    const before = this.turns.get(host);
    let done!: () => void;
    const mine = new Promise<void>((resolve) => {
      done = resolve;
    });
    this.turns.set(host, mine);
    const started = this.now();
    try {
      await before;
      for (;;) {
        const bucket = this.refilled(host);
        if (bucket.tokens >= 1) {
          bucket.tokens -= 1;
          return this.now() - started;
        }
        await this.sleep(((1 - bucket.tokens) / this.rate) * 1000);
      }
    } finally {
      done();
      if (this.turns.get(host) === mine) this.turns.delete(host);
    }
  }

  /**
   * Several worker processes poll the same hosts, each with a budget of its own: each takes a
   * 1/n share of the rate and of the burst (never under one request, so a process can always
   * send), so together they keep to the budget a host is promised, up to `burst` processes
   * (docs/decisions/036). Told by the fetch queue's worker after each report of its peers.
   */
  shareAmong(processes: number): void {
    const n = Math.max(1, Math.floor(processes));
    this.rate = this.baseRate / n;
    this.burst = Math.max(1, this.baseBurst / n);
    for (const bucket of this.buckets.values()) bucket.tokens = Math.min(bucket.tokens, this.burst);
  }

  private refilled(host: string): Bucket {
    const now = this.now();
    const bucket = this.buckets.get(host) ?? { tokens: this.burst, at: now };
    bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.at) / 1000) * this.rate);
    bucket.at = now;
    this.buckets.set(host, bucket);
    return bucket;
  }
}

const globalForBudget = globalThis as unknown as { wirewatchRateBudget?: RateBudget };

/** The process's one budget (on globalThis so Next.js route handlers and workers share it). */
export function sharedRateBudget(): RateBudget {
  globalForBudget.wirewatchRateBudget ??= new RateBudget();
  return globalForBudget.wirewatchRateBudget;
}
