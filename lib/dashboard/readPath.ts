import { config } from "@/lib/config";
import type { Database } from "@/lib/db";
import {
  hitRatio,
  type ReadPathProcess,
  readPathProcess,
  ttfbQuantile,
} from "@/lib/metrics/readPath";
import { bucketSecondsFor } from "./claimStats";

const HOUR_MS = 3_600_000;
/** The Overview's window for levels (./overview.ts SHORT_WINDOW_MS). */
const SHORT_MS = 5 * 60_000;
/**
 * No model built for 5 build intervals while changed stories wait (10 s at the default 2 s):
 * one slow build or a lock handed over is 1–2 intervals; five is a builder that is not running.
 */
export const STALE_INTERVALS = 5;

/** One build's lag figures as read_model_builds keeps them (ms, over its changed stories). */
export interface BuildLag {
  changed: number;
  p50Ms: number;
  p99Ms: number;
}

/**
 * A quantile of the lag of every story that changed in a set of builds, from each build's
 * stored p50 and p99 and its number of changed stories.
 *
 * Why not the changed-weighted mean of the builds' p99s: a p99 is not additive. One build of
 * 1,000 stories at p99 600 s among 99 builds of 10 at 1 s gives a mean of ~300 s, while the
 * stories' own p99 (20 of 1,990 above it) lies inside the big build's tail. Instead each build
 * stands for a distribution through its known points: 0 at 0 ms, 0.5 at its p50, 0.99 at its
 * p99, linear between, and its last 1 % spread up to twice its p99 (lag tails are long: a story
 * that waited behind a stalled stage); the builds' distributions are mixed, weighted by their
 * changed stories, and the quantile of the mixture solved by bisection. It is exact when every
 * build has the same figures, and always lies between the builds' smallest and largest figure of
 * that quantile (at q = 0.5 and 0.99). The exact answer would need every story's lag, which the
 * builder does not keep; Prometheus has it, bucketed, in wirewatch_read_model_lag_seconds.
 */
export function mixQuantile(builds: readonly BuildLag[], q: number): number | null {
  const parts = builds.filter((b) => b.changed > 0 && Number.isFinite(b.p50Ms + b.p99Ms));
  const total = parts.reduce((n, b) => n + b.changed, 0);
  if (total === 0) return null;
  const cdf = (b: BuildLag, x: number): number => {
    const p50 = Math.max(0, b.p50Ms);
    const p99 = Math.max(p50, b.p99Ms);
    if (x <= 0) return 0;
    if (x < p50) return (0.5 * x) / p50;
    if (x < p99) return 0.5 + (0.49 * (x - p50)) / (p99 - p50);
    const end = 2 * p99;
    if (x >= end || end === p99) return 1;
    return 0.99 + (0.01 * (x - p99)) / (end - p99);
  };
  const mixed = (x: number) => parts.reduce((n, b) => n + b.changed * cdf(b, x), 0) / total;
  let lo = 0;
  let hi = Math.max(...parts.map((b) => 2 * Math.max(b.p50Ms, b.p99Ms)), 1);
  // 60 halvings of at most hours in ms: far below a millisecond.
  for (let i = 0; i < 60 && hi - lo > 0.01; i++) {
    const mid = (lo + hi) / 2;
    if (mixed(mid) >= q) hi = mid;
    else lo = mid;
  }
  return hi;
}

export interface LagFigures {
  builds: number;
  /** Stories that changed in those builds (each counted once per build it changed in). */
  stories: number;
  p50Ms: number;
  p99Ms: number;
}

function lagFigures(rows: readonly BuildLag[]): LagFigures | null {
  const p50 = mixQuantile(rows, 0.5);
  const p99 = mixQuantile(rows, 0.99);
  if (p50 === null || p99 === null) return null;
  return {
    builds: rows.filter((r) => r.changed > 0).length,
    stories: rows.reduce((n, r) => n + Math.max(0, r.changed), 0),
    p50Ms: Math.round(p50),
    p99Ms: Math.round(p99),
  };
}

export interface ReadModelSummary {
  now: Date;
  intervalMs: number;
  /** The newest build that finished without an error: the model readers are served. */
  head: {
    version: number;
    startedAt: Date;
    finishedAt: Date;
    ageSeconds: number;
    buildMs: number | null;
    stories: number;
    changed: number;
    payloads: number;
    bytes: number;
    trigger: string;
  } | null;
  /** The newest failed build, when it is newer than the head. */
  failing: { at: Date; error: string } | null;
  /** Fetch → available in the read model over the builds that finished in each window. */
  lag: { lastFiveMinutes: LagFigures | null; lastHour: LagFigures | null };
  /**
   * Stories the index stage changed since the head's build started and no model holds yet:
   * stale when the oldest has waited past STALE_INTERVALS build intervals.
   */
  pending: { stories: number; oldestAt: Date | null; stale: boolean };
  /** This process's store and requests (lib/metrics/readPath.ts): per process. */
  store: ReadPathProcess["store"];
  /** What the banner says, or null: the store fell back to memory, or the model is stale. */
  banners: { kind: "fallback" | "stale" | "failing"; text: string }[];
}

