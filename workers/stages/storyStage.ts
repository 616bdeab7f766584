import { backoffDelay } from "@/lib/backoff";
import type { Database } from "@/lib/db";
import { logger } from "@/lib/logger";
import { recordContent } from "@/workers/collectors/collectorStatus";
import type { QueueOptions } from "@/workers/queue/queueWorker";
import { httpStoryApi, type StoryApi } from "@/workers/stories/api";
import { applyStoryEvent } from "@/workers/stories/apply";
import { catchUp } from "@/workers/stories/catchUp";
import type { Sender } from "@/workers/stories/notify";
import type { StoryEventJob } from "@/workers/stories/receiveWebhook";
import { cachedStorySource, loadStorySource, type StorySource } from "@/workers/stories/source";

/** The recurring catch-up job of a story-api source (one per source, keyed "catchup:<id>"). */
export interface CatchUpJob {
  kind: "catchup";
  sourceId: string;
  /** Failed runs in a row, for the backoff. */
  failures?: number;
}

export interface StoryStageOptions {
  /** The API client for a source (tests and chaos runs pass a double). */
  api?: (source: StorySource) => StoryApi;
  send?: Sender;
  concurrency?: number;
  /** Missed-webhook grace for reconciliation (seconds). */
  graceSeconds?: number;
}

/**
 * The `story` queue: webhook events recorded by POST /api/webhooks/stories, applied off the
 * request (several at once: the writes are safe under racing handlers), and one recurring
 * catch-up per story-api source, due at start and every poll interval after (seed 001's safety
 * net under webhooks). A failing catch-up is an outcome: recorded on story_sync and retried
 * with backoff, never dead-lettered; a failing event (the API down in fetch mode) is retried by
 * the queue and parked as a dead letter once its attempts run out.
 */
export function storyStage(db: Database, options: StoryStageOptions = {}): QueueOptions {
  const apiFor =
    options.api ??
    ((source: StorySource) => httpStoryApi(source.url, { allowPrivate: source.allowPrivate }));
  const contentRecordedAt = new Map<string, number>();
  return {
    concurrency: options.concurrency ?? 8,
    leaseSeconds: 60,
    retry: { baseDelaySeconds: 2, maxDelaySeconds: 5 * 60 },
    handler: async (job) => {
      const payload = job.payload as unknown as StoryEventJob | CatchUpJob;
      const source =
        payload.kind === "event"
          ? await cachedStorySource(db, payload.sourceId, { ticker: payload.event.ticker })
          : await loadStorySource(db, payload.sourceId);
      if (!source) return; // removed or switched off: the job ends here
      const ctx = { db, source, api: apiFor(source), send: options.send };
      if (payload.kind === "event") {
        await applyStoryEvent(ctx, payload.event);
        await db.prisma.$executeRaw`
          UPDATE story_events SET applied_at = now()
          WHERE source_id = ${source.id} AND event_id = ${payload.event.id}`;
        // Content arrival for source health: once a second is plenty, and 8 handlers updating
        // one collector_status row per event would queue on its lock.
        if (Date.now() - (contentRecordedAt.get(source.id) ?? 0) >= 1_000) {
          contentRecordedAt.set(source.id, Date.now());
          await recordContent(db, source.id, source.collector);
        }
        return;
      }
      try {
        const result = await catchUp(ctx, { graceSeconds: options.graceSeconds });
        logger().debug({ source: source.id, ...result }, "story catch-up done");
        // The Sources page shows it as the source's next poll.
        await db.prisma.sourceState.updateMany({
          where: { sourceId: source.id },
          data: { nextPollAt: new Date(Date.now() + source.pollIntervalSeconds * 1000) },
        });
        return {
          reschedule: {
            delaySeconds: source.pollIntervalSeconds,
            payload: { ...payload, failures: 0 },
          },
        };
      } catch (err) {
        const failures = (payload.failures ?? 0) + 1;
        const message = (err as Error).message.slice(0, 500);
        logger().warn({ err, source: source.id, failures }, "story catch-up failed");
        await db.prisma.$executeRaw`
          UPDATE story_sync SET last_error = ${message}, last_error_at = now()
          WHERE source_id = ${source.id}`;
        // 10 s, 20 s, 40 s … up to the poll interval: the API gets a breather, and the source
        // is never checked less often than when healthy. No jitter: one job per source, and the
        // wait is shown as the source's next poll.
        const delaySeconds =
          backoffDelay(failures + 1, {
            baseMs: 5_000,
            capMs: source.pollIntervalSeconds * 1000,
            jitter: "none",
          }) / 1000;
        // Source health shows it failing until the API answers again.
        await db.prisma.sourceState.updateMany({
          where: { sourceId: source.id },
          data: {
            lastErrorAt: new Date(),
            lastErrorCode: "story_api",
            lastErrorMessage: message,
            nextPollAt: new Date(Date.now() + delaySeconds * 1000),
          },
        });
        return { reschedule: { delaySeconds, payload: { ...payload, failures } } };
      }
    },
  };
}
