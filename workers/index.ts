import type { Database } from "@/lib/db";
import { logger } from "@/lib/logger";
import { registerMetrics } from "@/lib/metrics";
import type { FetchSourceOptions } from "@/workers/fetcher";
import {
  type QueueWorker,
  type QueueWorkerOptions,
  startQueueWorker,
} from "@/workers/queue/queueWorker";
import { type DedupStageOptions, dedupStage } from "./dedup/stage";
import { type MeaningLine, type MeaningLineOptions, meaningLine } from "./embed/line";
import { type ExtractLine, type ExtractLineOptions, extractLine } from "./extract/line";
import { EXTRACT_STAGE } from "./extract/stage";
import { createLine, type LineOptions } from "./line/line";
import {
  type BuilderOptions,
  createReadModelBuilder,
  type ReadModelBuilder,
} from "./readmodel/builder";
import { INDEX_STAGE, indexStage } from "./readmodel/indexStage";
import { fetchStage } from "./stages/fetchStage";
import { FETCH_QUEUE, frontierFingerprint, STREAM_QUEUE, syncFrontier } from "./stages/frontier";
import { type StoryStageOptions, storyStage } from "./stages/storyStage";
import { streamStage } from "./stages/streamStage";
import {
  createWriteBuffer,
  type WriteBufferOptions,
  type WriteBufferStats,
} from "./stages/writeBuffer";
import { STORY_QUEUE } from "./stories/queue";
import type { StreamWatchOptions } from "./watchStream";

/** However quiet the sources, the frontier is synced in full this often (see syncIfChanged). */
const FULL_SYNC_MS = 5 * 60_000;

/**
 * What one process runs (WIREWATCH_WORKER_ROLE): everything, or one half, so that at scale the
 * polling and the processing line grow apart (docs/capacity.md). `collect`: the frontier and the
 * fetch, stream and story queues with the writer; `process`: the line after the store (dedup,
 * embed, meaning, extract, index) and the read model's builder.
 */
export type WorkerRole = "all" | "collect" | "process";

export interface WorkerOptions {
  /** Default "all". */
  role?: WorkerRole;
  /** How often the frontier is synced with the sources table (sources added or switched off). */
  sourcesRefreshMs?: number;
  fetch?: FetchSourceOptions;
  stream?: StreamWatchOptions;
  /** How often a watched stream checks that its source is still wanted (default 15 s). */
  streamRecheckMs?: number;
  /** A poll that brought news makes its source hot for this long (polled 4× as often). */
  hotForMs?: number;
  /** Feed and page polls at once in this process. */
  fetchConcurrency?: number;
  buffer?: WriteBufferOptions;
  /** Queue runtime settings (poll, sweep and report intervals; a fixed worker id). */
  queue?: Omit<QueueWorkerOptions, "queues">;
  /** How long stop() lets work in flight finish before handing it back. */
  stopDeadlineMs?: number;
  /** The story-api copy: webhook events and catch-ups (seed 001). */
  stories?: StoryStageOptions;
  /** The processing line past the store (workers/line): its sweep, and the dedup stage. */
  line?: LineOptions & { dedup?: DedupStageOptions };
  /**
   * Embed and stage 4 after dedup (workers/embed/line.ts), with the configured embedder
   * (startIngestion gives it from the settings). Absent: the line ends at dedup.
   */
  meaning?: MeaningLineOptions;
  /**
   * Extract after them (workers/extract), with the configured chain (startIngestion builds it
   * from the settings; its owner closes it). Absent: no extraction.
   */
  extract?: ExtractLineOptions;
  /**
   * The read model (workers/readmodel): the index stage at the line's end and the builder, into
   * this store (startIngestion gives the process's read model store). Absent: no read model.
   */
  readModel?: BuilderOptions;
}

export interface Workers {
  /** This process's worker id (queue_workers.id, lease_owner). */
  id: string;
  queue: QueueWorker;
  buffer(): WriteBufferStats;
  /** Syncs the frontier with the sources table now (it also runs every sourcesRefreshMs). */
  syncFrontier(): Promise<void>;
  /** Stops claiming, lets polls in flight finish (until the deadline), hands back the rest,
   *  closes open streams, then writes what is buffered. */
  stop(): Promise<void>;
}

/**
 * The queue's table is rewritten all day (every claim, completion and reschedule leaves a dead
 * row) and the line reads its pending work through the planner's statistics: without autovacuum
 * the table bloats and the statistics go stale (docs/capacity.md). A server set up for tests may
 * turn it off; a production one must not. Said once at start, never fatal.
 */
export async function warnIfAutovacuumOff(
  db: Database,
  log: Pick<ReturnType<typeof logger>, "warn" | "debug">,
): Promise<void> {
  if (db.kind !== "postgres") return;
  try {
    const [row] = await db.prisma.$queryRaw<{ on: boolean }[]>`
      SELECT current_setting('autovacuum')::boolean AS on`;
    if (row && !row.on) {
      log.warn(
        "PostgreSQL's autovacuum is off: the jobs table will bloat and query plans go stale; " +
          "turn it on (autovacuum = on) for anything but a test server",
      );
    }
  } catch (err) {
    log.debug({ err }, "could not read the autovacuum setting");
  }
}

