import { z } from "zod";
import type { Database } from "@/lib/db";
import type { Prisma } from "@/lib/generated/prisma/client";
import type { JobRetryPolicy } from "@/workers/queue/retryPolicy";

/** What every stage of the line works on: one item at the version the job was made for. */
export interface ItemJob {
  entryKey: string;
  version: number;
}

export const itemJobSchema = z.object({
  entryKey: z.string().min(1).max(200),
  version: z.number().int().min(1),
});

/**
 * One live job per (item, version) and stage: the NOTIFY feeder, the catch-up sweep and the
 * stage before may all enqueue the same item@version, and the queue's key makes it once.
 */
export function itemJobKey(job: ItemJob): string {
  return `${job.entryKey}@${job.version}`;
}

/**
 * What a stage made of its job. `survived`: the item goes on to the stages this one hands on to;
 * `dropped`: it stops here (a duplicate, a tombstone); `superseded`: a newer version of the item
 * exists, and the job for that version decides (nothing was written).
 */
export type StageVerdict = "survived" | "dropped" | "superseded";

export interface StageContext {
  db: Database;
  /** Aborted when the job's lease is lost or the worker stops past its deadline. */
  signal: AbortSignal;
  /** The job's attempt (1 on the first run). */
  attempt: number;
}

/**
 * A stage of the processing line (seed 002, "The processing line"): a name (also its queue and
 * its line_cursors row), a handler, the stages it hands survivors on to, and the sweep that
 * finds what it has not done.
 */
export interface Stage {
  name: string;
  handle(job: ItemJob, ctx: StageContext): Promise<StageVerdict>;
  /** Stages a survivor is handed on to (enqueued item@version). Never a stage that does not run. */
  handsOn: readonly string[];
  /**
   * The sweep's question, as SQL selecting `entry_key, version, source_id, at`: every item whose
   * `at` (the time it last became work for this stage, e.g. news.updated_at) is after `since` and
   * that this stage has not decided at `version`. The line adds "and no job for it" and the order.
   */
  pending(since: Date): Prisma.Sql;
  /** The latest `at` there is (the sweep's horizon when it found nothing more to do). */
  horizon(): Prisma.Sql;
  /** Queue settings: handlers at once per process, lease, retries. */
  concurrency?: number;
  leaseSeconds?: number;
  retry?: JobRetryPolicy;
  maxAttempts?: number;
}
