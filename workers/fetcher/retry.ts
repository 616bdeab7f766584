import { type Clock, retry } from "@/lib/backoff";
import { type FetchCode, isRetryable } from "./classify";

/**
 * Retries within one poll. The delays are lib/backoff's full jitter; what this adds is which
 * outcomes are worth another try and the precedence of the source's own Retry-After.
 */
export interface FetchRetryPolicy {
  /** Attempts in all, the first included. 3: a blip is retried twice; a dead source is not hammered. */
  attempts: number;
  /** 500 ms, doubling: attempt 1 waits up to 0.5 s, attempt 2 up to 1 s. */
  baseMs: number;
  /** 10 s: longer than that and the next scheduled poll is the better retry. */
  capMs: number;
  /** A Retry-After longer than 60 s is waited for 60 s at most; the breaker handles longer sulks. */
  retryAfterCapMs: number;
}

export const DEFAULT_FETCH_RETRY: FetchRetryPolicy = {
  attempts: 3,
  baseMs: 500,
  capMs: 10_000,
  retryAfterCapMs: 60_000,
};

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
 * After this outcome: null to stop (only 429, 5xx and timeouts are retried; any other 4xx is an
 * answer, and asking again gets the same one), the source's Retry-After (capped) when it gave
 * one, undefined for the policy's back-off.
 */
export function nextTry(
  outcome: AttemptOutcome,
  policy: FetchRetryPolicy,
): number | null | undefined {
  if (!isRetryable(outcome.code)) return null;
  if (outcome.retryAfterMs !== undefined)
    return Math.min(outcome.retryAfterMs, policy.retryAfterCapMs);
  return undefined;
}

/** Runs `attempt(retryNumber)` until its outcome is final or the attempts are spent. */
export function retryRequest<T extends AttemptOutcome>(
  attempt: (retry: number) => Promise<T>,
  policy: FetchRetryPolicy,
  clock: Clock,
): Promise<T> {
  return retry(attempt, {
    attempts: policy.attempts,
    policy: { baseMs: policy.baseMs, capMs: policy.capMs },
    clock,
    // An attempt never throws (attemptGet turns every failure into a code).
    decide: (o) => ("error" in o ? null : nextTry(o.value, policy)),
  });
}
