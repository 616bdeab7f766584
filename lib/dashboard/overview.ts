import { type Config, config } from "@/lib/config";
import type { Database } from "@/lib/db";
import { HEALTH_STATES, type HealthState } from "@/lib/health";
import {
  type IngestionState,
  type IngestionStatus,
  ingestionStatus,
  ingestionUnhealthy,
} from "@/lib/ingestionStatus";
import { claimWindows } from "./claimStats";
import { type BudgetState, budgetStates } from "./costs";
import { type LagFigures, type ReadModelSummary, readModelSummary } from "./readPath";
import { collectorFactsSql, healthOfRank, healthRankSql } from "./sourceHealthSql";
import { sourceSnapshot } from "./sourceIndex";

export type Level = "ok" | "amber" | "red";

const HOUR_MS = 3_600_000;
/**
 * The window the levels are judged on. An hour's average hid a total failure behind the good
 * minutes before it, and kept a recovered system amber for most of an hour; 5 minutes holds at
 * least one poll of a source on the default 300 s interval and turns back to ok within 5
 * minutes of recovery. The hour stays beside it for the trend.
 */
export const SHORT_WINDOW_MS = 5 * 60_000;
/** Sources failing or stalled past this share (most of them) make the page red, not amber. */
const MOST_SOURCES = 0.5;
const RANK: Record<Level, number> = { ok: 0, amber: 1, red: 2 };

export interface Overview {
  now: Date;
  status: Level;
  ingest: {
    level: Level;
    /** The current rate: observations per minute over the last 5 minutes. */
    perMinute: number;
    lastFiveMinutes: number;
    lastHour: number;
    series: { t: number; count: number }[];
  };
  /** Whether ingestion runs: this process's own (inline), and, wherever it runs, whether any
   *  source's collector is still active. */
  ingestion: {
    level: Level;
    mode: "inline" | "elsewhere" | "unknown";
    state: IngestionState | null;
    /** Why it is not running, for the banner; null when it runs. */
    reason: string | null;
  };
  lag: {
    level: Level;
    /**
     * The headline (seed 003): fetch → available in the read model, over the builds of the last
     * 5 minutes and of the hour (./readPath.ts mixQuantile); null without a build that changed
     * stories in the window.
     */
    readModel: { lastFiveMinutes: LagFigures | null; lastHour: LagFigures | null };
    /** The worst stage's claim-wait p99, in seconds; null with no claims in the last hour. */
    worstP99Seconds: number | null;
    stages: { queue: string; claims: number; p50Ms: number; p99Ms: number }[];
  };
  deadLetters: { level: Level; total: number; byQueue: { queue: string; count: number }[] };
  /** `sources`: the open ones, then the half-open, at most BREAKER_SOURCES_SHOWN of them. */
  breakers: { level: Level; open: number; halfOpen: number; sources: string[] };
  /** Fetches over the last 5 minutes (what the level is judged on), and over the hour. */
  fetches: {
    attempts: number;
    errors: number;
    notModified: number;
    errorRate: number | null;
    notModifiedRate: number | null;
    level: Level;
    lastHour: { attempts: number; errors: number; errorRate: number | null };
  };
  health: { level: Level; total: number; byState: Record<HealthState, number> };
  outage: { since: Date; failingHosts: number; totalHosts: number; detail: string | null } | null;
  /**
   * Extraction's spend today (UTC) and each paid provider's budget: amber while one is stopped at
   * its budget (the providers after it answer, so nothing is lost, but the paid one is not used).
   */
  extraction: { level: Level; todayUsd: number; todayCalls: number; budgets: BudgetState[] };
  /**
   * The model readers are served: red when changes wait past 5 build intervals with no build
   * (stale), amber while this process serves from memory because Redis is down, or while the
   * last build failed.
   */
  readModel: { level: Level } & Omit<ReadModelSummary, "now" | "lag">;
  thresholds: Pick<
    Config,
    | "ALERT_DLQ_AMBER"
    | "ALERT_DLQ_RED"
    | "ALERT_LAG_P99_AMBER_SECONDS"
    | "ALERT_LAG_P99_RED_SECONDS"
    | "ALERT_ERROR_RATE_AMBER"
    | "ALERT_ERROR_RATE_RED"
  >;
}

