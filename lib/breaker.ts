/** The per-source breaker's settings, shared by its operations. */
export interface BreakerConfig {
  /**
   * Consecutive failed requests before the breaker opens, counted once per poll after its body is
   * read (a 200 that did not parse is one; a 503 poll with its two retries is three). 5: two polls
   * whose retries all failed, or five single failures in a row with no success between, is a
   * source that is down; a failing source is polled again within 30 s (lib/schedule/nextPoll.ts), so
   * it opens within about 2 minutes, a source that never answers included (docs/decisions/012).
   */
  threshold: number;
  /**
   * How long it stays open before one probe may go. 60 s ("kilkadziesiąt sekund", seed 003):
   * long enough to stop hammering a dead endpoint, short enough to notice it is back within a
   * poll interval or two.
   */
  coolDownMs: number;
  /**
   * The probe's lease. 45 s: longer than one attempt's 30 s total timeout plus its rate-budget
   * wait, so a live probe is never overtaken; a probe that hung or whose worker died frees the
   * slot 45 s later instead of leaving the breaker half-open forever.
   */
  probeLeaseMs: number;
}

export const DEFAULT_BREAKER: BreakerConfig = {
  threshold: 5,
  coolDownMs: 60_000,
  probeLeaseMs: 45_000,
};

export type BreakerState = "closed" | "open" | "half_open";
