import { MIN_POLL_SECONDS } from "@/lib/schedule/nextPoll";
/**
 * A source's health, from what its collectors report. Connection activity (keepalives, 304s,
 * connects) is kept apart from content arrival (seed 000), so a quiet news period and a stalled
 * connection are different states:
 *
 *   disabled  switched off, or a 404/410 disabled it
 *   failing   the breaker is open (or probing), or the latest fetch failed
 *   starting  no collector has reported yet, and the source was added less than the stalled
 *             span ago (right after first boot, or just added): not yet a reason to worry
 *   stalled   no activity for longer than the source's activity interval allows
 *   silent    activity, but no news for much longer than this source's own usual gap
 *   quiet     activity, no news for a while, still within the source's usual cadence
 *   healthy   news arriving at its usual pace
 *
 * A source is as healthy as its healthiest collector (they are redundant), unless the source
 * itself is disabled or failing.
 */

export const HEALTH_STATES = [
  "healthy",
  "quiet",
  "silent",
  "starting",
  "stalled",
  "failing",
  "disabled",
] as const;
export type HealthState = (typeof HEALTH_STATES)[number];

export interface CollectorFacts {
  collector: string;
  lastActivityAt: Date | null;
  lastContentAt: Date | null;
  /** Learned from the source's history; null until a few gaps have been seen. */
  usualGapSeconds: number | null;
}

export interface SourceFacts {
  kind: "feed" | "stream" | "page" | string;
  enabled: boolean;
  disabledReason: string | null;
  breakerState: "closed" | "open" | "half_open" | string;
  lastErrorAt: Date | null;
  lastErrorCode: string | null;
  /** How often activity is expected: the keepalive interval of a stream, the poll interval of a feed. */
  activityIntervalSeconds: number;
  /** When the source was added (sources.created_at): a collector that has never reported is
   *  starting until the stalled span has passed since then. */
  addedAt?: Date | null;
  collectors: CollectorFacts[];
}

/** A stream is expected to send a keepalive at least this often (the usual 5–15 s, with room). */
export const STREAM_KEEPALIVE_SECONDS = 15;
/** A learned usual gap is trusted after this many gaps; before that one is assumed. */
export const GAPS_TO_LEARN = 5;

/**
 * How often a source shows activity when all is well: a stream's keepalive, or the poll
 * interval the scheduler actually keeps — never under MIN_POLL_SECONDS, whatever is configured
 * (a 10 s source is polled every 15 s, and judging it by 10 s made it flicker to stalled), and
 * never under the delay the scheduler chose for the next poll (`chosenSeconds`): a feed a WebSub
 * hub pushes is polled 4× slower, one whose Cache-Control asks for an hour waits an hour, and
 * neither is stalled for keeping that schedule.
 */
export function expectedActivitySeconds(
  kind: string,
  pollIntervalSeconds: number,
  chosenSeconds: number | null = null,
): number {
  return kind === "stream"
    ? STREAM_KEEPALIVE_SECONDS
    : Math.max(pollIntervalSeconds, chosenSeconds ?? 0, MIN_POLL_SECONDS);
}

export interface HealthThresholds {
  /**
   * Stalled after this many activity intervals without activity. 1.5 tolerates one late
   * keepalive and still flags a dead connection within one interval plus half an interval.
   */
  stalledAfterIntervals: number;
  /** Silent after this many usual gaps without news (3: a gap three times the usual is rare). */
  silentAfterGaps: number;
  /** The usual gap assumed before enough have been seen to learn one (1 h: news is bursty). */
  defaultUsualGapSeconds: number;
}

export const DEFAULT_THRESHOLDS: HealthThresholds = {
  stalledAfterIntervals: 1.5,
  silentAfterGaps: 3,
  defaultUsualGapSeconds: 3_600,
};

export interface Health {
  state: HealthState;
  /** The times behind the state, spelled out for an operator. */
  reason: string;
  collectors: { collector: string; state: HealthState; reason: string }[];
}

const RANK: Record<HealthState, number> = {
  healthy: 0,
  quiet: 1,
  silent: 2,
  starting: 3,
  stalled: 4,
  failing: 5,
  disabled: 6,
};

