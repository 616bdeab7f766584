import type { Clock } from "@/lib/backoff";
import type { NextRun } from "../reschedule";
import type { JobRetryPolicy } from "../retryPolicy";
import type { ClaimedJob } from "../types";
import type { WorkerCounters } from "../workerState";

/** What a handler may ask for instead of plain completion. */
export type JobOutcome = undefined | { reschedule: NextRun };

export interface JobContext {
  /** Aborted when the lease is lost (taken over, or the database unreachable longer than the
   *  lease) or the worker stops past its deadline: stop and make no further effects. */
  readonly signal: AbortSignal;
}

// biome-ignore lint/suspicious/noConfusingVoidType: a handler that returns nothing completes its job
export type JobHandler = (job: ClaimedJob, context: JobContext) => Promise<JobOutcome | void>;

/** Thrown by a handler for a fault retrying cannot fix: the job is parked at once. */
export class PermanentJobError extends Error {
  constructor(
    message: string,
    readonly code = "permanent",
  ) {
    super(message);
    this.name = "PermanentJobError";
  }
}

export interface QueueOptions {
  handler: JobHandler;
  /** Jobs of this queue run at once in this process. */
  concurrency?: number;
  /** Jobs claimed per statement (at most the free slots). */
  batchSize?: number;
  leaseSeconds?: number;
  retry?: JobRetryPolicy;
  /** The host a job is about, for its failure fingerprint. */
  hostOf?: (job: ClaimedJob) => string | undefined;
  /**
   * Jobs that run until stopped (watching a stream): stop() aborts them at once and hands
   * them back, instead of waiting out the deadline for jobs that will not finish on their own.
   */
  runsUntilStopped?: boolean;
  /**
   * Told after each report how many worker processes serve this queue now, this one included:
   * what a per-process share of a limit every process keeps together divides by.
   */
  onPeers?: (processes: number) => void;
}

export interface QueueWorkerOptions {
  queues: Record<string, QueueOptions>;
  /** Defaults to host:pid:random. */
  workerId?: string;
  /** How often an idle queue looks for due jobs (enqueues also wake it through NOTIFY). */
  pollMs?: number;
  /** How often this process sweeps expired leases (every process does; it is safe). */
  sweepMs?: number;
  /** How often the worker's state row is written. */
  reportMs?: number;
  /** How often this process archives expired dead letters and trims old history. */
  housekeepingMs?: number;
  deadLetterTtlDays?: number;
  /** Time for the loops (tests); the system clock by default. */
  clock?: Clock;
}

export interface QueueWorker {
  id: string;
  counters(): Readonly<WorkerCounters>;
  /** Jobs held now, by queue. */
  inFlight(): Record<string, number>;
  /**
   * Stops claiming, lets jobs in flight finish until `deadlineMs`, then aborts the rest and
   * releases their leases (due at once, for another worker), and marks the worker stopped.
   */
  stop(deadlineMs?: number): Promise<void>;
}
