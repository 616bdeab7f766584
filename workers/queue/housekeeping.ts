import { config } from "@/lib/config";
import type { Database } from "@/lib/db";
import { trimFetchHistory } from "@/workers/fetcher/history";
import { archiveExpiredDeadLetters } from "./deadLetters/archiveExpired";

/** Lease events are for recent history (the dashboard's hours and days), not an archive. */
export const LEASE_EVENTS_KEEP_DAYS = 3;
/** Claims per queue and minute, for the dashboard's week: 10,080 rows a week per queue. */
export const CLAIM_STATS_KEEP_DAYS = 7;
/** Depth per queue and minute (depthSample.ts), as long as claims: the dashboard's week. */
export const DEPTH_SAMPLES_KEEP_DAYS = 7;
/** Failures of jobs that since succeeded; a dead letter's own history is kept with it. */
export const FAILURES_KEEP_DAYS = 30;

/** Story events (webhook idempotency, reconciliation) outlive the API's 30-day event window. */
export const STORY_EVENTS_KEEP_DAYS = 45;

/**
 * The queue's periodic upkeep, run by every worker process now and then (each statement is
 * idempotent, so overlapping runs are harmless): dead letters past their TTL are archived; old
 * lease events, claim stats and depth samples, the failure history of jobs that no longer exist,
 * and story events past any retry or catch-up are trimmed; fetch history past
 * WIREWATCH_FETCH_HISTORY_DAYS is folded into daily rows.
 */
export async function housekeeping(
  db: Database,
  deadLetterTtlDays?: number,
  fetchHistoryDays = config().WIREWATCH_FETCH_HISTORY_DAYS,
): Promise<{
  archived: number;
  leaseEvents: number;
  claimStats: number;
  depthSamples: number;
  failures: number;
  storyEvents: number;
  attemptsFolded: number;
  pageLooks: number;
}> {
  const archived = await archiveExpiredDeadLetters(db, deadLetterTtlDays);
  const leaseEvents = await db.prisma.$executeRaw`
    DELETE FROM lease_events WHERE at < now() - make_interval(days => ${LEASE_EVENTS_KEEP_DAYS})`;
  const claimStats = await db.prisma.$executeRaw`
    DELETE FROM queue_claim_stats
    WHERE minute < now() - make_interval(days => ${CLAIM_STATS_KEEP_DAYS})`;
  const depthSamples = await db.prisma.$executeRaw`
    DELETE FROM queue_depth_samples
    WHERE minute < now() - make_interval(days => ${DEPTH_SAMPLES_KEEP_DAYS})`;
  const failures = await db.prisma.$executeRaw`
    DELETE FROM job_failures f
    WHERE f.failed_at < now() - make_interval(days => ${FAILURES_KEEP_DAYS})
      AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.id = f.job_id)`;
  const storyEvents = await db.prisma.$executeRaw`
    DELETE FROM story_events
    WHERE published_at < now() - make_interval(days => ${STORY_EVENTS_KEEP_DAYS})`;
  const history = await trimFetchHistory(db, fetchHistoryDays);
  return { archived, leaseEvents, claimStats, depthSamples, failures, storyEvents, ...history };
}
