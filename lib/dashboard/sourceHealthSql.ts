import { Prisma } from "@/lib/generated/prisma/client";
import {
  DEFAULT_THRESHOLDS,
  GAPS_TO_LEARN,
  HEALTH_STATES,
  type HealthState,
  STREAM_KEEPALIVE_SECONDS,
} from "@/lib/health";
import { MIN_POLL_SECONDS } from "@/lib/schedule/nextPoll";

/**
 * lib/health.ts sourceHealth() as one SQL expression, so the Sources list filters and sorts by
 * health in the database instead of loading every source to judge it in JavaScript.
 *
 * Health depends on the time of asking (a source turns stalled when nothing happens), so it
 * cannot be a stored, indexed column without a sweeper rewriting it as the clock moves; it is
 * computed at query time from the facts the workers already keep (source_state,
 * collector_status). To make that one pass rather than 100k small ones, the collectors are
 * folded per source by a single grouped scan whose figures do not depend on the source's own
 * settings: the latest activity of a collector whose content is fresh (within its usual gap),
 * of one whose content is not yet silent (within 3 gaps, or none yet), of any, and whether one
 * has never reported. The source's stalled span then turns each into a state by one timestamp
 * comparison each, in the order of lib/health.ts's rank (the best collector wins):
 *
 *   a fresh collector active within the span  → healthy
 *   a not-silent collector active              → quiet
 *   any collector active                       → silent
 *   none active, one never reported (or none), the source added within the span → starting
 *   otherwise                                  → stalled
 *
 * One grouped scan is a hash join of three 100k-row inputs instead of 100k index probes and
 * aggregates (a lateral subquery per source, 1.8 s on the loaded bench machine against 1.0 s
 * for this form). Still a pass over the fleet: live reads use the snapshot in ./sourceIndex.ts.
 * The state is the index in HEALTH_STATES (healthy 0 … disabled 6). sourceHealthSql.test.ts
 * checks it against sourceHealth() over drawn facts that cross every boundary.
 *
 * The expression reads `s` (sources), `st` (source_state, LEFT JOINed) and `cs`
 * (collectorFactsSql, LEFT JOINed), with `now` as a parameter.
 */

const t = DEFAULT_THRESHOLDS;

/** lib/health.ts expectedActivitySeconds() (with the scheduler's chosen delay), times the stalled span. */
const stalledAfterSeconds = Prisma.sql`(CASE WHEN s.kind = 'stream' THEN ${STREAM_KEEPALIVE_SECONDS}::float8
  ELSE greatest(s.poll_interval_seconds, coalesce(st.poll_every_seconds, 0), ${MIN_POLL_SECONDS}::int)::float8
  END * ${t.stalledAfterIntervals}::float8)`;

/** Activity at or after this is within the stalled span. */
const activeSince = (now: Date) =>
  Prisma.sql`(${now}::timestamptz - ${stalledAfterSeconds} * interval '1 second')`;

const rank = (state: HealthState) => Prisma.raw(String(HEALTH_STATES.indexOf(state)));

/** Each source's collectors folded into the four facts above (collectorHealth()). */
export function collectorFactsSql(now: Date): Prisma.Sql {
  const gap = Prisma.sql`(CASE WHEN c.gaps_seen >= ${GAPS_TO_LEARN}::int AND c.usual_gap_seconds IS NOT NULL
    THEN c.usual_gap_seconds ELSE ${t.defaultUsualGapSeconds}::float8 END * interval '1 second')`;
  return Prisma.sql`LEFT JOIN (
    SELECT c.source_id,
           max(c.last_activity_at) AS latest_activity,
           max(c.last_activity_at) FILTER (WHERE c.last_content_at >= ${now}::timestamptz - ${gap})
             AS fresh_activity,
           max(c.last_activity_at) FILTER (WHERE c.last_content_at IS NULL
             OR c.last_content_at >= ${now}::timestamptz - ${gap} * ${t.silentAfterGaps}::float8)
             AS not_silent_activity,
           bool_or(c.last_activity_at IS NULL) AS unreported
    FROM collector_status c
    GROUP BY c.source_id
  ) cs ON cs.source_id = s.id`;
}

/** The source's state as its index in HEALTH_STATES (sourceHealth()). */
export function healthRankSql(now: Date): Prisma.Sql {
  const since = activeSince(now);
  return Prisma.sql`(CASE
    WHEN NOT s.enabled OR coalesce(st.disabled_reason, '') <> '' THEN ${rank("disabled")}
    WHEN coalesce(st.breaker_state, 'closed') <> 'closed' THEN ${rank("failing")}
    WHEN st.last_error_at IS NOT NULL
         AND (cs.latest_activity IS NULL OR st.last_error_at > cs.latest_activity)
      THEN ${rank("failing")}
    WHEN cs.fresh_activity >= ${since} THEN ${rank("healthy")}
    WHEN cs.not_silent_activity >= ${since} THEN ${rank("quiet")}
    WHEN cs.latest_activity >= ${since} THEN ${rank("silent")}
    WHEN s.created_at >= ${since} AND (cs.source_id IS NULL OR cs.unreported) THEN ${rank("starting")}
    ELSE ${rank("stalled")}
  END)`;
}

export const healthOfRank = (r: number): HealthState => HEALTH_STATES[r] ?? "stalled";
