import type { Logger } from "pino";
import { Backoff, type BackoffPolicy, type Clock } from "@/lib/backoff";
import type { Database } from "@/lib/db";
import { emit } from "@/lib/events";
import type { ClaimedJob } from "../types";
import type { WorkerCounters } from "../workerState";

/**
 * A lost database is retried from 100 ms, doubling to 5 s: a restart (a few seconds) is noticed
 * within a second of its end, and a long outage costs a query per worker every few seconds.
 */
export const DB_BACKOFF: BackoffPolicy = { baseMs: 100, capMs: 5_000 };

/**
 * A job held by this worker, and the context its handler gets. The AbortController is made only
 * if the handler reads `signal` (a no-op or a quick handler never does): at 20k jobs/s one per
 * job was 9 % of the worker's busy time.
 */
export class Running {
  finished = false;
  readonly startedAt: number;
  private controller: AbortController | undefined;
  private abortedWith: Error | undefined;

  constructor(
    readonly job: ClaimedJob,
    now: number,
  ) {
    this.startedAt = now;
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.abortedWith) this.controller.abort(this.abortedWith);
    }
    return this.controller.signal;
  }

  get aborted(): boolean {
    return this.abortedWith !== undefined;
  }

  abort(reason: string): void {
    if (this.abortedWith) return;
    this.abortedWith = new Error(reason);
    this.controller?.abort(this.abortedWith);
  }
}

/** What the worker's parts share: the jobs held, the database's health, the worker's counters. */
export class WorkerContext {
  readonly running = new Map<string, Running>(); // by job id
  readonly counters: WorkerCounters = {
    claimed: 0,
    completed: 0,
    failed: 0,
    inFlight: 0,
    lastClaimAt: null,
    lastError: null,
    lastErrorAt: null,
  };
  /** The last answer from the database (clock ms). */
  lastDbOk: number;
  private dbDown = false;
  private readonly heldBy = new Map<string, number>();
  private readonly busyBy = new Map<string, number>();
  private readonly onFreed = new Map<string, () => void>();

  constructor(
    readonly db: Database,
    readonly id: string,
    readonly clock: Clock,
    readonly log: Logger,
  ) {
    this.lastDbOk = clock.now();
  }

  /** Jobs of `queue` held now. */
  held(queue: string): number {
    return this.heldBy.get(queue) ?? 0;
  }

  /**
   * Handlers of `queue` running now: the claim loop's budget. A job whose handler has returned
   * gives its slot back at once, while its completion is still being written: waiting for the
   * write kept a claimed batch's slots taken for the length of a DELETE of 1,000 (10-20 ms on
   * this machine), one more round trip per batch in which the worker sat idle.
   */
  busy(queue: string): number {
    return this.busyBy.get(queue) ?? 0;
  }

  /** Calls `wake` whenever a slot of `queue` is free (a handler returned, a job let go). */
  whenFreed(queue: string, wake: () => void): void {
    this.onFreed.set(queue, wake);
  }

  hold(job: ClaimedJob): Running {
    const r = new Running(job, this.clock.now());
    this.running.set(job.lease.id, r);
    this.heldBy.set(job.queue, this.held(job.queue) + 1);
    this.busyBy.set(job.queue, this.busy(job.queue) + 1);
    this.counters.inFlight = this.running.size;
    return r;
  }

  /** Whether `r` is still this worker's to act on (not given up, not finished elsewhere). */
  holds(r: Running): boolean {
    return this.running.get(r.job.lease.id) === r;
  }

  /** `r`'s handler has returned: its slot is free; its lease is held until its outcome is written. */
  handlerDone(r: Running): void {
    if (!this.holds(r) || r.finished) return;
    r.finished = true;
    this.busyBy.set(r.job.queue, this.busy(r.job.queue) - 1);
    this.onFreed.get(r.job.queue)?.();
  }

  forget(r: Running): void {
    if (!this.holds(r)) return;
    this.running.delete(r.job.lease.id);
    this.heldBy.set(r.job.queue, this.held(r.job.queue) - 1);
    this.counters.inFlight = this.running.size;
    if (r.finished) return;
    r.finished = true;
    this.busyBy.set(r.job.queue, this.busy(r.job.queue) - 1);
    this.onFreed.get(r.job.queue)?.();
  }

  /** The lease is no longer this worker's: the handler is aborted and its job let go. */
  giveUp(r: Running, reason: string): void {
    if (!this.holds(r)) return;
    r.abort(reason);
    this.forget(r);
    emit("job:lost", { queue: r.job.queue, reason, workerId: this.id, jobId: r.job.lease.id });
  }

  noteError(err: unknown, what: string): void {
    this.counters.lastError = `${what}: ${(err as Error)?.message ?? err}`.slice(0, 2000);
    this.counters.lastErrorAt = new Date(this.clock.now());
  }

  dbFailed(err: unknown, what: string): void {
    this.noteError(err, what);
    if (!this.dbDown) this.log.error({ err }, `database unreachable (${what}); backing off`);
    this.dbDown = true;
  }

  dbWorked(): void {
    const now = this.clock.now();
    if (this.dbDown) this.log.info({ downForMs: now - this.lastDbOk }, "database reachable again");
    this.dbDown = false;
    this.lastDbOk = now;
  }

  /**
   * Writes something about a held job until it is written or the job is let go (given up when
   * the database stayed away longer than the lease); undefined then.
   */
  async persist<T>(r: Running, what: string, write: () => Promise<T>): Promise<T | undefined> {
    const backoff = new Backoff(DB_BACKOFF, this.clock);
    while (this.holds(r)) {
      try {
        const value = await write();
        this.dbWorked();
        return value;
      } catch (err) {
        this.dbFailed(err, what);
        await backoff.wait();
      }
    }
    return undefined;
  }
}

/**
 * Runs `tick` every `ms` until `signal` aborts, by the injected clock; a tick that throws is
 * noted, never fatal. Ticks do not overlap: the next wait starts when a tick has returned.
 */
export async function every(
  ctx: WorkerContext,
  ms: number,
  signal: AbortSignal,
  what: string,
  tick: () => Promise<void> | void,
): Promise<void> {
  for (;;) {
    await ctx.clock.sleep(ms, signal);
    if (signal.aborted) return;
    try {
      await tick();
    } catch (err) {
      ctx.noteError(err, what);
    }
  }
}
