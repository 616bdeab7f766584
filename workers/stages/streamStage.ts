import type { Database } from "@/lib/db";
import { sleep } from "@/lib/sleep";
import type { JobOutcome, QueueOptions } from "@/workers/queue/queueWorker";
import type { ClaimedJob } from "@/workers/queue/types";
import type { Writer } from "@/workers/store";
import { type StreamWatchOptions, watchStream } from "../watchStream";
import { type CollectorPayload, wantedSource } from "./frontier";

export interface StreamStage extends QueueOptions {
  /**
   * Resolves once every watcher this stage started has ended, its last status write (the
   * disconnect) included. The queue's stop() aborts watchers and hands their leases back without
   * waiting for them, so a stop that returned before this could be followed by a late
   * "connected" write from a watcher still unwinding.
   */
  settled(): Promise<void>;
}

export interface StreamStageOptions {
  stream?: StreamWatchOptions;
  /** How often a watched stream checks that its source is still wanted and unchanged. */
  recheckMs?: number;
}

/**
 * The stream stage: a job per stream source and collector that runs as long as the stream is
 * watched, on a lease its worker keeps extending. So each stream is watched by one worker
 * cluster-wide; when that worker dies, the sweeper hands the job to another, which reconnects and
 * backfills what was missed. Events go through the write buffer like polled entries. The job
 * ends when its source is removed or switched off, and starts again at once when it changed.
 */
export function streamStage(
  db: Database,
  write: Writer,
  options: StreamStageOptions = {},
): StreamStage {
  const watchers = new Set<Promise<unknown>>();
  return {
    settled: async () => {
      await Promise.allSettled([...watchers]);
    },
    concurrency: 1_000,
    leaseSeconds: 30,
    runsUntilStopped: true,
    retry: { baseDelaySeconds: 5, maxDelaySeconds: 10 * 60 },
    hostOf: (job) => (job.payload as unknown as CollectorPayload).host,
    handler: (job, { signal }) => {
      const run = watch(job, signal);
      watchers.add(run);
      return run.finally(() => watchers.delete(run));
    },
  };

  async function watch(job: ClaimedJob, signal: AbortSignal): Promise<JobOutcome | undefined> {
    const state = job.payload as unknown as CollectorPayload;
    const source = await wantedSource(db, state);
    // Stopped during the lookup: the abort has fired already and the listener below never would.
    if (source?.kind !== "stream" || signal.aborted) return;
    const settings = JSON.stringify(source);
    const watching = new AbortController();
    const stopWatching = () => watching.abort();
    signal.addEventListener("abort", stopWatching, { once: true });
    let changed = false;
    const recheck = (async () => {
      while (!watching.signal.aborted) {
        await sleep(options.recheckMs ?? 15_000, watching.signal);
        if (watching.signal.aborted) return;
        const now = await wantedSource(db, state).catch(() => source); // keep watching on a DB blip
        if (JSON.stringify(now) !== settings) {
          changed = now !== null;
          watching.abort();
        }
      }
    })();
    try {
      await watchStream(db, source, state.collector, watching.signal, {
        ...options.stream,
        write,
      });
    } finally {
      watching.abort();
      signal.removeEventListener("abort", stopWatching);
      await recheck;
    }
    // Changed settings: due again at once, and watched with the new ones. Gone: the job ends.
    return changed ? { reschedule: { delaySeconds: 0 } } : undefined;
  }
}