/**
 * Ingestion on the queues: the frontier (one `fetch` job per feed/page source and collector, one
 * `stream` job per stream source and collector) kept in step with the sources table, and this
 * process's worker claiming from both. Fetch and stream hand their deliveries to one bounded
 * write buffer, drained by the store stage (the writer). Any number of processes can run this
 * against one PostgreSQL: leases make each poll and each stream one worker's at a time.
 */
export async function startWorkers(db: Database, options: WorkerOptions = {}): Promise<Workers> {
  const log = logger().child({ part: "workers" });
  registerMetrics(); // counters subscribe before the first event, not at the first scrape
  const role = options.role ?? "all";
  const collects = role !== "process";
  const processes = role !== "collect";
  const buffer = createWriteBuffer(db, options.buffer);
  let synced: { fingerprint: string; at: number } | null = null;
  const sync = async () => {
    const fingerprint = await frontierFingerprint(db);
    const frontier = await syncFrontier(db);
    synced = { fingerprint, at: Date.now() };
    log.debug(frontier, "frontier synced");
  };
  // The periodic sync catches what no admin action synced (another process's, a database edit):
  // skipped while nothing it reads changed, but run in full every FULL_SYNC_MS regardless.
  const syncIfChanged = async () => {
    if (synced && Date.now() - synced.at < FULL_SYNC_MS) {
      if ((await frontierFingerprint(db)) === synced.fingerprint) return;
    }
    await sync();
  };
  if (collects) await sync();
  const stream = streamStage(db, buffer.write, {
    stream: options.stream,
    recheckMs: options.streamRecheckMs,
  });
  // dedup → embed → meaning (stage 4, when calibrated) → extract → index: each hands its
  // survivors on.
  const readModel = processes ? options.readModel : undefined;
  const toIndex = readModel ? [INDEX_STAGE] : [];
  const meaning: MeaningLine | null =
    processes && options.meaning
      ? await meaningLine(db, {
          ...options.meaning,
          handsOn: options.meaning.handsOn ?? (options.extract ? [EXTRACT_STAGE] : toIndex),
        })
      : null;
  const extract: ExtractLine | null =
    processes && options.extract
      ? extractLine(db, {
          ...options.extract,
          handsOn: options.extract.handsOn ?? toIndex,
          afterMeaning: meaning?.meaningRuns ?? false,
        })
      : null;
  const line = createLine(
    db,
    [
      dedupStage(db, {
        ...options.line?.dedup,
        handsOn:
          options.line?.dedup?.handsOn ??
          (meaning ? [meaning.entry] : extract ? [EXTRACT_STAGE] : toIndex),
      }),
      ...(meaning?.stages ?? []),
      ...(extract ? [extract.stage] : []),
      ...(readModel ? [indexStage(db, { after: extract ? "extract" : "dedup" })] : []),
    ],
    options.line,
  );
  const queue = await startQueueWorker(db, {
    ...options.queue,
    queues: {
      ...(processes ? line.queues : {}),
      ...(collects
        ? {
            [FETCH_QUEUE]: fetchStage(db, buffer.write, {
              fetch: options.fetch,
              concurrency: options.fetchConcurrency,
              hotForMs: options.hotForMs,
            }),
            [STREAM_QUEUE]: stream,
            [STORY_QUEUE]: storyStage(db, options.stories),
          }
        : {}),
    },
  });
  if (processes) await line.start();
  meaning?.start();
  extract?.start();
  const builder: ReadModelBuilder | null = readModel ? createReadModelBuilder(db, readModel) : null;
  builder?.start();
  const refresh = collects
    ? setInterval(() => {
        syncIfChanged().catch((err) =>
          log.error({ err }, "could not sync the frontier with the sources"),
        );
      }, options.sourcesRefreshMs ?? 30_000)
    : undefined;
  log.info({ worker: queue.id, role }, "workers started");
  await warnIfAutovacuumOff(db, log);

  return {
    id: queue.id,
    queue,
    buffer: () => buffer.stats(),
    syncFrontier: sync,
    stop: async () => {
      clearInterval(refresh);
      if (processes) await line.stop();
      // No new build starts; the one in flight finishes (its version is whole or not set).
      await builder?.stop();
      await meaning?.stop();
      await extract?.stop();
      await queue.stop(options.stopDeadlineMs ?? 10_000);
      // The aborted stream watchers finish unwinding (their disconnect is written last), so what
      // stop() leaves in collector_status is final. They end within a database round trip or two
      // of the abort; a database that hangs is cut off after the same deadline.
      const unwound = await settleWithin(stream.settled(), options.stopDeadlineMs ?? 10_000);
      if (!unwound)
        log.warn("stream watchers still unwinding at stop; their last writes may land later");
      await buffer.close();
      log.info({ buffer: buffer.stats() }, "workers stopped");
    },
  };
}

/** Whether `work` ended within `ms` (it keeps running either way). */
async function settleWithin(work: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([work.then(() => true as const), late]);
  } finally {
    clearTimeout(timer);
  }
}
