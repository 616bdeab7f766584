import type { Database } from "@/lib/db";
import { Prisma } from "@/lib/generated/prisma/client";

export type ActivityKind = "connect" | "keepalive" | "not_modified" | "fetch" | "content";

/**
 * Connection activity: a connect, a protocol keepalive, a 304, any successful fetch. Advances
 * last_activity_at even when no headline arrives, which is what tells a quiet news period from
 * a stalled connection. One upsert; greatest() keeps a late report from moving time backwards.
 */
export async function recordActivity(
  db: Database,
  sourceId: string,
  collector: string,
  kind: ActivityKind,
  connected = true,
): Promise<void> {
  await db.prisma.$executeRaw`
    INSERT INTO collector_status (source_id, collector, connected, last_activity_at, last_activity_kind, updated_at)
    VALUES (${sourceId}, ${collector}, ${connected}, now(), ${kind}, now())
    ON CONFLICT (source_id, collector) DO UPDATE SET
      connected = excluded.connected,
      last_activity_at = greatest(collector_status.last_activity_at, excluded.last_activity_at),
      last_activity_kind = excluded.last_activity_kind,
      updated_at = now()`;
}

/** A collector lost its connection (a stream dropped); activity stops until it reconnects. */
export async function recordDisconnect(db: Database, sourceId: string, collector: string) {
  await db.prisma.$executeRaw`
    INSERT INTO collector_status (source_id, collector, connected, updated_at)
    VALUES (${sourceId}, ${collector}, false, now())
    ON CONFLICT (source_id, collector) DO UPDATE SET connected = false, updated_at = now()`;
}

/**
 * Content arrival: a stream item, a feed or page whose body changed. Also learns the gap this
 * source usually leaves between news, as an upper quantile tracked in the same statement:
 * a longer gap pulls the estimate up by 10% of the difference, a shorter one down by 2%, which
 * settles near the 83rd percentile (0.1 / (0.1 + 0.02)), so a burst of breaking news does not
 * make the next ordinary lull look like silence. Gaps under a second (one burst) are not gaps.
 *
 * A gap in which the source failed (an error recorded after the last item: a failed fetch, a
 * dropped stream, a parse error, an open breaker) or which overlaps a local network outage says
 * nothing about the source's cadence and is not learned: one 2-minute outage stretched a 25 s
 * cadence to 37 s in one step, and a few made silence look quiet for hours.
 */
export async function recordContent(db: Database, sourceId: string, collector: string) {
  // Both subqueries read one row or a handful: source_state by its key, and network_outages,
  // which holds a row per outage (a few a month), not per failure.
  const notACadence = Prisma.sql`(
    collector_status.last_content_at IS NULL
    OR extract(epoch FROM now() - collector_status.last_content_at) < 1
    OR EXISTS (SELECT 1 FROM source_state ss
               WHERE ss.source_id = collector_status.source_id
                 AND ss.last_error_at >= collector_status.last_content_at)
    OR EXISTS (SELECT 1 FROM network_outages o
               WHERE o.ended_at IS NULL OR o.ended_at >= collector_status.last_content_at))`;
  await db.prisma.$executeRaw`
    INSERT INTO collector_status (source_id, collector, connected, last_activity_at, last_activity_kind, last_content_at, updated_at)
    VALUES (${sourceId}, ${collector}, true, now(), 'content', now(), now())
    ON CONFLICT (source_id, collector) DO UPDATE SET
      connected = true,
      last_activity_at = now(),
      last_activity_kind = 'content',
      last_content_at = now(),
      usual_gap_seconds = CASE
        WHEN ${notACadence} THEN collector_status.usual_gap_seconds
        WHEN collector_status.usual_gap_seconds IS NULL
          THEN extract(epoch FROM now() - collector_status.last_content_at)
        WHEN extract(epoch FROM now() - collector_status.last_content_at) > collector_status.usual_gap_seconds
          THEN collector_status.usual_gap_seconds
               + 0.1 * (extract(epoch FROM now() - collector_status.last_content_at) - collector_status.usual_gap_seconds)
        ELSE collector_status.usual_gap_seconds
               - 0.02 * (collector_status.usual_gap_seconds - extract(epoch FROM now() - collector_status.last_content_at))
      END,
      gaps_seen = collector_status.gaps_seen + CASE WHEN ${notACadence} THEN 0 ELSE 1 END,
      updated_at = now()`;
}
