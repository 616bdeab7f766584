import { type Config, config } from "@/lib/config";
import type { Database } from "@/lib/db";
import { HEALTH_STATES, type HealthState } from "@/workers/collectors/health";
import { listSources } from "./sources";

export type Level = "ok" | "amber" | "red";

const HOUR_MS = 3_600_000;
const RANK: Record<Level, number> = { ok: 0, amber: 1, red: 2 };

export interface Overview {
  now: Date;
  status: Level;
  ingest: { perMinute: number; lastHour: number; series: { t: number; count: number }[] };
  lag: {
    level: Level;
    /** The worst stage's p99, in seconds; null with no claims in the last hour. */
    worstP99Seconds: number | null;
    stages: { queue: string; claims: number; p50Ms: number; p99Ms: number }[];
  };
  deadLetters: { level: Level; total: number; byQueue: { queue: string; count: number }[] };
  breakers: { level: Level; open: number; halfOpen: number; sources: string[] };
  fetches: {
    attempts: number;
    errors: number;
    notModified: number;
    errorRate: number | null;
    notModifiedRate: number | null;
    level: Level;
  };
  health: { level: Level; total: number; byState: Record<HealthState, number> };
  outage: { since: Date; failingHosts: number; totalHosts: number; detail: string | null } | null;
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

const level = (value: number | null, amber: number, red: number): Level =>
  value === null ? "ok" : value >= red ? "red" : value >= amber ? "amber" : "ok";

/**
 * Health at a glance: every figure over the last hour, each read a bounded range of an indexed
 * time column (news_events.received_at, lease_events.at, fetch_attempts.started_at) or a
 * partial index (dead jobs), so the page costs the same on a million rows as on a hundred.
 */
export async function overview(
  db: Database,
  { now = new Date(), thresholds = thresholdsFrom() }: { now?: Date; thresholds?: Thresholds } = {},
): Promise<Overview> {
  const from = new Date(now.getTime() - HOUR_MS);
  const [ingest, lag, dead, fetches, sources, outage] = await Promise.all([
    db.prisma.$queryRaw<{ minute: Date; count: number }[]>`
      SELECT date_trunc('minute', received_at) AS minute, count(*)::int AS count
      FROM news_events
      WHERE received_at >= ${from} AND received_at <= ${now}
      GROUP BY 1 ORDER BY 1`,
    db.prisma.$queryRaw<{ queue: string; claims: number; p50: number; p99: number }[]>`
      SELECT queue, count(*)::int AS claims,
             percentile_cont(0.5) WITHIN GROUP (ORDER BY wait_ms)::float8 AS p50,
             percentile_cont(0.99) WITHIN GROUP (ORDER BY wait_ms)::float8 AS p99
      FROM lease_events
      WHERE at >= ${from} AND at <= ${now}
        AND kind IN ('claimed', 'reclaimed') AND wait_ms IS NOT NULL
      GROUP BY queue ORDER BY queue`,
    db.prisma.$queryRaw<{ queue: string; count: number }[]>`
      SELECT queue, count(*)::int AS count FROM jobs WHERE state = 'dead'
      GROUP BY queue ORDER BY queue`,
    db.prisma.$queryRaw<{ attempts: number; errors: number; not_modified: number }[]>`
      SELECT count(*)::int AS attempts,
             count(*) FILTER (WHERE code NOT IN ('ok', 'not_modified'))::int AS errors,
             count(*) FILTER (WHERE code = 'not_modified')::int AS not_modified
      FROM fetch_attempts
      WHERE started_at >= ${from} AND started_at <= ${now}`,
    listSources(db, now),
    db.prisma.networkOutage.findFirst({ where: { endedAt: null }, orderBy: { id: "desc" } }),
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

  const stages = lag.map((r) => ({
    queue: r.queue,
    claims: r.claims,
    p50Ms: Math.round(r.p50),
    p99Ms: Math.round(r.p99),
  }));
  const worstP99Seconds = stages.length ? Math.max(...stages.map((s) => s.p99Ms)) / 1000 : null;

  const deadTotal = dead.reduce((n, r) => n + r.count, 0);

  const f = fetches[0] ?? { attempts: 0, errors: 0, not_modified: 0 };
  const errorRate = f.attempts > 0 ? f.errors / f.attempts : null;

  const byState = Object.fromEntries(HEALTH_STATES.map((s) => [s, 0])) as Record<
    HealthState,
    number
  >;
  for (const s of sources) byState[s.health.state] += 1;
  const open = sources.filter((s) => s.breaker.state === "open");
  const halfOpen = sources.filter((s) => s.breaker.state === "half_open");

  const o: Omit<Overview, "status"> = {
    now,
    ingest: { perMinute: Math.round((lastHour / 60) * 10) / 10, lastHour, series },
    lag: {
      level: level(
        worstP99Seconds,
        thresholds.ALERT_LAG_P99_AMBER_SECONDS,
        thresholds.ALERT_LAG_P99_RED_SECONDS,
      ),
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
      level: open.length + halfOpen.length > 0 ? "amber" : "ok",
      open: open.length,
      halfOpen: halfOpen.length,
      sources: [...open, ...halfOpen].map((s) => s.id),
    },
    fetches: {
      attempts: f.attempts,
      errors: f.errors,
      notModified: f.not_modified,
      errorRate,
      notModifiedRate: f.attempts > 0 ? f.not_modified / f.attempts : null,
      level: level(errorRate, thresholds.ALERT_ERROR_RATE_AMBER, thresholds.ALERT_ERROR_RATE_RED),
    },
    health: {
      level: byState.failing + byState.stalled > 0 ? "amber" : "ok",
      total: sources.length,
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
    thresholds,
  };
  const levels: Level[] = [
    o.lag.level,
    o.deadLetters.level,
    o.breakers.level,
    o.fetches.level,
    o.health.level,
    o.outage ? "red" : "ok",
  ];
  const status = levels.reduce<Level>((w, l) => (RANK[l] > RANK[w] ? l : w), "ok");
  return { ...o, status };
}
