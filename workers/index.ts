import type { Database } from "@/lib/db";
import { logger } from "@/lib/logger";
import { sleep } from "@/lib/sleep";
import { type SourceRef, toSourceRef } from "@/workers/collectors/sourceRef";
import type { FetchSourceOptions } from "@/workers/fetcher";
import { nextPollSeconds } from "@/workers/schedule/nextPoll";
import { type RefreshOutcome, refreshFeed } from "./refreshFeed";
import { refreshPage } from "./refreshPage";
import { type StreamWatchOptions, watchStream } from "./watchStream";

export interface WorkerOptions {
  /** How often the list of sources is re-read (sources added or switched off meanwhile). */
  sourcesRefreshMs?: number;
  fetch?: FetchSourceOptions;
  stream?: StreamWatchOptions;
  /** A poll that brought news makes its source hot for this long (polled 4× as often). */
  hotForMs?: number;
}

export interface Workers {
  /** Collectors running now, as "source/collector". */
  running(): string[];
  /** Stops every collector: no new polls, open streams closed; resolves when all have ended. */
  stop(): Promise<void>;
}

/**
 * Starts one collector per enabled source and named collector: feeds and pages are polled on
 * their adaptive schedule, streams are watched continuously. The source list is re-read every
 * `sourcesRefreshMs`, starting collectors for new sources and stopping those of removed or
 * disabled ones. Each collector is independent: one failing source never delays another.
 */
export async function startWorkers(db: Database, options: WorkerOptions = {}): Promise<Workers> {
  const log = logger().child({ part: "workers" });
  const stopping = new AbortController();
  const collectors = new Map<
    string,
    { abort: AbortController; done: Promise<void>; settings: string; ended: boolean }
  >();

  // Collectors told to stop by a sync but maybe still finishing a poll: stop() waits for them too.
  const retiring = new Set<Promise<void>>();

  const sync = async () => {
    const sources = await db.prisma.source.findMany({
      where: { enabled: true, kind: { in: ["feed", "page", "stream"] }, url: { not: null } },
      include: { state: true },
    });
    const wanted = new Map<string, { source: SourceRef; collector: string }>();
    for (const s of sources) {
      if (s.state?.disabledReason) continue;
      const ref = toSourceRef(s);
      if (!ref) continue;
      for (const c of s.collectors) wanted.set(`${s.id}/${c}`, { source: ref, collector: c });
    }
    // A collector whose source was removed, switched off or changed (a new URL) stops; a
    // changed one starts again below with the new settings.
    for (const [key, running] of collectors) {
      const want = wanted.get(key);
      // A collector that ended on its own (an error it could not get past, such as a lost
      // database) is started again too.
      if (!want || JSON.stringify(want.source) !== running.settings || running.ended) {
        running.abort.abort();
        collectors.delete(key);
        retiring.add(running.done);
        void running.done.then(() => retiring.delete(running.done));
      }
    }
    for (const [key, { source, collector }] of wanted) {
      if (collectors.has(key) || stopping.signal.aborted) continue;
      const abort = new AbortController();
      stopping.signal.addEventListener("abort", () => abort.abort(), { once: true });
      const run =
        source.kind === "stream"
          ? watchStream(db, source, collector, abort.signal, options.stream)
          : pollLoop(db, source, collector, abort.signal, options);
      const entry = {
        abort,
        settings: JSON.stringify(source),
        ended: false,
        done: Promise.resolve(),
      };
      entry.done = run
        .catch((err) => log.error({ err, key }, "collector stopped with an error; restarting it"))
        .finally(() => {
          entry.ended = true;
        });
      collectors.set(key, entry);
    }
  };

  await sync();
  const refresh = setInterval(() => {
    sync().catch((err) => log.error({ err }, "could not re-read sources"));
  }, options.sourcesRefreshMs ?? 30_000);
  log.info({ collectors: [...collectors.keys()] }, "workers started");

  return {
    running: () => [...collectors.keys()],
    stop: async () => {
      clearInterval(refresh);
      stopping.abort();
      await Promise.all([...[...collectors.values()].map((c) => c.done), ...retiring]);
      collectors.clear();
      log.info("workers stopped");
    },
  };
}

/** Polls one feed or page by one collector until aborted. */
async function pollLoop(
  db: Database,
  source: SourceRef,
  collector: string,
  signal: AbortSignal,
  options: WorkerOptions,
): Promise<void> {
  const log = logger().child({ source: source.id, collector });
  const refresh = source.kind === "page" ? refreshPage : refreshFeed;
  let bodyHash: string | null = null;
  let failures = 0;
  let hotUntil = 0;
  while (!signal.aborted) {
    let outcome: RefreshOutcome | null = null;
    try {
      outcome = await refresh(db, source, collector, bodyHash, options.fetch);
      bodyHash = outcome.bodyHash;
      const ok = outcome.code === "ok" || outcome.code === "not_modified";
      failures = ok ? 0 : failures + 1;
      if (outcome.changed > 0) hotUntil = Date.now() + (options.hotForMs ?? 10 * 60_000);
    } catch (err) {
      // A database error: nothing was recorded for this poll; try again on the next one.
      failures++;
      log.error({ err }, "poll failed");
    }
    const seconds = nextPollSeconds({
      baseSeconds: source.pollIntervalSeconds,
      hot: Date.now() < hotUntil,
      failures: outcome?.code === "breaker_open" ? 0 : failures,
      maxAgeSeconds: outcome?.maxAgeSeconds,
      ttlMinutes: outcome?.ttlMinutes,
      retryAfterSeconds: outcome?.retryAfterSeconds,
    });
    await db.prisma.sourceState
      .updateMany({
        where: { sourceId: source.id },
        data: { nextPollAt: new Date(Date.now() + seconds * 1000) },
      })
      .catch(() => undefined);
    await sleep(seconds * 1000, signal);
  }
}