export type Thresholds = Overview["thresholds"];

export function thresholdsFrom(c: Config = config()): Thresholds {
  return {
    ALERT_DLQ_AMBER: c.ALERT_DLQ_AMBER,
    ALERT_DLQ_RED: c.ALERT_DLQ_RED,
    ALERT_LAG_P99_AMBER_SECONDS: c.ALERT_LAG_P99_AMBER_SECONDS,
    ALERT_LAG_P99_RED_SECONDS: c.ALERT_LAG_P99_RED_SECONDS,
    ALERT_ERROR_RATE_AMBER: c.ALERT_ERROR_RATE_AMBER,
    ALERT_ERROR_RATE_RED: c.ALERT_ERROR_RATE_RED,
  };
}

const worse = (a: Level, b: Level): Level => (RANK[b] > RANK[a] ? b : a);

const level = (value: number | null, amber: number, red: number): Level =>
  value === null ? "ok" : value >= red ? "red" : value >= amber ? "amber" : "ok";

/**
 * Health at a glance: levels judged on the last 5 minutes, figures shown for the hour beside
 * them, each read a bounded range of an indexed time column (news_events.received_at,
 * queue_claim_stats.minute, fetch_attempts.started_at) or a partial index (dead jobs), so the page costs
 * the same on a million rows as on a hundred.
 */
