import type { Database } from "@/lib/db";
import { nextPollSeconds } from "@/lib/schedule/nextPoll";
import { throwIfChaos } from "@/workers/chaos/chaos";
import type { FetchSourceOptions } from "@/workers/fetcher";
import { sharedRateBudget } from "@/workers/fetcher/rateBudget";
import type { QueueOptions } from "@/workers/queue/queueWorker";
import type { Writer } from "@/workers/store";
import { pushIsLive } from "@/workers/websub/subscriptions";
import { refreshFeed } from "../refreshFeed";
import { refreshPage } from "../refreshPage";
import { type CollectorPayload, wantedSource } from "./frontier";

export interface FetchStageOptions {
  fetch?: FetchSourceOptions;
  /** Polls of feeds and pages at once in this process. */
  concurrency?: number;
  /** A poll that brought news makes its source hot for this long (polled 4× as often). */
  hotForMs?: number;
}

/**
 * The fetch stage: one poll of one feed or page per job, off the frontier. Fetch (breaker,
 * robots, rate budget, conditional GET, retries) → parse/clean → the deliveries into the write
 * buffer, waiting until they are written (so the job completes only once they are durable) →
 * the job is rescheduled for the source's next poll, carrying what the next poll needs (body
 * hash, failures, hot until). A source's own failures (HTTP errors, parse errors) are outcomes
 * that back its schedule off; only what the stage cannot handle (a lost database) throws, and the
 * queue retries it. Hot sources are claimed first (priority 1).
 */
export function fetchStage(
  db: Database,
  write: Writer,
  options: FetchStageOptions = {},
): QueueOptions {
  return {
    concurrency: options.concurrency ?? 8,
    leaseSeconds: 60,
    retry: { baseDelaySeconds: 5, maxDelaySeconds: 15 * 60 },
    hostOf: (job) => (job.payload as unknown as CollectorPayload).host,
    // Every process polling has its share of each host's budget, so together they keep to it.
    onPeers: (processes) =>
      (options.fetch?.deps?.rateBudget ?? sharedRateBudget()).shareAmong(processes),
    handler: async (job) => {
      const startedAt = Date.now();
      const state = job.payload as unknown as CollectorPayload;
      throwIfChaos("fetch", state.sourceId);
      const source = await wantedSource(db, state);
      // Removed, switched off or no longer collected by this collector: the job ends here (the
      // frontier sync adds it again if the source comes back).
      if (!source || (source.kind !== "feed" && source.kind !== "page")) return;
      const refresh = source.kind === "page" ? refreshPage : refreshFeed;
      const outcome = await refresh(
        db,
        source,
        state.collector,
        state.bodyHash ?? null,
        options.fetch,
        write,
      );
      const ok = outcome.code === "ok" || outcome.code === "not_modified";
      const failures = ok ? 0 : (state.failures ?? 0) + 1;
      // A first poll finds the whole document new: that is the feed's past, not news arriving.
      // Counted as news, every source added at once turned hot (polled 4× as often and claimed
      // first) and the ones polled first starved the rest: bench scale at 10,000 new sources
      // polled 2,418 distinct sources in 330 s with 9,309 polls.
      const arriving = state.polledBefore === true && outcome.changed > 0;
      const hotUntil = arriving
        ? Date.now() + (options.hotForMs ?? 10 * 60_000)
        : (state.hotUntil ?? 0);
      const hot = Date.now() < hotUntil;
      // A hub pushes this feed (workers/websub): polling is the safety net, 4× slower.
      const pushed = source.kind === "feed" && (await pushIsLive(db, source.id));
      const seconds = nextPollSeconds({
        baseSeconds: source.pollIntervalSeconds,
        hot,
        pushed,
        // An open breaker already spaces its probes; backing off on top would double it.
        failures: outcome.code === "breaker_open" ? 0 : failures,
        maxAgeSeconds: outcome.maxAgeSeconds,
        ttlMinutes: outcome.ttlMinutes,
        retryAfterSeconds: outcome.retryAfterSeconds,
        elapsedSeconds: (Date.now() - startedAt) / 1000,
      });
      // The chosen delay and the hot spell are kept so the source page can say when polling is
      // faster than the configured interval (lib/schedule/pollNote.ts).
      await db.prisma.sourceState.updateMany({
        where: { sourceId: source.id },
        data: {
          nextPollAt: new Date(Date.now() + seconds * 1000),
          pollEverySeconds: seconds,
          hotUntil: hotUntil > 0 ? new Date(hotUntil) : null,
        },
      });
      const next: CollectorPayload = {
        ...state,
        bodyHash: outcome.bodyHash,
        failures,
        hotUntil,
        polledBefore: state.polledBefore === true || ok,
      };
      return {
        reschedule: {
          delaySeconds: seconds,
          priority: hot ? 1 : 0,
          payload: next,
        },
      };
    },
  };
}
