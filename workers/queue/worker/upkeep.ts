import { emit } from "@/lib/events";
import { sampleQueueDepth } from "../depthSample";
import { housekeeping } from "../housekeeping";
import { defaultJobRetryPolicy } from "../retryPolicy";
import { sweep } from "../sweep";
import { workerSeen, workersServing } from "../workerState";
import { every, type WorkerContext } from "./context";
import type { QueueOptions } from "./types";

/**
 * Returns this process's queues' expired leases, each queue with its own retry policy (the
 * workers serving a queue are the ones that sweep it). What came back is due at once: its
 * queue is woken rather than left to its next poll. Then samples the queues' depth for the
 * minute, once per queue and minute across every process (../depthSample.ts): a sweep every
 * 5 s gives each minute a dozen chances, so a tick lost to a database hiccup leaves no gap.
 */
export function sweeper(
  ctx: WorkerContext,
  queues: Record<string, QueueOptions>,
  ms: number,
  stop: AbortSignal,
  wake: (queue: string) => void,
): Promise<void> {
  return every(ctx, ms, stop, "sweep", async () => {
    for (const [queue, q] of Object.entries(queues)) {
      try {
        const swept = await sweep(ctx.db, q.retry ?? defaultJobRetryPolicy, 1000, queue);
        const count = swept.returned + swept.parked;
        if (count === 0) continue;
        emit("job:expired", {
          queue,
          count,
          parked: swept.parked,
          leaseAgesMs: swept.leaseAgesMs,
          workerId: ctx.id,
        });
        if (swept.returned > 0) wake(queue);
      } catch (err) {
        ctx.noteError(err, "sweep");
      }
    }
    try {
      await sampleQueueDepth(ctx.db, Object.keys(queues));
    } catch (err) {
      ctx.noteError(err, "depth sample");
    }
  });
}

/** Archives dead letters past their TTL and trims old history, now and then. */
export function housekeeper(
  ctx: WorkerContext,
  ms: number,
  deadLetterTtlDays: number | undefined,
  stop: AbortSignal,
): Promise<void> {
  return every(ctx, ms, stop, "housekeeping", async () => {
    const done = await housekeeping(ctx.db, deadLetterTtlDays);
    if (done.archived > 0) ctx.log.info(done, "dead letters past their TTL archived");
  });
}

/**
 * Writes the worker's row in queue_workers (its counters) every `ms`, then tells the queues that
 * ask (onPeers) how many processes serve them: those reported within three intervals.
 */
export function reporter(
  ctx: WorkerContext,
  queues: Record<string, QueueOptions>,
  ms: number,
  draining: AbortSignal,
  halt: AbortSignal,
): Promise<void> {
  return every(ctx, ms, halt, "report", async () => {
    await report(ctx, Object.keys(queues), draining);
    if (!draining.aborted) await tellPeers(ctx, queues, ms);
  });
}

/** Tells each queue with onPeers how many processes serve it (reported within 3 × reportMs). */
export async function tellPeers(
  ctx: WorkerContext,
  queues: Record<string, QueueOptions>,
  reportMs: number,
): Promise<void> {
  const asking = Object.entries(queues).filter(([, q]) => q.onPeers);
  if (asking.length === 0) return;
  try {
    const serving = await workersServing(
      ctx.db,
      asking.map(([queue]) => queue),
      (3 * reportMs) / 1000,
    );
    // This process has reported, so it is among them; 1 if the row is not visible yet.
    for (const [queue, q] of asking) q.onPeers?.(Math.max(1, serving.get(queue) ?? 1));
  } catch (err) {
    ctx.noteError(err, "count peers");
  }
}

export function report(ctx: WorkerContext, queues: string[], draining: AbortSignal) {
  const state = draining.aborted ? "draining" : "running";
  return workerSeen(ctx.db, ctx.id, queues, state, ctx.counters).catch((err: unknown) =>
    ctx.noteError(err, "report"),
  );
}
