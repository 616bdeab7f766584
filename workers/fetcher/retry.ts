import { type FetchCode, isRetryable } from "./classify";

/**
 * Retry within one poll, with full jitter (AWS Architecture Blog, "Exponential Backoff And
 * Jitter"): delay = random() * min(cap, base * 2^attempt). When many workers hit the same source
 * in the same second (breaking news), plain exponential backoff retries in lock-step waves; full
 * jitter spreads them uniformly over [0, ceiling]. Hand-written rather than cockatiel's
 * ExponentialBackoff because the random source and the sleep must be injectable for tests, and
 * Retry-After has to take precedence.
 */
export interface RetryPolicy {
  /** Attempts in all, the first included. 3: a blip is retried twice; a dead source is not hammered. */
  attempts: number;
  /** 500 ms, doubling: attempt 1 waits up to 0.5 s, attempt 2 up to 1 s. */
  baseMs: number;
  /** 10 s: longer than that and the next scheduled poll is the better retry. */
  capMs: number;
  /** A Retry-After longer than 60 s is waited for 60 s at most; the breaker handles longer sulks. */
  retryAfterCapMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = {
  attempts: 3,
  baseMs: 500,
  capMs: 10_000,
  retryAfterCapMs: 60_000,
};

export interface RetryDeps {
  random: () => number;
  sleep: (ms: number) => Promise<void>;
}

export const realRetryDeps: RetryDeps = {
  random: Math.random,
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/** Full-jitter delay before retry number `retry` (1 for the first retry). */
export function jitterDelay(retry: number, policy: RetryPolicy, random: () => number): number {
  return random() * Math.min(policy.capMs, policy.baseMs * 2 ** (retry - 1));
}

/** Retry-After as milliseconds: delta-seconds or an HTTP date; undefined when absent or bad. */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

export interface AttemptOutcome {
  code: FetchCode;
  retryAfterMs?: number;
}

/**
 * The wait before retry number `retry`, or null when this outcome must not be retried: only 429,
 * 5xx and timeouts are retried; any other 4xx is an answer, and asking again gets the same one.
 */
export function retryDelay(
  outcome: AttemptOutcome,
  retry: number,
  policy: RetryPolicy,
  random: () => number,
): number | null {
  if (!isRetryable(outcome.code) || retry >= policy.attempts) return null;
  if (outcome.retryAfterMs !== undefined)
    return Math.min(outcome.retryAfterMs, policy.retryAfterCapMs);
  return jitterDelay(retry, policy, random);
}

/** Runs `attempt(retryNumber)` until its outcome is final or the attempts are spent. */
export async function withRetry<T extends AttemptOutcome>(
  attempt: (retry: number) => Promise<T>,
  policy: RetryPolicy,
  deps: RetryDeps,
): Promise<T> {
  for (let retry = 0; ; retry++) {
    const outcome = await attempt(retry);
    const delay = retryDelay(outcome, retry + 1, policy, deps.random);
    if (delay === null) return outcome;
    await deps.sleep(delay);
  }
}