export async function overview(
  db: Database,
  {
    now: at,
    thresholds = thresholdsFrom(),
    ingestion = ingestionStatus(),
    budgets = { llm: config().WIREWATCH_EXTRACT_LLM_DAILY_BUDGET_USD },
    readPath,
  }: {
    now?: Date;
    thresholds?: Thresholds;
    ingestion?: IngestionStatus | null;
    /** Daily budget per paid provider (lib/dashboard/costs.ts budgetStates). */
    budgets?: Record<string, number | null | undefined>;
    /** The read model's build interval and this process's store state (tests set them). */
    readPath?: Omit<Parameters<typeof readModelSummary>[1], "now">;
  } = {},
): Promise<Overview> {
  const now = at ?? new Date();
  const from = new Date(now.getTime() - HOUR_MS);
  const recent = new Date(now.getTime() - SHORT_WINDOW_MS);
  const [ingest, lag, dead, fetches, health, outage, spend, model] = await Promise.all([
    db.prisma.$queryRaw<{ minute: Date; count: number }[]>`
      SELECT date_trunc('minute', received_at) AS minute, count(*)::int AS count
      FROM news_events
      WHERE received_at >= ${from} AND received_at <= ${now}
      GROUP BY 1 ORDER BY 1`,
    claimWindows(db, { from, now }),
    db.prisma.$queryRaw<{ queue: string; count: number }[]>`
      SELECT queue, count(*)::int AS count FROM jobs WHERE state = 'dead'
      GROUP BY queue ORDER BY queue`,
    db.prisma.$queryRaw<
      {
        attempts: number;
        errors: number;
        not_modified: number;
        hour_attempts: number;
        hour_errors: number;
      }[]
    >`
      SELECT count(*) FILTER (WHERE started_at >= ${recent})::int AS attempts,
             count(*) FILTER (WHERE started_at >= ${recent}
                                AND code NOT IN ('ok', 'not_modified'))::int AS errors,
             count(*) FILTER (WHERE started_at >= ${recent} AND code = 'not_modified')::int
               AS not_modified,
             count(*)::int AS hour_attempts,
             count(*) FILTER (WHERE code NOT IN ('ok', 'not_modified'))::int AS hour_errors
      FROM fetch_attempts
      WHERE started_at >= ${from} AND started_at <= ${now}`,
    sourceHealthCounts(db, at),
    db.prisma.networkOutage.findFirst({ where: { endedAt: null }, orderBy: { id: "desc" } }),
    budgetStates(db, { now, budgets }),
    readModelSummary(db, { ...readPath, now }),
  ]);

  const firstMinute = Math.floor(from.getTime() / 60_000) * 60_000 + 60_000;
  // The window's partial first minute is folded into the first whole one, so the hour adds up.
  const perMinute = new Map<number, number>();
  for (const r of ingest) {
    const t = Math.max(firstMinute, new Date(r.minute).getTime());
    perMinute.set(t, (perMinute.get(t) ?? 0) + r.count);
  }
  const series: { t: number; count: number }[] = [];
  for (let t = firstMinute; t <= now.getTime(); t += 60_000) {
    series.push({ t, count: perMinute.get(t) ?? 0 });
  }
  const lastHour = ingest.reduce((n, r) => n + r.count, 0);
  const [recentCount] = await db.prisma.$queryRaw<{ count: number }[]>`
    SELECT count(*)::int AS count FROM news_events
    WHERE received_at >= ${recent} AND received_at <= ${now}`;
  const lastFiveMinutes = recentCount?.count ?? 0;

  const stages = lag.map((r) => ({
    queue: r.queue,
    claims: r.claims,
    p50Ms: r.p50Ms,
    p99Ms: r.p99Ms,
  }));
  const worstP99Seconds = stages.length ? Math.max(...stages.map((s) => s.p99Ms)) / 1000 : null;
  const readModelP99 = model.lag.lastFiveMinutes ? model.lag.lastFiveMinutes.p99Ms / 1000 : null;
  const { now: _now, lag: readModelLag, ...readModel } = model;

  const deadTotal = dead.reduce((n, r) => n + r.count, 0);

  const f = fetches[0] ?? {
    attempts: 0,
    errors: 0,
    not_modified: 0,
    hour_attempts: 0,
    hour_errors: 0,
  };
  const errorRate = f.attempts > 0 ? f.errors / f.attempts : null;

  const { byState, total, breakers } = health;
  // Judged: the sources meant to be collecting and past their start-up span.
  const judged = total - byState.disabled - byState.starting;
  const troubled = byState.failing + byState.stalled;
  const mostFail = judged > 0 && troubled / judged > MOST_SOURCES;
  const nothingCollects = judged > 0 && byState.stalled === judged;
  const processDown = ingestionUnhealthy(ingestion);
  const ingestionReason = processDown
    ? ingestion?.mode === "inline"
      ? (ingestion.reason ?? `ingestion is ${ingestion.state.replaceAll("_", " ")}`)
      : null
    : nothingCollects
      ? `ingestion has stopped: no source's collector has been active within its interval (${judged} of ${judged} stalled)`
      : null;

  const o: Omit<Overview, "status"> = {
    now,
    ingest: {
      // Nothing is coming in when ingestion stops or most sources fail: the tile says so.
      level: ingestionReason || mostFail ? "red" : "ok",
      perMinute: Math.round((lastFiveMinutes / (SHORT_WINDOW_MS / 60_000)) * 10) / 10,
      lastFiveMinutes,
      lastHour,
      series,
    },
    ingestion: {
      level: ingestionReason ? "red" : "ok",
      mode: ingestion?.mode ?? "unknown",
      state: ingestion?.mode === "inline" ? ingestion.state : null,
      reason: ingestionReason,
    },
    // Judged on the worse of the two: stories late to readers, or a stage that makes them so.
    lag: {
      level: worse(
        level(
          readModelP99,
          thresholds.ALERT_LAG_P99_AMBER_SECONDS,
          thresholds.ALERT_LAG_P99_RED_SECONDS,
        ),
        level(
          worstP99Seconds,
          thresholds.ALERT_LAG_P99_AMBER_SECONDS,
          thresholds.ALERT_LAG_P99_RED_SECONDS,
        ),
      ),
      readModel: readModelLag,
      worstP99Seconds,
      stages,
    },
    deadLetters: {
      level: level(deadTotal, thresholds.ALERT_DLQ_AMBER, thresholds.ALERT_DLQ_RED),
      total: deadTotal,
      byQueue: dead,
    },
    // No setting of its own: one source's breaker open is a source down (amber); the local
    // network is what turns the page red (the outage banner).
    breakers: {
      level: breakers.open + breakers.halfOpen > 0 ? "amber" : "ok",
      open: breakers.open,
      halfOpen: breakers.halfOpen,
      sources: breakers.sources,
    },
    fetches: {
      attempts: f.attempts,
      errors: f.errors,
      notModified: f.not_modified,
      errorRate,
      notModifiedRate: f.attempts > 0 ? f.not_modified / f.attempts : null,
      level: level(errorRate, thresholds.ALERT_ERROR_RATE_AMBER, thresholds.ALERT_ERROR_RATE_RED),
      lastHour: {
        attempts: f.hour_attempts,
        errors: f.hour_errors,
        errorRate: f.hour_attempts > 0 ? f.hour_errors / f.hour_attempts : null,
      },
    },
    health: {
      level: mostFail ? "red" : troubled > 0 ? "amber" : "ok",
      total,
      byState,
    },
    outage: outage
      ? {
          since: outage.startedAt,
          failingHosts: outage.failingHosts,
          totalHosts: outage.totalHosts,
          detail: outage.detail,
        }
      : null,
    extraction: {
      level: spend.states.some((b) => b.exhausted) ? "amber" : "ok",
      todayUsd: spend.today.costUsd,
      todayCalls: spend.today.calls,
      budgets: spend.states,
    },
    readModel: {
      level: readModel.pending.stale
        ? "red"
        : readModel.store?.fallback || readModel.failing
          ? "amber"
          : "ok",
      ...readModel,
    },
    thresholds,
  };
  const levels: Level[] = [
    o.ingest.level,
    o.ingestion.level,
    o.lag.level,
    o.deadLetters.level,
    o.breakers.level,
    o.fetches.level,
    o.health.level,
    o.outage ? "red" : "ok",
    o.extraction.level,
    o.readModel.level,
  ];
  const status = levels.reduce<Level>(worse, "ok");
  return { ...o, status };
}

