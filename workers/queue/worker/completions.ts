import { Backoff } from "@/lib/backoff";
import { emit } from "@/lib/events";
import { complete } from "../complete";
import { DB_BACKOFF, type Running, type WorkerContext } from "./context";

/**
 * Completions are written in batches: a handler that finished adds its job here, and one
 * statement finishes everything that piled up meanwhile (the handlers of a claimed batch finish
 * in one turn, so the first flush waits for the end of that turn rather than going out with
 * one job). One statement in flight at a time; what finishes meanwhile goes in the next.
 */
export class Completions {
  private pending: Running[] = [];
  private flushing: Promise<void> | null = null;
  private scheduled = false;

  constructor(private readonly ctx: WorkerContext) {}

  add(r: Running): void {
    this.pending.push(r);
    if (this.flushing || this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  /** Writes what is pending; resolves when nothing is (retrying while the database is away). */
  flush(): Promise<void> {
    if (this.flushing) return this.flushing;
    if (this.pending.length === 0) return Promise.resolve();
    this.flushing = this.drain().finally(() => {
      this.flushing = null;
    });
    return this.flushing;
  }

  private async drain(): Promise<void> {
    const { ctx } = this;
    const backoff = new Backoff(DB_BACKOFF, ctx.clock);
    while (this.pending.length > 0) {
      const batch = this.pending;
      this.pending = [];
      let done: Set<string>;
      try {
        done = new Set(
          await complete(
            ctx.db,
            batch.map((r) => r.job.lease),
          ),
        );
      } catch (err) {
        ctx.dbFailed(err, "complete");
        // Kept and written when the database is back, unless their leases were given up
        // meanwhile (then another worker runs them again: at least once).
        this.pending = [...batch.filter((r) => ctx.holds(r)), ...this.pending];
        await backoff.wait();
        continue;
      }
      ctx.dbWorked();
      backoff.reset();
      const now = ctx.clock.now();
      for (const r of batch) {
        if (!done.has(r.job.lease.id)) {
          ctx.giveUp(r, "lease lost before completion; not completed here");
          continue;
        }
        ctx.counters.completed++;
        ctx.forget(r);
        emit("job:completed", {
          queue: r.job.queue,
          durationMs: now - r.startedAt,
          rescheduled: false,
        });
      }
    }
  }
}
