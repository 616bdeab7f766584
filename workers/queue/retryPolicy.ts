/** How long a failed job waits before its next attempt: base · 2^(attempt-1), jittered, capped. */
export interface RetryPolicy {
  baseDelaySeconds: number;
  maxDelaySeconds: number;
}

export const defaultRetryPolicy: RetryPolicy = { baseDelaySeconds: 5, maxDelaySeconds: 3600 };
