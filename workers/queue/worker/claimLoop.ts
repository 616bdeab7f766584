import { Backoff, type BackoffPolicy } from "@/lib/backoff";
import { emit } from "@/lib/events";
import { claim } from "../claim";
import { release } from "../release";
import type { ClaimedJob } from "../types";
import type { WorkerContext } from "./context";
import type { Wake } from "./wake";

/**
 * Two claims in flight per queue: while one batch's rows are being locked and returned, the
 * previous one runs and completes, so the worker is not idle for a round trip per batch (one at
 * a time, the worker was idle 60 % of a drain). A second goes out when the last claim came back
 * full (more are due) or jobs were enqueued since (a NOTIFY during a claim would otherwise wait
 * for it: two claims' time at the p99 of a steady load). More than two only queue up behind
 * each other on the queue's claim-stats row and on the pool.
 */
const CLAIMS_IN_FLIGHT = 2;

/** A failing claim is retried from 250 ms, doubling to 5 s. */
const CLAIM_BACKOFF: BackoffPolicy = { baseMs: 250, capMs: 5_000 };

export interface ClaimLoopOptions {
  queue: string;
  concurrency: number;
  batchSize: number;
  leaseSeconds: number;
  pollMs: number;
}

/**
 * Claims a queue's due jobs while there are free slots, and hands each to `start`. A claim that
 * came back full means more are due, and a NOTIFY means new ones are: the next goes out at once,
 * alongside. Otherwise the loop waits for a NOTIFY, a freed slot, or the poll interval. Ends when `stop` aborts, after its
 * claims in flight are back (what they took after the stop is released at once).
 */
export async function claimLoop(
  ctx: WorkerContext,
  o: ClaimLoopOptions,
  wake: Wake,
  stop: AbortSignal,
  start: (job: ClaimedJob) => void,
): Promise<void> {
  const backoff = new Backoff(CLAIM_BACKOFF, ctx.clock);
  const claims = new Set<Promise<void>>();
  let reserved = 0; // slots asked for by claims in flight
  let lastFull = false;
  let failed = false;

  const send = (n: number) => {
    reserved += n;
    const sent = claim(ctx.db, o.queue, ctx.id, n, o.leaseSeconds).then(
      (jobs) => {
        ctx.dbWorked();
        backoff.reset();
        lastFull = jobs.length === n;
        if (jobs.length > 0) taken(jobs);
      },
      (err: unknown) => {
        ctx.dbFailed(err, "claim");
        lastFull = false;
        failed = true;
      },
    );
    const tracked: Promise<void> = sent.finally(() => {
      reserved -= n;
      claims.delete(tracked);
      if (lastFull || failed || wake.hasNews) wake.wake();
    });
    claims.add(tracked);
  };

  const taken = (jobs: ClaimedJob[]) => {
    ctx.counters.claimed += jobs.length;
    ctx.counters.lastClaimAt = new Date(ctx.clock.now());
    let reclaimed = 0;
    const waitsMs = new Array<number>(jobs.length);
    for (let i = 0; i < jobs.length; i++) {
      const job = jobs[i] as ClaimedJob;
      waitsMs[i] = job.waitMs;
      if (job.reclaimed) reclaimed++;
    }
    emit("job:claimed", {
      queue: o.queue,
      workerId: ctx.id,
      count: jobs.length,
      reclaimed,
      waitsMs,
    });
    if (!stop.aborted) {
      for (const job of jobs) start(job);
      return;
    }
    // Claimed as the stop began: handed straight back, due at once for another worker.
    release(
      ctx.db,
      ctx.id,
      jobs.map((j) => j.lease),
    ).then(
      (ids) => emit("job:released", { queue: o.queue, count: ids.length, workerId: ctx.id }),
      (err: unknown) => ctx.noteError(err, "release"),
    );
  };

  while (!stop.aborted) {
    if (failed) {
      failed = false;
      await backoff.wait(stop);
      continue;
    }
    const free = o.concurrency - ctx.busy(o.queue) - reserved;
    if (free > 0 && claims.size < CLAIMS_IN_FLIGHT) {
      // News is taken only when a claim goes out: one sent after it sees the new jobs.
      const news = wake.takeNews();
      if (claims.size === 0 || lastFull || news) {
        send(Math.min(o.batchSize, free));
        continue;
      }
    }
    await wake.wait(o.pollMs, stop);
  }
  await Promise.all(claims);
}