export function sourceHealth(
  source: SourceFacts,
  now: Date,
  thresholds: HealthThresholds = DEFAULT_THRESHOLDS,
): Health {
  const collectors = source.collectors.map((c) => ({
    collector: c.collector,
    ...collectorHealth(source, c, now, thresholds),
  }));
  if (!source.enabled || source.disabledReason) {
    return {
      state: "disabled",
      reason: source.disabledReason ? `disabled after ${source.disabledReason}` : "switched off",
      collectors,
    };
  }
  if (source.breakerState !== "closed") {
    return {
      state: "failing",
      reason: `breaker ${source.breakerState.replace("_", "-")}${source.lastErrorCode ? ` after ${source.lastErrorCode}` : ""}`,
      collectors,
    };
  }
  const latestActivity = max(source.collectors.map((c) => c.lastActivityAt));
  if (source.lastErrorAt && (!latestActivity || source.lastErrorAt > latestActivity)) {
    return {
      state: "failing",
      reason: `last fetch failed ${ago(source.lastErrorAt, now)} (${source.lastErrorCode ?? "error"})`,
      collectors,
    };
  }
  const best = [...collectors].sort((a, b) => RANK[a.state] - RANK[b.state])[0];
  if (!best || best.state === "starting") {
    const starting = isStarting(source, now, thresholds);
    return {
      state: starting ? "starting" : "stalled",
      reason:
        starting && source.addedAt
          ? `no collector has reported yet (added ${ago(source.addedAt, now)})`
          : "no collector has reported yet",
      collectors,
    };
  }
  return { state: best.state, reason: `${best.collector}: ${best.reason}`, collectors };
}

function collectorHealth(
  source: SourceFacts,
  c: CollectorFacts,
  now: Date,
  t: HealthThresholds,
): { state: HealthState; reason: string } {
  const stalledAfter = source.activityIntervalSeconds * t.stalledAfterIntervals;
  if (!c.lastActivityAt) {
    return isStarting(source, now, t)
      ? { state: "starting", reason: "no activity yet" }
      : { state: "stalled", reason: "no activity yet" };
  }
  const idle = seconds(now, c.lastActivityAt);
  if (idle > stalledAfter) {
    return {
      state: "stalled",
      reason: `no activity for ${human(idle)} (expected every ${human(source.activityIntervalSeconds)})`,
    };
  }
  const gap = c.usualGapSeconds ?? t.defaultUsualGapSeconds;
  const learned = c.usualGapSeconds === null ? "assumed" : "usual";
  if (!c.lastContentAt) {
    return { state: "quiet", reason: `active ${ago(c.lastActivityAt, now)}, no news yet` };
  }
  const since = seconds(now, c.lastContentAt);
  if (since > gap * t.silentAfterGaps) {
    return {
      state: "silent",
      reason: `active ${ago(c.lastActivityAt, now)}, no news for ${human(since)} (${learned} gap ${human(gap)})`,
    };
  }
  if (since > gap) {
    return {
      state: "quiet",
      reason: `active ${ago(c.lastActivityAt, now)}, no news for ${human(since)} (${learned} gap ${human(gap)})`,
    };
  }
  return {
    state: "healthy",
    reason: `news ${ago(c.lastContentAt, now)} (${learned} gap ${human(gap)})`,
  };
}

/**
 * The same span a reporting collector gets before it counts as stalled (1.5 activity
 * intervals), counted from when the source was added: a first poll is due at once, so one that
 * has not come by then is as overdue as a missed keepalive.
 */
function isStarting(source: SourceFacts, now: Date, t: HealthThresholds): boolean {
  if (!source.addedAt) return false;
  return seconds(now, source.addedAt) <= source.activityIntervalSeconds * t.stalledAfterIntervals;
}

function max(dates: (Date | null)[]): Date | null {
  return dates.reduce<Date | null>((m, d) => (d && (!m || d > m) ? d : m), null);
}

function seconds(now: Date, then: Date): number {
  return Math.max(0, (now.getTime() - then.getTime()) / 1000);
}

function ago(then: Date, now: Date): string {
  return `${human(seconds(now, then))} ago`;
}

/** 42 s, 3.5 min, 2.1 h: short enough for a table cell. */
export function human(s: number): string {
  if (s < 90) return `${Math.round(s)} s`;
  if (s < 90 * 60) return `${(s / 60).toFixed(1)} min`;
  if (s < 48 * 3600) return `${(s / 3600).toFixed(1)} h`;
  return `${(s / 86_400).toFixed(1)} d`;
}
