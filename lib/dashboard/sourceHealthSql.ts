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
 * cannot be a stored, indexed column without a sweeper rewriting it as the clock moves; here it
 * is computed per row from the facts the workers already keep (source_state, collector_status)
 * at query time: about 1 µs of arithmetic per source on top of reading its two rows. The state
 * is the index in HEALTH_STATES (healthy 0 … disabled 6), the same order as lib/health.ts's
 * rank, so "best collector" is a min(). sourceHealthSql.test.ts checks it against
 * sourceHealth() over every combination of facts that moves the answer.
 *
 * The expression reads `s` (sources), `st` (source_state, LEFT JOINed) and `cs`
 * (collectorFactsSql, LATERAL), with `now` as a parameter.
 */

const t = DEFAULT_THRESHOLDS;

const ageSeconds = (now: Date, column: Prisma.Sql) =>
  Prisma.sql`greatest(0, extract(epoch FROM (${now}::timestamptz - ${column})))::float8`;

/** lib/health.ts expectedActivitySeconds() (with the scheduler's chosen delay), times the stalled span. */
const stalledAfterSeconds = Prisma.sql`(CASE WHEN s.kind = 'stream' THEN ${STREAM_KEEPALIVE_SECONDS}::float8
  ELSE greatest(s.poll_interval_seconds, coalesce(st.poll_every_seconds, 0), ${MIN_POLL_SECONDS}::int)::float8
  END * ${t.stalledAfterIntervals}::float8)`;

/** lib/health.ts isStarting(): added less than the stalled span ago. */
const startingSql = (now: Date) =>
  Prisma.sql`(${ageSeconds(now, Prisma.sql`s.created_at`)} <= ${stalledAfterSeconds})`;

const rank = (state: HealthState) => Prisma.raw(String(HEALTH_STATES.indexOf(state)));

/**
 * Per source, over its collector_status rows: the latest activity (a failure newer than it
 * makes the source failing) and the best collector's state (collectorHealth()).
 */
export function collectorFactsSql(now: Date): Prisma.Sql {
  const gap = Prisma.sql`(CASE WHEN c.gaps_seen >= ${GAPS_TO_LEARN}::int AND c.usual_gap_seconds IS NOT NULL
    THEN c.usual_gap_seconds ELSE ${t.defaultUsualGapSeconds}::float8 END)`;
  const sinceContent = ageSeconds(now, Prisma.sql`c.last_content_at`);
  return Prisma.sql`CROSS JOIN LATERAL (
    SELECT max(c.last_activity_at) AS latest_activity,
           min(CASE
             WHEN c.last_activity_at IS NULL
               THEN CASE WHEN ${startingSql(now)} THEN ${rank("starting")} ELSE ${rank("stalled")} END
             WHEN ${ageSeconds(now, Prisma.sql`c.last_activity_at`)} > ${stalledAfterSeconds}
               THEN ${rank("stalled")}
             WHEN c.last_content_at IS NULL THEN ${rank("quiet")}
             WHEN ${sinceContent} > ${gap} * ${t.silentAfterGaps}::float8 THEN ${rank("silent")}
             WHEN ${sinceContent} > ${gap} THEN ${rank("quiet")}
             ELSE ${rank("healthy")}
           END) AS best
    FROM collector_status c
    WHERE c.source_id = s.id
  ) cs`;
}

/** The source's state as its index in HEALTH_STATES (sourceHealth()). */
export function healthRankSql(now: Date): Prisma.Sql {
  return Prisma.sql`(CASE
    WHEN NOT s.enabled OR coalesce(st.disabled_reason, '') <> '' THEN ${rank("disabled")}
    WHEN coalesce(st.breaker_state, 'closed') <> 'closed' THEN ${rank("failing")}
    WHEN st.last_error_at IS NOT NULL
         AND (cs.latest_activity IS NULL OR st.last_error_at > cs.latest_activity)
      THEN ${rank("failing")}
    WHEN cs.best IS NULL OR cs.best = ${rank("starting")}
      THEN CASE WHEN ${startingSql(now)} THEN ${rank("starting")} ELSE ${rank("stalled")} END
    ELSE cs.best
  END)`;
}

export const healthOfRank = (r: number): HealthState => HEALTH_STATES[r] ?? "stalled";
