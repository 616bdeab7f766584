import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { systemClock } from "@/lib/backoff";
import type { Database, Unlisten } from "@/lib/db";
import { emit } from "@/lib/events";
import { logger } from "@/lib/logger";
import { logQueueLifecycle } from "./lifecycleLog";
import { release } from "./release";
import type { Lease } from "./types";
import { JOBS_CHANNEL } from "./wakeQueues";
import { claimLoop } from "./worker/claimLoop";
import { Completions } from "./worker/completions";
import { type Running, WorkerContext } from "./worker/context";
import { heartbeater } from "./worker/heartbeater";
import { runJob } from "./worker/runJob";
import type { QueueWorker, QueueWorkerOptions } from "./worker/types";
import { housekeeper, report, reporter, sweeper, tellPeers } from "./worker/upkeep";
import { Wake } from "./worker/wake";
import { workerStopped } from "./workerState";

export type {
  JobContext,
  JobHandler,
  JobOutcome,
  QueueOptions,
  QueueWorker,
  QueueWorkerOptions,
} from "./worker/types";
export { PermanentJobError } from "./worker/types";

/**
 * Runs queues' handlers on leased jobs. Its parts, each in worker/: a claim loop per queue (up
 * to the free slots per statement, two statements in flight), the completion flusher (batches),
 * a heartbeater per queue (a third of the lease), the sweeper and housekeeper, and the reporter
 * (queue_workers). What happens to jobs is emitted (job:*); logs (lifecycleLog.ts) and metrics
 * subscribe. A lost database is retried with growing pauses (lib/backoff); leases it cannot
 * extend for longer than the lease are given up, since the sweeper may have handed them on.
 */
export async function startQueueWorker(
  db: Database,
  options: QueueWorkerOptions,
): Promise<QueueWorker> {
  const id = options.workerId ?? `${hostname()}:${process.pid}:${randomBytes(3).toString("hex")}`;
  const clock = options.clock ?? systemClock;
  const ctx = new WorkerContext(db, id, clock, logger().child({ part: "queue", worker: id }));
  const queues = Object.keys(options.queues);
  const reportMs = options.reportMs ?? 5_000;
  const completions = new Completions(ctx);
  const stopping = new AbortController(); // no more claims, sweeps, housekeeping
  const halting = new AbortController(); // heartbeats and reports too: the worker is done
  const unsubscribeLogs = logQueueLifecycle(id, ctx.log);

  const wakes = new Map(queues.map((queue) => [queue, new Wake(clock)]));
  for (const [queue, wake] of wakes) ctx.whenFreed(queue, wake.wake);
  let unlisten: Unlisten | null = null;
  try {
    unlisten = await db.listen(JOBS_CHANNEL, (queue) => wakes.get(queue)?.news());
  } catch (err) {
    ctx.log.warn({ err }, "cannot LISTEN for new jobs; polling only");
  }

  await report(ctx, queues, stopping.signal);
  await warmPool(db);
  const loops = [
    ...Object.entries(options.queues).map(([queue, q]) =>
      heartbeater(ctx, queue, q.leaseSeconds ?? 30, halting.signal),
    ),
    sweeper(ctx, options.queues, options.sweepMs ?? 5_000, stopping.signal, (queue) =>
      wakes.get(queue)?.news(),
    ),
    housekeeper(
      ctx,
      options.housekeepingMs ?? 10 * 60_000,
      options.deadLetterTtlDays,
      stopping.signal,
    ),
    reporter(ctx, options.queues, reportMs, stopping.signal, halting.signal),
  ];
  const consumers = Object.entries(options.queues).map(([queue, q]) => {
    const concurrency = q.concurrency ?? 4;
    const settings = {
      queue,
      concurrency,
      batchSize: q.batchSize ?? concurrency,
      leaseSeconds: q.leaseSeconds ?? 30,
      pollMs: options.pollMs ?? 1_000,
    };
    const claiming = () =>
      claimLoop(ctx, settings, wakes.get(queue) as Wake, stopping.signal, (job) =>
        runJob(ctx, job, q, completions),
      );
    // PGlite is one process's by construction: its share is the whole.
    if (!q.onPeers || db.kind === "pglite") return claiming();
    // A queue sharing a limit among its processes claims only once it knows its share: after
    // two reports, every process already serving it has counted this one in (each counts at
    // every report), so none of them still spends a share this one also takes.
    return clock
      .sleep(2 * reportMs, stopping.signal)
      .then(() => tellPeers(ctx, { [queue]: q }, reportMs))
      .then(() => (stopping.signal.aborted ? undefined : claiming()));
  });
  ctx.log.info({ queues }, "queue worker started");
  emit("queue:started", { workerId: id, queues });

  /** Aborts handlers and releases their leases (due at once, for another worker). */
  const handBack = async (jobs: Running[]) => {
    if (jobs.length === 0) return;
    for (const r of jobs) r.abort("worker stopping");
    const byQueue = new Map<string, Lease[]>();
    for (const r of jobs)
      byQueue.set(r.job.queue, [...(byQueue.get(r.job.queue) ?? []), r.job.lease]);
    for (const [queue, leases] of byQueue) {
      try {
        const released = await release(db, id, leases);
        emit("job:released", { queue, count: released.length, workerId: id });
      } catch (err) {
        ctx.log.error({ err }, "could not release leases at stop; they expire and are swept");
      }
    }
    for (const r of jobs) ctx.forget(r);
  };

  return {
    id,
    counters: () => ({ ...ctx.counters, inFlight: ctx.running.size }),
    inFlight: () => {
      const byQueue: Record<string, number> = {};
      for (const queue of queues) if (ctx.held(queue) > 0) byQueue[queue] = ctx.held(queue);
      return byQueue;
    },
    stop: async (deadlineMs = 10_000) => {
      if (stopping.signal.aborted) return;
      stopping.abort();
      await Promise.all(consumers);
      await report(ctx, queues, stopping.signal);
      // Jobs that only end when stopped are handed back now; the rest get until the deadline.
      const running = () => [...ctx.running.values()];
      await handBack(running().filter((r) => options.queues[r.job.queue]?.runsUntilStopped));
      const deadline = clock.now() + deadlineMs;
      while (ctx.running.size > 0 && clock.now() < deadline) {
        await completions.flush();
        await clock.sleep(Math.min(50, Math.max(1, deadline - clock.now())));
      }
      await completions.flush().catch(() => undefined);
      // Past the deadline: abort what is left and hand it back now, rather than let it sit out
      // its lease.
      await handBack(running().filter((r) => !r.finished));
      halting.abort();
      await Promise.all(loops);
      await unlisten?.().catch(() => undefined);
      await workerStopped(db, id, ctx.counters).catch((err) =>
        ctx.log.warn({ err }, "could not record the worker as stopped"),
      );
      ctx.log.info(ctx.counters, "queue worker stopped");
      unsubscribeLogs();
    },
  };
}

export type { Lease };

/**
 * Opens the pooled connections the first claims will use (two claims and a completion in
 * flight), so the first batch after an idle start does not wait for connects and their
 * authentication round trips. Best effort: a connect that fails now is retried by the claim.
 */
async function warmPool(db: Database): Promise<void> {
  const pool = db.pool;
  if (!pool) return;
  const n = Math.min(3, pool.options.max ?? 3) - pool.totalCount;
  const clients = await Promise.all(
    Array.from({ length: Math.max(0, n) }, () => pool.connect().catch(() => null)),
  );
  for (const c of clients) c?.release();
}
