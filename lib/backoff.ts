import { sleep as realSleep } from "./sleep";

/**
 * The one retry/back-off helper. Every loop that waits after a failure (a fetch retried within a
 * poll, a stream reconnecting, the queue worker backing off a lost database, a failed job's next
 * attempt, LISTEN reconnecting) takes its delay from here, so "how long do we wait" has one answer
 * and one test.
 *
 * Full jitter (AWS Architecture Blog, "Exponential Backoff And Jitter"): the n-th wait is
 * random() · min(cap, base · 2^(n-1)). When many workers fail on the same thing in the same
 * second (a database restart, a source down during breaking news), plain exponential back-off
 * retries in lock-step waves; full jitter spreads them uniformly over [0, ceiling]. `jitter:
 * "none"` gives the ceiling itself, for loops whose waits a human reads (a queue's retry
 * schedule is shown on the dashboard; its spread comes from the jobs' own due times).
 *
 * Time is injected (a Clock): tests run the loops without waiting and with a chosen random().
 */
export interface BackoffPolicy {
  /** The first wait's ceiling. */
  baseMs: number;
  /** No wait is longer than this. */
  capMs: number;
  /** "full" (default): uniform in [0, ceiling]; "none": the ceiling. */
  jitter?: "full" | "none";
}

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Waits `ms`, or less when `signal` aborts (resolves then; never rejects). */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** Uniform in [0, 1). */
  random(): number;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: realSleep,
  random: Math.random,
};

/** The wait before retry number `retry` (1 for the first retry). */
export function backoffDelay(
  retry: number,
  policy: BackoffPolicy,
  random: () => number = Math.random,
): number {
  const exponent = Math.max(0, Math.min(retry - 1, 52)); // 2^53 ms is past any cap
  const ceiling = Math.min(policy.capMs, policy.baseMs * 2 ** exponent);
  return policy.jitter === "none" ? ceiling : random() * ceiling;
}

/**
 * A loop's failure streak: `wait()` after a failure sleeps the next delay (growing with the
 * streak), `reset()` after a success starts it over. One per loop; not shared between loops.
 */
export class Backoff {
  private streak = 0;

  constructor(
    private readonly policy: BackoffPolicy,
    private readonly clock: Clock = systemClock,
  ) {}

  /** Failures since the last reset. */
  get failures(): number {
    return this.streak;
  }

  /** Counts a failure and returns the delay to wait before trying again. */
  next(): number {
    this.streak++;
    return backoffDelay(this.streak, this.policy, () => this.clock.random());
  }

  /** Counts a failure and waits its delay (less when `signal` aborts). Returns the delay. */
  async wait(signal?: AbortSignal): Promise<number> {
    const delay = this.next();
    await this.clock.sleep(delay, signal);
    return delay;
  }

  reset(): void {
    this.streak = 0;
  }

  /** Starts the streak at `failures` (a stream that was up a while restarts at 1, not 0). */
  restartAt(failures: number): void {
    this.streak = Math.max(0, failures);
  }
}

export interface RetryOptions<T> {
  /** Attempts in all, the first included. */
  attempts: number;
  policy: BackoffPolicy;
  /**
   * Whether to try again after this outcome, and how long to wait: null to stop (return the
   * outcome, or throw the error), undefined for the policy's back-off, a number to wait exactly
   * that (Retry-After). Defaults to: retry every thrown error, accept every value.
   */
  decide?: (outcome: { value: T } | { error: unknown }, retry: number) => number | null | undefined;
  clock?: Clock;
  signal?: AbortSignal;
}

/**
 * Runs `attempt(retry)` (0 for the first call) until `decide` says stop or the attempts are
 * spent; returns the last value or throws the last error. An aborted signal stops between tries.
 */
export async function retry<T>(
  attempt: (retry: number) => Promise<T>,
  options: RetryOptions<T>,
): Promise<T> {
  const clock = options.clock ?? systemClock;
  const decide = options.decide ?? ((o) => ("error" in o ? undefined : null));
  for (let n = 0; ; n++) {
    let outcome: { value: T } | { error: unknown };
    try {
      outcome = { value: await attempt(n) };
    } catch (error) {
      outcome = { error };
    }
    const last = n + 1 >= options.attempts || options.signal?.aborted;
    const verdict = last ? null : decide(outcome, n + 1);
    if (verdict === null) {
      if ("error" in outcome) throw outcome.error;
      return outcome.value;
    }
    const delay = verdict ?? backoffDelay(n + 1, options.policy, () => clock.random());
    await clock.sleep(delay, options.signal);
  }
}
