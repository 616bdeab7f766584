import { backoffDelay } from "@/lib/backoff";

/**
 * When to poll a feed or page next. Hot sources (news just arrived, or a breaking item) are
 * polled faster; a source that asks for less (Cache-Control max-age, RSS <ttl>, Retry-After) is
 * obeyed; a failing source is checked again soon, so its breaker decides within minutes. None of
 * this bypasses the breaker: the fetch is still admitted by it.
 */
export interface PollFacts {
  baseSeconds: number;
  /** Content arrived recently or a breaking item is live. */
  hot: boolean;
  /** Consecutive failed polls. */
  failures: number;
  retryAfterSeconds?: number | null;
  maxAgeSeconds?: number | null;
  ttlMinutes?: number | null;
  /**
   * How long the poll that just ended took, fetch to durable write. The cadence runs from one
   * poll's start to the next's, so a poll that waited on a busy writer does not push every later
   * one back by its wait (under seed 003's spike a 15 s page cadence became 25-27 s that way).
   */
  elapsedSeconds?: number;
  /**
   * A WebSub subscription is live (workers/websub): the hub pushes news, so polling is only the
   * safety net and runs at PUSHED_POLL_FACTOR × the interval (hot spells do not speed it up).
   */
  pushed?: boolean;
}

/**
 * While a hub pushes, a feed is polled 4× less often: a push lost (hub down, lease lapsed
 * unnoticed) is still caught within four intervals (2 min at the simulator's 30 s, 20 min at the
 * 300 s default) …
 */
export const PUSHED_POLL_FACTOR = 4;
/** … but never less often than hourly, nor less often than the configured interval. */
export const PUSHED_POLL_MAX_SECONDS = 3600;

/** Never poll more often than this, hot or not: 15 s is already four polls a minute per source. */
export const MIN_POLL_SECONDS = 15;
/** A source's own hint may slow us down, but not beyond 6 h: news gets stale. */
export const MAX_HINT_SECONDS = 6 * 3600;
/**
 * A failing source is polled again within 30 s, whatever its interval, until its breaker decides
 * (docs/decisions/012): the breaker opens after 5 failed polls in a row, so the verdict takes at
 * most 4 gaps × 33 s (30 s + 10 % jitter) = 132 s plus the polls themselves (a 503 poll waits
 * ≤ 1.5 s between its 3 attempts), inside the 3 minutes we promise. Backing off here instead
 * (base × 2, 4, 8, 8: 11 min at a 30 s base, 110 min at the 300 s default) kept a dead source
 * out of the breaker for that long; once open, the breaker is what spaces the requests.
 */
export const FAILING_RECHECK_SECONDS = 30;

/** The least pause after a poll, however long it took: a slow source is not polled back to back. */
export const MIN_PAUSE_SECONDS = 1;

/**
 * Seconds from now to the next poll: the cadence (hot, base or failing), jittered, counted from
 * the ended poll's start (so minus `elapsedSeconds`), never under MIN_POLL_SECONDS start to start;
 * a source's own hint (max-age, <ttl>, Retry-After) counts from now, as it was given.
 */
export function nextPollSeconds(f: PollFacts, random: () => number = Math.random): number {
  let delay = f.pushed
    ? Math.max(f.baseSeconds, Math.min(f.baseSeconds * PUSHED_POLL_FACTOR, PUSHED_POLL_MAX_SECONDS))
    : f.hot
      ? Math.max(MIN_POLL_SECONDS, f.baseSeconds / 4)
      : f.baseSeconds;
  if (f.failures > 0) {
    // base · 2^failures, at most 30 s (in seconds here; the ±10 % below is the only jitter).
    const policy = {
      baseMs: f.baseSeconds * 2,
      capMs: FAILING_RECHECK_SECONDS,
      jitter: "none",
    } as const;
    delay = backoffDelay(f.failures, policy);
  }
  let hint = Math.max(f.maxAgeSeconds ?? 0, (f.ttlMinutes ?? 0) * 60);
  if (hint > 0) delay = Math.max(delay, Math.min(hint, MAX_HINT_SECONDS));
  if (f.retryAfterSeconds) delay = Math.max(delay, Math.min(f.retryAfterSeconds, MAX_HINT_SECONDS));
  hint = Math.min(Math.max(hint, f.retryAfterSeconds ?? 0), MAX_HINT_SECONDS);
  // ±10% so sources configured alike do not poll in lockstep (seed 003: synchronised retries
  // arrive as one wave)
  const jittered = delay * (0.9 + 0.2 * random());
  const fromStart = Math.max(MIN_POLL_SECONDS, Math.round(jittered));
  const elapsed = Math.max(0, f.elapsedSeconds ?? 0);
  return Math.max(MIN_PAUSE_SECONDS, Math.round(fromStart - elapsed), Math.ceil(hint));
}

/** Cache-Control max-age in seconds, if the response gave one. */
export function maxAgeFrom(cacheControl: string | null | undefined): number | null {
  const m = /(?:^|,)\s*max-age\s*=\s*"?(\d+)"?/i.exec(cacheControl ?? "");
  return m ? Number(m[1]) : null;
}