interface BuildRow {
  version: number;
  started_at: Date;
  finished_at: Date | null;
  build_ms: number | null;
  stories: number;
  changed: number;
  payloads: number;
  bytes: number;
  lag_p50_ms: number | null;
  lag_p99_ms: number | null;
  trigger: string;
  error: string | null;
}

/**
 * The read model at a glance, for the Overview and the Read path page: the head (the newest
 * finished build on read_model_builds_started_idx, walked backwards), the last hour's builds (a
 * range of the same index: ~1,800 rows at one build every 2 s), and the changes no model holds
 * yet (read_stories_indexed_idx, a range past the head's start).
 */
export async function readModelSummary(
  db: Database,
  {
    now = new Date(),
    intervalMs = config().WIREWATCH_READ_MODEL_INTERVAL_MS,
    process = readPathProcess(),
  }: { now?: Date; intervalMs?: number; process?: ReadPathProcess } = {},
): Promise<ReadModelSummary> {
  const from = new Date(now.getTime() - HOUR_MS);
  const [heads, failures, hour] = await Promise.all([
    db.prisma.$queryRaw<BuildRow[]>`
      SELECT model_version::float8 AS version, started_at, finished_at, build_ms, stories,
             changed, payloads, bytes::float8 AS bytes, lag_p50_ms, lag_p99_ms, trigger, error
      FROM read_model_builds
      WHERE finished_at IS NOT NULL AND error IS NULL AND started_at <= ${now}
      ORDER BY started_at DESC LIMIT 1`,
    db.prisma.$queryRaw<{ at: Date; error: string }[]>`
      SELECT coalesce(finished_at, started_at) AS at, error FROM read_model_builds
      WHERE error IS NOT NULL AND started_at <= ${now}
      ORDER BY started_at DESC LIMIT 1`,
    db.prisma.$queryRaw<{ finished_at: Date; changed: number; p50: number; p99: number }[]>`
      SELECT finished_at, changed, lag_p50_ms AS p50, lag_p99_ms AS p99 FROM read_model_builds
      WHERE started_at >= ${new Date(from.getTime() - HOUR_MS)} AND started_at <= ${now}
        AND finished_at >= ${from} AND finished_at <= ${now} AND error IS NULL
        AND changed > 0 AND lag_p50_ms IS NOT NULL AND lag_p99_ms IS NOT NULL`,
  ]);
  const h = heads[0];
  const head = h?.finished_at
    ? {
        version: h.version,
        startedAt: h.started_at,
        finishedAt: h.finished_at,
        ageSeconds: Math.max(0, (now.getTime() - h.finished_at.getTime()) / 1000),
        buildMs: h.build_ms,
        stories: h.stories,
        changed: h.changed,
        payloads: h.payloads,
        bytes: h.bytes,
        trigger: h.trigger,
      }
    : null;
  const [pendingRow] = await db.prisma.$queryRaw<{ n: number; oldest: Date | null }[]>`
    SELECT count(*)::int AS n, min(indexed_at) AS oldest FROM read_stories
    WHERE indexed_at > ${head?.startedAt ?? new Date(0)} AND indexed_at <= ${now}`;
  const oldestAt = pendingRow?.oldest ?? null;
  const staleAfterMs = STALE_INTERVALS * intervalMs;
  const stale = oldestAt !== null && now.getTime() - oldestAt.getTime() > staleAfterMs;
  const f = failures[0];
  const failing = f && (!head || f.at > head.finishedAt) ? { at: f.at, error: f.error } : null;

  const rows = hour.map((r) => ({
    t: r.finished_at.getTime(),
    changed: r.changed,
    p50Ms: r.p50,
    p99Ms: r.p99,
  }));
  const short = rows.filter((r) => r.t >= now.getTime() - SHORT_MS);

  const banners: ReadModelSummary["banners"] = [];
  const store = process.store;
  if (store?.fallback) {
    banners.push({
      kind: "fallback",
      text: `Redis is down: this process serves the read model from its own memory${store.error ? ` (${store.error})` : ""}. Other instances do not see its builds until Redis is back.`,
    });
  }
  if (stale) {
    const waited = Math.round((now.getTime() - (oldestAt?.getTime() ?? 0)) / 1000);
    banners.push({
      kind: "stale",
      text: `${head ? `No read model built for ${waited} s` : "No read model built yet"}: ${pendingRow?.n ?? 0} changed ${pendingRow?.n === 1 ? "story waits" : "stories wait"} (more than ${STALE_INTERVALS}× the build interval of ${intervalMs / 1000} s). Readers get the last model${head ? ` (version ${head.version})` : ""}.`,
    });
  }
  if (failing) {
    banners.push({ kind: "failing", text: `The last build failed: ${failing.error}` });
  }
  return {
    now,
    intervalMs,
    head,
    failing,
    lag: { lastFiveMinutes: lagFigures(short), lastHour: lagFigures(rows) },
    pending: { stories: pendingRow?.n ?? 0, oldestAt, stale },
    store,
    banners,
  };
}

