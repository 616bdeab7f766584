import { emit } from "@/lib/events";
import { fail } from "../fail";
import { toJobError } from "../jobError";
import { reschedule } from "../reschedule";
import { defaultJobRetryPolicy, retryDelaySeconds } from "../retryPolicy";
import type { ClaimedJob } from "../types";
import type { Completions } from "./completions";
import type { Running, WorkerContext } from "./context";
import { type JobHandler, type JobOutcome, PermanentJobError, type QueueOptions } from "./types";

/**
 * Runs one claimed job's handler and writes what became of it: a completion (batched), a
 * reschedule, or a failure (retry or dead letter). Nothing is written for a job whose lease was
 * given up meanwhile: another worker may hold it now.
 */
export function runJob(
  ctx: WorkerContext,
  job: ClaimedJob,
  q: QueueOptions,
  completions: Completions,
): void {
  const r = ctx.hold(job);
  let result: ReturnType<JobHandler>;
  try {
    result = q.handler(job, r);
  } catch (err) {
    void failed(ctx, r, err, q);
    return;
  }
  result.then(
    (outcome) => finished(ctx, r, outcome ?? undefined, completions),
    (err: unknown) => failed(ctx, r, err, q),
  );
}

async function finished(
  ctx: WorkerContext,
  r: Running,
  outcome: JobOutcome,
  completions: Completions,
): Promise<void> {
  if (r.aborted) return;
  ctx.handlerDone(r);
  if (!outcome?.reschedule) {
    completions.add(r);
    return;
  }
  const next = outcome.reschedule;
  const held = await ctx.persist(r, "reschedule", () => reschedule(ctx.db, r.job.lease, next));
  if (held) {
    ctx.counters.completed++;
    emit("job:completed", {
      queue: r.job.queue,
      durationMs: ctx.clock.now() - r.startedAt,
      rescheduled: true,
    });
  }
  ctx.forget(r);
}

async function failed(ctx: WorkerContext, r: Running, err: unknown, q: QueueOptions) {
  if (r.aborted) return; // lease given up: whatever it threw is moot
  const { job } = r;
  const durationMs = ctx.clock.now() - r.startedAt;
  ctx.counters.failed++;
  const error = toJobError(err, q.hostOf?.(job));
  ctx.noteError(err, `${job.queue} job ${job.lease.id}`);
  const outcome = await ctx.persist(r, "fail", () =>
    fail(ctx.db, ctx.id, job, error, { retry: q.retry, park: err instanceof PermanentJobError }),
  );
  if (outcome === "retrying" || outcome === "dead") {
    const attempt = job.lease.attempt;
    const retryInSeconds =
      outcome === "retrying" ? retryDelaySeconds(q.retry ?? defaultJobRetryPolicy, attempt) : null;
    emit("job:failed", {
      queue: job.queue,
      attempt,
      retryInSeconds,
      error: error.code,
      durationMs,
    });
    if (outcome === "dead") {
      emit("job:dead", {
        queue: job.queue,
        attempt,
        error: error.code,
        workerId: ctx.id,
        jobId: job.lease.id,
      });
    }
  }
  ctx.forget(r);
}
