/** The per-source breaker's settings, shared by its operations. */
export interface BreakerConfig {
  /**
   * Consecutive failed polls before the breaker opens (a 200 that did not parse is one). 5: each
   * poll already retried its blips (3 attempts), so five failed polls in a row is a source that is
   * down; a failing source is polled again within 30 s (schedule/nextPoll.ts), so they take about
   * 2 minutes (docs/decisions/012).
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
