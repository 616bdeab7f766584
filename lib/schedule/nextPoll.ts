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
}

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

export function nextPollSeconds(f: PollFacts, random: () => number = Math.random): number {
  let delay = f.hot ? Math.max(MIN_POLL_SECONDS, f.baseSeconds / 4) : f.baseSeconds;
  if (f.failures > 0) {
    // base · 2^failures, at most 30 s (in seconds here; the ±10 % below is the only jitter).
    const policy = {
      baseMs: f.baseSeconds * 2,
      capMs: FAILING_RECHECK_SECONDS,
      jitter: "none",
    } as const;
    delay = backoffDelay(f.failures, policy);
  }
  const hint = Math.max(f.maxAgeSeconds ?? 0, (f.ttlMinutes ?? 0) * 60);
  if (hint > 0) delay = Math.max(delay, Math.min(hint, MAX_HINT_SECONDS));
  if (f.retryAfterSeconds) delay = Math.max(delay, Math.min(f.retryAfterSeconds, MAX_HINT_SECONDS));
  // ±10% so sources configured alike do not poll in lockstep (seed 003: synchronised retries
  // arrive as one wave)
  const jittered = delay * (0.9 + 0.2 * random());
  return Math.max(MIN_POLL_SECONDS, Math.round(jittered));
}

/** Cache-Control max-age in seconds, if the response gave one. */
export function maxAgeFrom(cacheControl: string | null | undefined): number | null {
  const m = /(?:^|,)\s*max-age\s*=\s*"?(\d+)"?/i.exec(cacheControl ?? "");
  return m ? Number(m[1]) : null;
}
