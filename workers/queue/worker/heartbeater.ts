import { heartbeat } from "../heartbeat";
import { every, type WorkerContext } from "./context";

/**
 * Extends every held lease of a queue a third of a lease apart, so two beats can be lost before
 * the lease runs out. A lease missing from the answer was swept (and perhaps claimed by another
 * worker): its handler is aborted. A database that does not answer for longer than the lease
 * (a partition, a frozen server: queries hang rather than fail) is judged on every tick, not
 * only when a beat fails, since the sweeper may have handed those jobs on already.
 */
export function heartbeater(
  ctx: WorkerContext,
  queue: string,
  leaseSeconds: number,
  halt: AbortSignal,
): Promise<void> {
  const leaseMs = leaseSeconds * 1000;
  // One beat at a time: while the database hangs, beats must not pile up in the pool.
  let beating = false;
  const unreachable = () => ctx.clock.now() - ctx.lastDbOk > leaseMs;
  return every(ctx, Math.max(50, leaseMs / 3), halt, "heartbeat", () => {
    const held = [...ctx.running.values()].filter((r) => r.job.queue === queue);
    if (held.length === 0) return;
    if (unreachable()) {
      ctx.dbFailed(new Error(`no answer for ${ctx.clock.now() - ctx.lastDbOk} ms`), "heartbeat");
      for (const r of held) ctx.giveUp(r, "database unreachable longer than the lease");
      return;
    }
    if (beating) return;
    beating = true;
    heartbeat(
      ctx.db,
      held.map((r) => r.job.lease),
      leaseSeconds,
    )
      .then(
        (kept) => {
          ctx.dbWorked();
          for (const r of held) if (!kept.has(r.job.lease.id)) ctx.giveUp(r, "lease taken over");
        },
        (err: unknown) => {
          ctx.dbFailed(err, "heartbeat");
          if (!unreachable()) return;
          for (const r of held) ctx.giveUp(r, "database unreachable longer than the lease");
        },
      )
      .finally(() => {
        beating = false;
      });
  });
}