/** Sources named on the breakers tile: enough to act on, few enough for a tile at 100k sources. */
export const BREAKER_SOURCES_SHOWN = 20;

interface SourceHealthCounts {
  total: number;
  byState: Record<HealthState, number>;
  breakers: { open: number; halfOpen: number; sources: string[] };
}

/**
 * Sources by health state, and the breakers not closed.
 *
 * Health changes with the clock (./sourceHealthSql.ts), so counting it is a pass over every
 * source: with `at` given (tests) one SQL statement at that instant; live, the process's
 * snapshot of every source's keys (./sourceIndex.ts, at most a few seconds old), which the
 * Sources list shares, so a poll costs a walk over memory. Before, the page loaded every
 * source's row and the hour's attempts per poll. The breakers are read fresh from the partial
 * index source_state_breaker_idx, which holds only the sources whose breaker is not closed.
 */
async function sourceHealthCounts(db: Database, at?: Date): Promise<SourceHealthCounts> {
  const [counts, breakers] = await Promise.all([
    at
      ? db.prisma.$queryRaw<{ rank: number; count: number }[]>`
          SELECT ${healthRankSql(at)} AS rank, count(*)::int AS count
          FROM sources s
          LEFT JOIN source_state st ON st.source_id = s.id
          ${collectorFactsSql(at)}
          GROUP BY 1`
      : sourceSnapshot(db).then(({ keys }) => {
          const n = new Map<number, number>();
          for (const k of keys) n.set(k.health, (n.get(k.health) ?? 0) + 1);
          return [...n].map(([rank, count]) => ({ rank, count }));
        }),
    db.prisma.$queryRaw<{ state: string; count: number; ids: string[] }[]>`
      SELECT breaker_state AS state, count(*)::int AS count,
             (array_agg(source_id ORDER BY source_id))[1:${BREAKER_SOURCES_SHOWN}::int] AS ids
      FROM source_state
      WHERE breaker_state <> 'closed'
      GROUP BY 1`,
  ]);
  const byState = Object.fromEntries(HEALTH_STATES.map((s) => [s, 0])) as Record<
    HealthState,
    number
  >;
  for (const r of counts) byState[healthOfRank(Number(r.rank))] += r.count;
  const open = breakers.find((b) => b.state === "open");
  const halfOpen = breakers.find((b) => b.state === "half_open");
  return {
    total: counts.reduce((n, r) => n + r.count, 0),
    byState,
    breakers: {
      open: open?.count ?? 0,
      halfOpen: halfOpen?.count ?? 0,
      sources: [...(open?.ids ?? []), ...(halfOpen?.ids ?? [])].slice(0, BREAKER_SOURCES_SHOWN),
    },
  };
}
