import type { Database } from "@/lib/db";
import { type DeadLetterFilterInput, deadLetterWhere, parseDeadLetterFilter } from "./filter";

export interface DepthStats {
  /** Dead letters now (archived ones not counted). */
  depth: number;
  /** Age of the oldest, in seconds by the database clock; null when there are none. */
  oldestAgeSeconds: number | null;
}

export interface FingerprintGroup {
  fingerprint: string | null;
  stage: string;
  code: string | null;
  count: number;
  /** The message of the most recent one (others differ only in masked numbers and ids). */
  sampleMessage: string | null;
  /** When the earliest and latest of them failed this way. */
  firstSeen: Date | null;
  lastSeen: Date | null;
}

export interface DeadLetterStats extends DepthStats {
  byStage: (DepthStats & { stage: string })[];
  /** Groups by cause, largest first (at most `groupLimit`). */
  groups: FingerprintGroup[];
}

/**
 * Dead-letter depth and oldest age, overall and per stage, and their groups by fingerprint, for
 * the dashboard, metrics and alerts. Optionally narrowed by a filter.
 */
export async function deadLetterStats(
  db: Database,
  filterInput: DeadLetterFilterInput = {},
  { groupLimit = 100 }: { groupLimit?: number } = {},
): Promise<DeadLetterStats> {
  const where = deadLetterWhere(parseDeadLetterFilter(filterInput));
  const byStage = await db.prisma.$queryRaw<
    { stage: string; depth: number; oldest_age_seconds: number | null }[]
  >`
    SELECT j.queue AS stage, count(*)::int AS depth,
           extract(epoch FROM now() - min(j.dead_at))::float8 AS oldest_age_seconds
    FROM jobs j WHERE ${where}
    GROUP BY j.queue ORDER BY j.queue`;
  const groups = await db.prisma.$queryRaw<
    {
      fingerprint: string | null;
      stage: string;
      code: string | null;
      count: number;
      sample_message: string | null;
      first_seen: Date | null;
      last_seen: Date | null;
    }[]
  >`
    SELECT j.fingerprint, min(j.queue) AS stage, min(j.last_error->>'code') AS code,
           count(*)::int AS count,
           (array_agg(j.last_error->>'message' ORDER BY j.id DESC))[1] AS sample_message,
           min(coalesce(j.last_failed_at, j.dead_at)) AS first_seen,
           max(coalesce(j.last_failed_at, j.dead_at)) AS last_seen
    FROM jobs j WHERE ${where}
    GROUP BY j.fingerprint
    ORDER BY count(*) DESC, max(j.dead_at) DESC
    LIMIT ${Math.max(1, Math.trunc(groupLimit))}`;
  const ages = byStage.map((s) => s.oldest_age_seconds).filter((a): a is number => a !== null);
  return {
    depth: byStage.reduce((n, s) => n + s.depth, 0),
    oldestAgeSeconds: ages.length > 0 ? Math.max(...ages) : null,
    byStage: byStage.map((s) => ({
      stage: s.stage,
      depth: s.depth,
      oldestAgeSeconds: s.oldest_age_seconds,
    })),
    groups: groups.map((g) => ({
      fingerprint: g.fingerprint,
      stage: g.stage,
      code: g.code,
      count: g.count,
      sampleMessage: g.sample_message,
      firstSeen: g.first_seen,
      lastSeen: g.last_seen,
    })),
  };
}
