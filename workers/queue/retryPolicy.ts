import { backoffDelay } from "@/lib/backoff";

/**
 * How long a failed job waits before its next attempt: base · 2^(attempt-1), capped (lib/backoff,
 * no jitter: the schedule is shown on the dashboard, and jobs that fail together were due at
 * different times already). The fetcher's in-poll retries have a policy of their own.
 */
export interface JobRetryPolicy {
  baseDelaySeconds: number;
  maxDelaySeconds: number;
}

export const defaultJobRetryPolicy: JobRetryPolicy = { baseDelaySeconds: 5, maxDelaySeconds: 3600 };

/** The wait after failed attempt number `attempt` (1 for the first). */
export function retryDelaySeconds(policy: JobRetryPolicy, attempt: number): number {
  const ms = backoffDelay(attempt, {
    baseMs: policy.baseDelaySeconds * 1000,
    capMs: policy.maxDelaySeconds * 1000,
    jitter: "none",
  });
  return ms / 1000;
}

/**
 * The wait after a lease ran out on attempt number `attempt`: none the first time (the worker
 * died; the job is probably fine), then the retry schedule one step behind, so a job that kills
 * its worker every time degrades into patient retries.
 */
export function expiryDelaySeconds(policy: JobRetryPolicy, attempt: number): number {
  return attempt <= 1 ? 0 : retryDelaySeconds(policy, attempt - 1);
}
