/**
 * What a worker holds while it runs a job. Every write a worker makes about its job (complete,
 * fail, dead-letter, heartbeat, release, reschedule) matches all three: a worker whose lease was
 * swept and claimed again by another holds a stale attempt or token and changes nothing.
 */
export interface Lease {
  /** jobs.id as text (a bigint). */
  id: string;
  attempt: number;
  token: string;
}

export interface ClaimedJob<P = Record<string, unknown>> {
  lease: Lease;
  queue: string;
  key: string | null;
  payload: P;
  sourceId: string | null;
  priority: number;
  maxAttempts: number;
  /** How long the job was due before this claim, by the database clock. */
  waitMs: number;
  /** The previous attempt's lease ran out (its worker died or stalled). */
  reclaimed: boolean;
}

/** How a failure is kept: everything needed to understand it later without the logs. */
export interface JobError {
  code: string;
  message: string;
  stack?: string;
  /** The host the work was about, when there is one (part of the fingerprint). */
  host?: string;
  /**
   * What the stage knew of the failure beyond its message, as JSON (the extract stage: every
   * provider's attempt with its raw answer and errors), at most 16,000 characters. Not part of
   * the fingerprint.
   */
  detail?: unknown;
}
