import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type { Database, Unlisten } from "@/lib/db";
import { emit } from "@/lib/events";
import { logger } from "@/lib/logger";
import { sleep } from "@/lib/sleep";
import { claim } from "./claim";
import { complete } from "./complete";
import { JOBS_CHANNEL } from "./enqueue";
import { fail } from "./fail";
import { heartbeat } from "./heartbeat";
import { housekeeping } from "./housekeeping";
import { toJobError } from "./jobError";
import { release } from "./release";
import { type NextRun, reschedule } from "./reschedule";
import { defaultRetryPolicy, type RetryPolicy } from "./retryPolicy";
import { sweep } from "./sweep";
import type { ClaimedJob, Lease } from "./types";
import { type WorkerCounters, workerSeen, workerStopped } from "./workerState";

/** What a handler may ask for instead of plain completion. */
export type JobOutcome = undefined | { reschedule: NextRun };

export interface JobContext {
  /** Aborted when the lease is lost (taken over, or the database unreachable longer than the
   *  lease) or the worker stops past its deadline: stop and make no further effects. */
  signal: AbortSignal;
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
  retry?: RetryPolicy;
  /** The host a job is about, for its failure fingerprint. */
  hostOf?: (job: ClaimedJob) => string | undefined;
  /**
   * Jobs that run until stopped (watching a stream): stop() aborts them at once and hands
   * them back, instead of waiting out the deadline for jobs that will not finish on their own.
   */
  runsUntilStopped?: boolean;
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

interface Running {
  job: ClaimedJob;
  abort: AbortController;
  /** The handler finished; its completion waits to be written. */
  finished: boolean;
}

const MAX_BACKOFF_MS = 5_000;

/**
 * Runs queues' handlers on leased jobs: claims up to the free slots in one statement, runs each
 * handler with an abort signal, heartbeats every held lease at a third of the lease, writes
 * completions in batches, records failures (retry or dead letter), sweeps expired leases, and
 * reports its state to queue_workers. A lost database makes it log, back off and retry; held
 * leases it cannot extend for longer than the lease are given up (their handlers aborted), since
 * the sweeper may already have handed them to another worker.
 */
export async function startQueueWorker(
  db: Database,
  options: QueueWorkerOptions,
): Promise<QueueWorker> {
  const id = options.workerId ?? `${hostname()}:${process.pid}:${randomBytes(3).toString("hex")}`;
  const log = logger().child({ part: "queue", worker: id });
  const pollMs = options.pollMs ?? 1_000;
  const counters: WorkerCounters = {
    claimed: 0,
    completed: 0,
    failed: 0,
    inFlight: 0,
    lastClaimAt: null,
    lastError: null,
    lastErrorAt: null,
  };
  const running = new Map<string, Running>(); // by job id
  const stopping = new AbortController();
  const wakers = new Map<string, () => void>();
  let lastDbOk = Date.now();
  let dbDown = false;

  const noteError = (err: unknown, what: string) => {
    counters.lastError = `${what}: ${(err as Error)?.message ?? err}`.slice(0, 2000);
    counters.lastErrorAt = new Date();
  };
  const dbFailed = (err: unknown, what: string) => {
    noteError(err, what);
    if (!dbDown) log.error({ err }, `database unreachable (${what}); backing off`);
    dbDown = true;
  };
  const dbWorked = () => {
    if (dbDown) log.info({ downForMs: Date.now() - lastDbOk }, "database reachable again");
    dbDown = false;
    lastDbOk = Date.now();
  };

  // Completions are written in batches: a handler that finished adds its lease here, and one
  // statement finishes everything that piled up meanwhile.
  let pendingCompletions: Running[] = [];
  let flushing: Promise<void> | null = null;
  const flushCompletions = (): Promise<void> => {
    if (flushing) return flushing;
    if (pendingCompletions.length === 0) return Promise.resolve();
    flushing = (async () => {
      let backoff = 100;
      while (pendingCompletions.length > 0) {
        const batch = pendingCompletions;
        pendingCompletions = [];
        try {
          const done = new Set(
            await complete(
              db,
              batch.map((r) => r.job.lease),
            ),
          );
          dbWorked();
          for (const r of batch) {
            if (done.has(r.job.lease.id)) counters.completed++;
            else log.warn({ job: r.job.lease }, "lease lost before completion; not completed here");
            forget(r);
          }
        } catch (err) {
          dbFailed(err, "complete");
          // Keep them: they are written when the database is back, unless their leases were
          // given up meanwhile (then another worker runs them again: at least once).
          pendingCompletions = [
            ...batch.filter((r) => running.has(r.job.lease.id)),
            ...pendingCompletions,
          ];
          await sleep(backoff);
          backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
        }
      }
    })().finally(() => {
      flushing = null;
    });
    return flushing;
  };

  const forget = (r: Running) => {
    if (running.get(r.job.lease.id) === r) running.delete(r.job.lease.id);
    counters.inFlight = running.size;
    wakers.get(r.job.queue)?.();
  };

  const giveUp = (r: Running, reason: string) => {
    log.warn({ job: r.job.lease, queue: r.job.queue, reason }, "lease given up; handler aborted");
    r.abort.abort(new Error(reason));
    forget(r);
  };

  const recordFailure = async (r: Running, err: unknown, queueOptions: QueueOptions) => {
    counters.failed++;
    const error = toJobError(err, queueOptions.hostOf?.(r.job));
    noteError(err, `${r.job.queue} job ${r.job.lease.id}`);
    for (let backoff = 100; running.get(r.job.lease.id) === r; ) {
      try {
        const outcome = await fail(db, id, r.job, error, {
          retry: queueOptions.retry,
          park: err instanceof PermanentJobError,
        });
        dbWorked();
        if (outcome === "dead")
          log.warn({ job: r.job.lease, error }, "job parked as a dead letter");
        break;
      } catch (dbErr) {
        dbFailed(dbErr, "fail");
        await sleep(backoff);
        backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
      }
    }
    forget(r);
  };

  const runJob = (job: ClaimedJob, queueOptions: QueueOptions) => {
    const r: Running = { job, abort: new AbortController(), finished: false };
    running.set(job.lease.id, r);
    counters.inFlight = running.size;
    void (async () => {
      let outcome: JobOutcome | undefined;
      try {
        outcome = (await queueOptions.handler(job, { signal: r.abort.signal })) ?? undefined;
      } catch (err) {
        if (r.abort.signal.aborted) return; // lease given up: whatever it threw is moot
        await recordFailure(r, err, queueOptions);
        return;
      }
      if (r.abort.signal.aborted) return;
      r.finished = true;
      if (outcome?.reschedule) {
        for (let backoff = 100; running.get(job.lease.id) === r; ) {
          try {
            const held = await reschedule(db, job.lease, outcome.reschedule);
            dbWorked();
            if (held) counters.completed++;
            break;
          } catch (err) {
            dbFailed(err, "reschedule");
            await sleep(backoff);
            backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
          }
        }
        forget(r);
      } else {
        pendingCompletions.push(r);
        void flushCompletions();
      }
    })();
  };

  // Heartbeats: every held lease, a third of its lease apart. A lease missing from the answer
  // was swept (and perhaps claimed by another worker): its handler is aborted.
  const heartbeats = Object.entries(options.queues).map(([queue, q]) => {
    const leaseSeconds = q.leaseSeconds ?? 30;
    // One heartbeat at a time: while the database hangs, ticks must not pile up in the pool.
    let beating = false;
    return setInterval(
      () => {
        const held = [...running.values()].filter((r) => r.job.queue === queue);
        if (held.length === 0) return;
        // A lost database may also just not answer (a partition, a frozen server): queries hang
        // instead of failing, so the lease is judged here too, not only when a heartbeat fails.
        if (Date.now() - lastDbOk > leaseSeconds * 1000) {
          dbFailed(new Error(`no answer for ${Date.now() - lastDbOk} ms`), "heartbeat");
          for (const r of held) giveUp(r, "database unreachable longer than the lease");
          return;
        }
        if (beating) return;
        beating = true;
        heartbeat(
          db,
          id,
          held.map((r) => r.job.lease),
          leaseSeconds,
        )
          .then((kept) => {
            dbWorked();
            for (const r of held) {
              if (!kept.has(r.job.lease.id) && running.get(r.job.lease.id) === r) {
                giveUp(r, "lease taken over");
              }
            }
          })
          .catch((err) => {
            dbFailed(err, "heartbeat");
            // Unreachable for longer than the lease: the sweeper may have handed these jobs to
            // another worker already, so this one must stop acting on them.
            if (Date.now() - lastDbOk > leaseSeconds * 1000) {
              for (const r of held)
                if (running.get(r.job.lease.id) === r)
                  giveUp(r, "database unreachable longer than the lease");
            }
          })
          .finally(() => {
            beating = false;
          });
      },
      Math.max(50, (leaseSeconds * 1000) / 3),
    );
  });

  const consume = async (queue: string, q: QueueOptions) => {
    const concurrency = q.concurrency ?? 4;
    const leaseSeconds = q.leaseSeconds ?? 30;
    let backoff = 250;
    while (!stopping.signal.aborted) {
      const held = [...running.values()].filter((r) => r.job.queue === queue).length;
      const free = concurrency - held;
      let claimed = 0;
      let asked = 0;
      if (free > 0) {
        try {
          asked = Math.min(q.batchSize ?? concurrency, free);
          const jobs = await claim(db, queue, id, asked, leaseSeconds);
          emit("lease:reclaimed", { stage: queue, count: jobs.filter((j) => j.reclaimed).length });
          dbWorked();
          backoff = 250;
          claimed = jobs.length;
          if (claimed > 0) {
            counters.claimed += claimed;
            counters.lastClaimAt = new Date();
          }
          for (const job of jobs) {
            if (stopping.signal.aborted) {
              // Claimed as the stop began: hand it straight back.
              await release(db, id, [job.lease]).catch(() => undefined);
            } else runJob(job, q);
          }
        } catch (err) {
          dbFailed(err, "claim");
          await sleep(backoff, stopping.signal);
          backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
          continue;
        }
      }
      // A full batch means more may be due: go again at once. Otherwise wait for a slot, a
      // NOTIFY of new jobs, or the poll interval.
      if (claimed > 0 && claimed === asked && free > claimed) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, pollMs);
        function done() {
          clearTimeout(timer);
          wakers.delete(queue);
          stopping.signal.removeEventListener("abort", done);
          resolve();
        }
        wakers.set(queue, done);
        stopping.signal.addEventListener("abort", done, { once: true });
      });
    }
  };

  /** Aborts handlers and releases their leases (due at once, for another worker). */
  const handBack = async (jobs: Running[]) => {
    if (jobs.length === 0) return;
    for (const r of jobs) r.abort.abort(new Error("worker stopping"));
    try {
      const released = await release(
        db,
        id,
        jobs.map((r) => r.job.lease),
      );
      log.info({ released: released.length }, "leases released at stop");
    } catch (err) {
      log.error({ err }, "could not release leases at stop; they expire and are swept");
    }
    for (const r of jobs) forget(r);
  };

  let unlisten: Unlisten | null = null;
  try {
    unlisten = await db.listen(JOBS_CHANNEL, (queue) => wakers.get(queue)?.());
  } catch (err) {
    log.warn({ err }, "cannot LISTEN for new jobs; polling only");
  }

  // Each of this process's queues is swept with its own retry policy (the workers serving a
  // queue are the ones that sweep it).
  const sweeper = setInterval(() => {
    for (const [queue, q] of Object.entries(options.queues)) {
      sweep(db, q.retry ?? defaultRetryPolicy, 1000, queue)
        .then((swept) => {
          if (swept.returned + swept.parked > 0)
            log.info({ queue, ...swept }, "expired leases swept");
          // What came back is due at once: look now rather than at the next poll.
          if (swept.returned > 0) wakers.get(queue)?.();
        })
        .catch((err) => noteError(err, "sweep"));
    }
  }, options.sweepMs ?? 5_000);

  const upkeep = setInterval(
    () => {
      housekeeping(db, options.deadLetterTtlDays)
        .then((done) => {
          if (done.archived > 0) log.info(done, "dead letters past their TTL archived");
        })
        .catch((err) => noteError(err, "housekeeping"));
    },
    options.housekeepingMs ?? 10 * 60_000,
  );

  const report = (state: "running" | "draining") =>
    workerSeen(db, id, Object.keys(options.queues), state, counters).catch((err) =>
      noteError(err, "report"),
    );
  await report("running");
  const reporter = setInterval(
    () => void report(stopping.signal.aborted ? "draining" : "running"),
    options.reportMs ?? 5_000,
  );

  const consumers = Object.entries(options.queues).map(([queue, q]) => consume(queue, q));
  log.info({ queues: Object.keys(options.queues) }, "queue worker started");

  return {
    id,
    counters: () => ({ ...counters, inFlight: running.size }),
    inFlight: () => {
      const byQueue: Record<string, number> = {};
      for (const r of running.values()) byQueue[r.job.queue] = (byQueue[r.job.queue] ?? 0) + 1;
      return byQueue;
    },
    stop: async (deadlineMs = 10_000) => {
      if (stopping.signal.aborted) return;
      stopping.abort();
      clearInterval(sweeper);
      clearInterval(upkeep);
      await Promise.all(consumers);
      await report("draining");
      // Jobs that only end when stopped are handed back now; the rest get until the deadline.
      const endless = [...running.values()].filter(
        (r) => options.queues[r.job.queue]?.runsUntilStopped,
      );
      await handBack(endless);
      const deadline = Date.now() + deadlineMs;
      while (running.size > 0 && Date.now() < deadline) {
        await flushCompletions();
        await sleep(Math.min(50, Math.max(1, deadline - Date.now())));
      }
      await flushCompletions().catch(() => undefined);
      // Past the deadline: abort what is left and hand it back now, rather than let it sit out
      // its lease.
      await handBack([...running.values()].filter((r) => !r.finished));
      for (const timer of heartbeats) clearInterval(timer);
      clearInterval(reporter);
      await unlisten?.().catch(() => undefined);
      await workerStopped(db, id, counters).catch((err) =>
        log.warn({ err }, "could not record the worker as stopped"),
      );
      log.info(counters, "queue worker stopped");
    },
  };
}

export type { Lease };
