import type { Database } from "@/lib/db";
import { logger } from "@/lib/logger";
import { enqueue } from "@/workers/queue/enqueue";
import { PermanentJobError, type QueueOptions } from "@/workers/queue/queueWorker";
import { type Feeder, startFeeder } from "./feeder";
import { itemJobKey, itemJobSchema, type Stage } from "./stage";
import { type SweepOptions, type SweepResult, sweepStage } from "./sweep";

export interface LineOptions extends SweepOptions {
  /** How often each stage's catch-up sweep runs (and once at start). */
  sweepMs?: number;
  /** No LISTEN: the sweep alone feeds the line (tests of a lost NOTIFY). */
  listen?: boolean;
}

export interface Line {
  /** One queue per stage, named as the stage, for startQueueWorker. */
  queues: Record<string, QueueOptions>;
  /** Starts the NOTIFY feeder and the sweeps (the first at once). */
  start(): Promise<void>;
  /** Sweeps every stage now, in line order. */
  sweep(): Promise<Record<string, SweepResult>>;
  /** Enqueues what the feeder heard and has not enqueued yet. */
  flush(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The processing line past the store (seed 002): each stage reads its own queue of item@version
 * jobs and hands survivors on to the next. The stages nothing hands on to are fed from news:
 * woken by the writer's NOTIFY (feeder.ts), with the catch-up sweep (sweep.ts) behind it, so
 * nothing committed is missed. A stage's failure is the queue's: retried with growing delay,
 * then a dead letter on the stage's queue (a PermanentJobError parks it at once), which the
 * dead-letter requeue puts back. Adding a stage is adding its definition to the list.
 */
export function createLine(
  db: Database,
  stages: readonly Stage[],
  options: LineOptions = {},
): Line {
  const log = logger().child({ part: "line" });
  const names = new Set(stages.map((s) => s.name));
  const byName = new Map(stages.map((s) => [s.name, s]));
  if (names.size !== stages.length) throw new Error("line: two stages share a name");
  for (const s of stages) {
    for (const next of s.handsOn) {
      // A job for a stage that never runs would sit in the queue for ever.
      if (!names.has(next)) throw new Error(`line: ${s.name} hands on to ${next}, not in the line`);
    }
  }
  const fed = new Set(stages.flatMap((s) => s.handsOn));
  const fromNews = stages.filter((s) => !fed.has(s.name)).map((s) => s.name);

  const queues: Record<string, QueueOptions> = {};
  for (const stage of stages) {
    queues[stage.name] = {
      concurrency: stage.concurrency,
      leaseSeconds: stage.leaseSeconds,
      retry: stage.retry,
      handler: async (job, { signal }) => {
        const parsed = itemJobSchema.safeParse(job.payload);
        if (!parsed.success) {
          throw new PermanentJobError(
            `${stage.name}: not an item job: ${parsed.error.issues.map((i) => i.message).join("; ")}`,
            "bad_payload",
          );
        }
        const verdict = await stage.handle(parsed.data, { db, signal, attempt: job.lease.attempt });
        if (verdict !== "survived" || stage.handsOn.length === 0) return;
        // After the stage's own commit: a crash in between leaves the hand-on to the next
        // stage's sweep, which finds the survivor undecided there.
        for (const next of stage.handsOn) {
          await enqueue(db, next, [
            {
              key: itemJobKey(parsed.data),
              payload: { ...parsed.data },
              sourceId: job.sourceId,
              // The next stage's own retry budget, as its sweep would enqueue it (extract and
              // embed: 10 attempts over about an hour; the queue's default is 5).
              maxAttempts: byName.get(next)?.maxAttempts,
            },
          ]);
        }
      },
    };
  }

  let feeder: Feeder | null = null;
  let timer: NodeJS.Timeout | null = null;
  let sweeping: Promise<unknown> = Promise.resolve();
  let stopped = false;

  const sweep = async () => {
    const results: Record<string, SweepResult> = {};
    for (const stage of stages) results[stage.name] = await sweepStage(db, stage, options);
    return results;
  };
  const tick = () => {
    sweeping = sweeping
      .then(sweep)
      .then((results) => {
        const enqueued = Object.values(results).reduce((n, r) => n + r.enqueued, 0);
        if (enqueued > 0) log.info({ results }, "line sweep enqueued missed items");
      })
      .catch((err: unknown) => log.warn({ err }, "line sweep failed; it runs again"))
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, options.sweepMs ?? 5_000);
      });
  };

  return {
    queues,
    start: async () => {
      if (options.listen !== false && fromNews.length > 0) feeder = await startFeeder(db, fromNews);
      tick();
    },
    sweep: () => {
      const run = sweeping.then(sweep);
      sweeping = run.catch(() => undefined);
      return run;
    },
    flush: async () => {
      await feeder?.flush();
    },
    stop: async () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      await sweeping.catch(() => undefined);
      await feeder?.stop();
    },
  };
}