export interface BuildPoint {
  /** Bucket start, epoch ms. */
  t: number;
  builds: number;
  failed: number;
  /** The bucket's slowest build and the mean, ms (null: no build finished in it). */
  buildMaxMs: number | null;
  buildMeanMs: number | null;
  /** Fetch → read model over the bucket's changed stories (mixQuantile). */
  lagP50Ms: number | null;
  lagP99Ms: number | null;
  changed: number;
}

/**
 * Builds over time in ~30 buckets (./claimStats.ts bucketSecondsFor, as the Queues page): per bucket the builds, their
 * duration and the lag of the stories they made available. Reads the window's rows on
 * read_model_builds_started_idx: at one build every 2 s, 1,800 an hour, 43,200 a day (a few
 * numbers each, folded here; the mixture needs each build's figures, not a SQL average).
 */
export async function buildSeries(
  db: Database,
  { hours = 1, now = new Date() }: { hours?: number; now?: Date } = {},
): Promise<{ bucketSeconds: number; points: BuildPoint[] }> {
  const from = new Date(now.getTime() - hours * HOUR_MS);
  const bucketSeconds = bucketSecondsFor(hours);
  const rows = await db.prisma.$queryRaw<
    {
      started_at: Date;
      build_ms: number | null;
      changed: number;
      p50: number | null;
      p99: number | null;
      failed: boolean;
    }[]
  >`
    SELECT started_at, build_ms, changed, lag_p50_ms AS p50, lag_p99_ms AS p99,
           (error IS NOT NULL) AS failed
    FROM read_model_builds
    WHERE started_at >= ${from} AND started_at <= ${now}
      AND (finished_at IS NOT NULL OR error IS NOT NULL)
    ORDER BY started_at`;
  const size = bucketSeconds * 1000;
  const buckets = new Map<number, { rows: typeof rows }>();
  for (const r of rows) {
    const t = Math.floor(r.started_at.getTime() / size) * size;
    const b = buckets.get(t) ?? { rows: [] };
    b.rows.push(r);
    buckets.set(t, b);
  }
  const points: BuildPoint[] = [];
  for (let t = Math.floor(from.getTime() / size) * size; t <= now.getTime(); t += size) {
    const b = buckets.get(t)?.rows ?? [];
    const ok = b.filter((r) => !r.failed);
    const durations = ok.flatMap((r) => (r.build_ms === null ? [] : [r.build_ms]));
    const lags = ok.flatMap((r) =>
      r.p50 === null || r.p99 === null ? [] : [{ changed: r.changed, p50Ms: r.p50, p99Ms: r.p99 }],
    );
    const p50 = mixQuantile(lags, 0.5);
    const p99 = mixQuantile(lags, 0.99);
    points.push({
      t,
      builds: ok.length,
      failed: b.length - ok.length,
      buildMaxMs: durations.length ? Math.max(...durations) : null,
      buildMeanMs: durations.length
        ? durations.reduce((n, d) => n + d, 0) / durations.length
        : null,
      lagP50Ms: p50 === null ? null : Math.round(p50),
      lagP99Ms: p99 === null ? null : Math.round(p99),
      changed: lags.reduce((n, l) => n + l.changed, 0),
    });
  }
  return { bucketSeconds, points };
}

export interface ReadPathView {
  summary: ReadModelSummary;
  hours: number;
  bucketSeconds: number;
  builds: BuildPoint[];
  /** This process's requests since it started (lib/metrics/readPath.ts): per process. */
  requests: {
    since: Date;
    counts: ReadPathProcess["requests"];
    total: number;
    hitRatio: number | null;
    ttfbP50Ms: number | null;
    ttfbP99Ms: number | null;
  };
}

/** The Read path page: the summary, builds over time and this process's requests. */
export async function readPathView(
  db: Database,
  {
    hours = 1,
    now = new Date(),
    intervalMs,
    process = readPathProcess(),
  }: { hours?: number; now?: Date; intervalMs?: number; process?: ReadPathProcess } = {},
): Promise<ReadPathView> {
  const [summary, series] = await Promise.all([
    readModelSummary(db, { now, intervalMs, process }),
    buildSeries(db, { hours, now }),
  ]);
  const p50 = ttfbQuantile(process.ttfb, 0.5);
  const p99 = ttfbQuantile(process.ttfb, 0.99);
  return {
    summary,
    hours,
    bucketSeconds: series.bucketSeconds,
    builds: series.points,
    requests: {
      since: process.since,
      counts: process.requests,
      total: Object.values(process.requests).reduce((n, c) => n + c, 0),
      hitRatio: hitRatio(process.requests),
      ttfbP50Ms: p50 === null ? null : p50 * 1000,
      ttfbP99Ms: p99 === null ? null : p99 * 1000,
    },
  };
}
