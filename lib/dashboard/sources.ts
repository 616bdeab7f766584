import { DEFAULT_BREAKER } from "@/lib/breaker";
import type { Database } from "@/lib/db";
import type { Prisma } from "@/lib/generated/prisma/client";
import { expectedActivitySeconds, GAPS_TO_LEARN, type Health, sourceHealth } from "@/lib/health";
import { nextPollSeconds } from "@/lib/schedule/nextPoll";
import { pollingNote } from "@/lib/schedule/pollNote";
import { sourceSnapshot } from "./sourceIndex";
import { needsSnapshot, pageFromSnapshot, type SourceListQuery, sourcePage } from "./sourceList";

const HOUR_MS = 3_600_000;

/** A source page's attempts chart never has more points than this, whatever the window. */
export const ATTEMPT_MAX_POINTS = 200;

/**
 * Bucket lengths in minutes, each a divisor of the next period a reader thinks in. Five minutes is
 * the shortest: the hour keeps the sparkline's 12 buckets (a table cell stays readable) and a
 * source polled every few minutes still has an attempt in most buckets.
 */
const ATTEMPT_BUCKET_MINUTES = [5, 10, 15, 30, 60, 120, 180, 360, 720, 1440] as const;

/**
 * The shortest bucket that keeps `hours` of attempts within ATTEMPT_MAX_POINTS: an hour and
 * 6 hours in 5 minutes (12 and 72 points), a day in 10 minutes (144), a week in hours (168).
 */
export function attemptBucketSeconds(hours: number): number {
  const minutes = hours * 60;
  const fits = ATTEMPT_BUCKET_MINUTES.find((m) => minutes / m <= ATTEMPT_MAX_POINTS);
  return (fits ?? Math.ceil(minutes / ATTEMPT_MAX_POINTS)) * 60;
}

/** The span an attempts series covers, up to `to`, in buckets aligned to the epoch. */
interface AttemptWindow {
  from: Date;
  to: Date;
  bucketSeconds: number;
}

const attemptWindow = (to: Date, hours: number): AttemptWindow => ({
  from: new Date(to.getTime() - hours * HOUR_MS),
  to,
  bucketSeconds: attemptBucketSeconds(hours),
});

/**
 * The whole buckets of a window, first and last by number: the partial bucket at its start is
 * folded into the first whole one, so `hours / bucket` points whatever the time of asking.
 */
function bucketSpan({ from, to, bucketSeconds }: AttemptWindow): [number, number] {
  return [
    Math.floor(from.getTime() / 1000 / bucketSeconds) + 1,
    Math.floor(to.getTime() / 1000 / bucketSeconds),
  ];
}

/**
 * The admin's pause is a disabled_reason: the frontier skips a source with one (and deletes its
 * waiting jobs), running jobs end when they find it, the breaker's admit refuses it (disabled_at),
 * and a sources-file sync keeps source_state as it is, so the pause outlives edits and restarts.
 */
export const PAUSED_REASON = "paused by admin";

/**
 * A dashboard source an admin removed: switched off (enabled false) with this reason, so its
 * items, events and audit stay, resume does not bring it back, and its id and URL stay taken.
 */
export const REMOVED_REASON = "removed by admin";

export interface CollectorView {
  collector: string;
  state: Health["state"];
  reason: string;
  connected: boolean;
  lastActivityAt: Date | null;
  lastActivityKind: string | null;
  lastContentAt: Date | null;
  /** Learned usual gap between items; null until enough gaps were seen. */
  usualGapSeconds: number | null;
  gapsSeen: number;
}

export interface BreakerView {
  state: string;
  since: Date | null;
  failures: number;
  /** open: when the cool-down ends and one probe may go; half-open: when the probe's lease ends. */
  nextProbeAt: Date | null;
  /** Failed polls in a row that open it. */
  threshold: number;
  /** Closed but failing: when it opens if every poll until then fails (the schedule's estimate). */
  opensAt: Date | null;
  /** Closed but failing, in words: "3 of 5 failures in a row; opens in about 1 min if …". */
  outlook: string | null;
}

export interface RatePoint {
  t: number;
  attempts: number;
  errors: number;
  notModified: number;
  errorRate: number | null;
  notModifiedRate: number | null;
}

export interface SourceRow {
  id: string;
  name: string;
  kind: string;
  url: string | null;
  enabled: boolean;
  paused: boolean;
  /** Removed in the dashboard (REMOVED_REASON): shown, history kept, no longer fetched. */
  removed: boolean;
  /** "file" (wirewatch.config.json: read-only in the dashboard) or "dashboard". */
  configOrigin: string;
  health: { state: Health["state"]; reason: string };
  collectors: CollectorView[];
  breaker: BreakerView;
  lastError: { code: string | null; message: string | null; at: Date | null } | null;
  lastHour: {
    attempts: number;
    errors: number;
    notModified: number;
    errorRate: number | null;
    notModifiedRate: number | null;
  };
  /** The last hour in 5-minute buckets, oldest first. */
  series: RatePoint[];
  trustsValidators: boolean;
  nextPollAt: Date | null;
  lastPolledAt: Date | null;
  /** Set when polling is faster than the configured interval (a hot source), saying so. */
  pollingNote: string | null;
  /** Entries the latest over-long document left out (FEED_MAX_ENTRIES), when it did. */
  entriesLeftOut: { count: number; of: number | null; at: Date | null } | null;
}

const rate = (part: number, whole: number) => (whole > 0 ? part / whole : null);

type SourceWithState = Prisma.SourceGetPayload<{ include: { state: true; collectorStatus: true } }>;

function toRow(s: SourceWithState, series: RatePoint[], now: Date): SourceRow {
  const state = s.state;
  const health = sourceHealth(
    {
      kind: s.kind,
      enabled: s.enabled,
      disabledReason: state?.disabledReason ?? null,
      breakerState: state?.breakerState ?? "closed",
      lastErrorAt: state?.lastErrorAt ?? null,
      lastErrorCode: state?.lastErrorCode ?? null,
      activityIntervalSeconds: expectedActivitySeconds(
        s.kind,
        s.pollIntervalSeconds,
        state?.pollEverySeconds ?? null,
      ),
      addedAt: s.createdAt,
      collectors: s.collectorStatus.map((c) => ({
        collector: c.collector,
        lastActivityAt: c.lastActivityAt,
        lastContentAt: c.lastContentAt,
        usualGapSeconds: c.gapsSeen >= GAPS_TO_LEARN ? c.usualGapSeconds : null,
      })),
    },
    now,
  );
  const paused = state?.disabledReason === PAUSED_REASON;
  const removed = state?.disabledReason === REMOVED_REASON;
  const breakerState = state?.breakerState ?? "closed";
  const nextProbeAt =
    breakerState === "open" && state
      ? new Date(state.breakerChangedAt.getTime() + DEFAULT_BREAKER.coolDownMs)
      : breakerState === "half_open"
        ? (state?.breakerProbeUntil ?? null)
        : null;
  const totals = series.reduce(
    (t, p) => ({
      attempts: t.attempts + p.attempts,
      errors: t.errors + p.errors,
      notModified: t.notModified + p.notModified,
    }),
    { attempts: 0, errors: 0, notModified: 0 },
  );
  return {
    id: s.id,
    name: s.name,
    kind: s.kind,
    url: s.url,
    enabled: s.enabled,
    paused,
    removed,
    configOrigin: s.configOrigin,
    health: {
      state: health.state,
      reason: paused
        ? `paused by an admin ${ago(state?.disabledAt ?? null, now)}`
        : removed
          ? `removed by an admin ${ago(state?.disabledAt ?? null, now)}; its items are kept`
          : health.reason,
    },
    collectors: s.collectorStatus.map((c) => {
      const h = health.collectors.find((x) => x.collector === c.collector);
      return {
        collector: c.collector,
        state: h?.state ?? "stalled",
        reason: h?.reason ?? "",
        connected: c.connected,
        lastActivityAt: c.lastActivityAt,
        lastActivityKind: c.lastActivityKind,
        lastContentAt: c.lastContentAt,
        usualGapSeconds: c.usualGapSeconds,
        gapsSeen: c.gapsSeen,
      };
    }),
    breaker: {
      state: breakerState,
      since: state?.breakerChangedAt ?? null,
      failures: state?.breakerFailures ?? 0,
      nextProbeAt,
      threshold: DEFAULT_BREAKER.threshold,
      ...breakerOutlook(breakerState, state?.breakerFailures ?? 0, s, state?.nextPollAt, now),
    },
    lastError: state?.lastErrorCode
      ? { code: state.lastErrorCode, message: state.lastErrorMessage, at: state.lastErrorAt }
      : null,
    lastHour: {
      ...totals,
      errorRate: rate(totals.errors, totals.attempts),
      notModifiedRate: rate(totals.notModified, totals.attempts),
    },
    series,
    trustsValidators: state?.trustsValidators ?? true,
    nextPollAt: s.kind === "stream" ? null : (state?.nextPollAt ?? null),
    lastPolledAt: state?.lastPolledAt ?? null,
    pollingNote:
      s.kind === "feed" || s.kind === "page"
        ? pollingNote({
            configuredSeconds: s.pollIntervalSeconds,
            everySeconds: state?.pollEverySeconds ?? null,
            hotUntil: state?.hotUntil ?? null,
            now,
          })
        : null,
    entriesLeftOut: state?.entriesLeftOut
      ? { count: state.entriesLeftOut, of: state.entriesInDocument, at: state.entriesLeftOutAt }
      : null,
  };
}

/**
 * When a closed, failing breaker opens if the source keeps failing: its next poll (already
 * scheduled) and then each failed poll's recheck (lib/schedule/nextPoll.ts, without its
 * jitter) until the threshold, as if each poll failed once: the latest it opens (a poll whose
 * retries fail too brings it nearer, each failed request being one failure).
 */
function breakerOutlook(
  state: string,
  failures: number,
  source: { pollIntervalSeconds: number },
  nextPollAt: Date | null | undefined,
  now: Date,
): { opensAt: Date | null; outlook: string | null } {
  const threshold = DEFAULT_BREAKER.threshold;
  if (state !== "closed" || failures <= 0) return { opensAt: null, outlook: null };
  const count = `${failures} of ${threshold} failures in a row`;
  const left = Math.max(1, threshold - failures);
  let ms = Math.max(0, (nextPollAt?.getTime() ?? now.getTime()) - now.getTime());
  for (let k = 1; k < left; k++) {
    const facts = { baseSeconds: source.pollIntervalSeconds, hot: false, failures: failures + k };
    ms += nextPollSeconds(facts, () => 0.5) * 1000;
  }
  const opensAt = new Date(now.getTime() + ms);
  if (left === 1) return { opensAt, outlook: `${count}; opens at the next failure` };
  const minutes = Math.max(1, Math.round(ms / 60_000));
  return { opensAt, outlook: `${count}; opens in about ${minutes} min if it keeps failing` };
}

function ago(then: Date | null, now: Date): string {
  if (!then) return "";
  const s = Math.max(0, (now.getTime() - then.getTime()) / 1000);
  if (s < 90) return `${Math.round(s)} s ago`;
  if (s < 5400) return `${(s / 60).toFixed(1)} min ago`;
  return `${(s / 3600).toFixed(1)} h ago`;
}

interface BucketRow {
  source_id: string;
  bucket: number;
  attempts: number;
  errors: number;
  not_modified: number;
}

/**
 * Fetch attempts over a window per source in its buckets: one range scan of
 * fetch_attempts_started_idx (or of the per-source index for one source), never the whole table.
 */
async function attemptBuckets(
  db: Database,
  window: AttemptWindow,
  sourceId: string | null,
): Promise<Map<string, RatePoint[]>> {
  const { from, to, bucketSeconds } = window;
  const rows = await db.prisma.$queryRaw<BucketRow[]>`
    SELECT source_id,
           floor(extract(epoch FROM started_at) / ${bucketSeconds})::int AS bucket,
           count(*)::int AS attempts,
           count(*) FILTER (WHERE code NOT IN ('ok', 'not_modified'))::int AS errors,
           count(*) FILTER (WHERE code = 'not_modified')::int AS not_modified
    FROM fetch_attempts
    WHERE started_at >= ${from} AND started_at <= ${to}
      AND (${sourceId}::text IS NULL OR source_id = ${sourceId}::text)
    GROUP BY 1, 2`;
  return foldBuckets(window, rows);
}

/**
 * The same buckets for the sources of one list page: one range scan per source of
 * fetch_attempts_source_started_idx, so the cost follows the page, not the hour's attempts.
 */
async function attemptBucketsOf(
  db: Database,
  window: AttemptWindow,
  ids: string[],
): Promise<Map<string, RatePoint[]>> {
  if (ids.length === 0) return new Map();
  const { from, to, bucketSeconds } = window;
  const rows = await db.prisma.$queryRaw<BucketRow[]>`
    SELECT source_id,
           floor(extract(epoch FROM started_at) / ${bucketSeconds})::int AS bucket,
           count(*)::int AS attempts,
           count(*) FILTER (WHERE code NOT IN ('ok', 'not_modified'))::int AS errors,
           count(*) FILTER (WHERE code = 'not_modified')::int AS not_modified
    FROM fetch_attempts
    WHERE source_id = ANY(${ids}::text[]) AND started_at >= ${from} AND started_at <= ${to}
    GROUP BY 1, 2`;
  return foldBuckets(window, rows);
}

function foldBuckets(window: AttemptWindow, rows: BucketRow[]): Map<string, RatePoint[]> {
  const [first] = bucketSpan(window);
  const bySource = new Map<string, Map<number, BucketRow>>();
  for (const r of rows) {
    const m = bySource.get(r.source_id) ?? new Map<number, BucketRow>();
    // The partial first bucket is folded into the first whole one, so the window adds up.
    m.set(Math.max(first, r.bucket), merge(m.get(Math.max(first, r.bucket)), r));
    bySource.set(r.source_id, m);
  }
  const out = new Map<string, RatePoint[]>();
  for (const [id, m] of bySource) out.set(id, seriesOf(window, m));
  return out;
}

/** Every bucket of the window, oldest first; a bucket without a row is zero attempts. */
function seriesOf(window: AttemptWindow, rows: Map<number, BucketRow>): RatePoint[] {
  const [first, last] = bucketSpan(window);
  const points: RatePoint[] = [];
  for (let b = first; b <= last; b++) {
    const r = rows.get(b);
    const attempts = r?.attempts ?? 0;
    const errors = r?.errors ?? 0;
    const notModified = r?.not_modified ?? 0;
    points.push({
      t: b * window.bucketSeconds * 1000,
      attempts,
      errors,
      notModified,
      errorRate: rate(errors, attempts),
      notModifiedRate: rate(notModified, attempts),
    });
  }
  return points;
}

function merge(a: BucketRow | undefined, b: BucketRow): BucketRow {
  if (!a) return b;
  return {
    ...a,
    attempts: a.attempts + b.attempts,
    errors: a.errors + b.errors,
    not_modified: a.not_modified + b.not_modified,
  };
}

const emptySeries = (window: AttemptWindow) => seriesOf(window, new Map());

export interface SourceListPage {
  sources: SourceRow[];
  /** The page after this one in the same order and filters; null on the last page. */
  nextCursor: string | null;
}

/**
 * One page of sources with their health, breaker and last hour of fetching: which sources and
 * in what order is decided by the database or a snapshot of every source's keys (./sourceList.ts,
 * ./sourceIndex.ts), then only the page's rows and attempts are read, fresh. Bad cursors throw
 * BadSourceCursorError.
 */
export async function listSources(
  db: Database,
  query: SourceListQuery = {},
  at?: Date,
): Promise<SourceListPage> {
  const now = at ?? new Date();
  // `at` given (tests, a reproducible read): every key judged at that instant, in SQL. Otherwise
  // health, error-rate, last-poll and text orders and filters use the process's snapshot.
  const { ids, nextCursor } =
    !at && needsSnapshot(query)
      ? pageFromSnapshot(await sourceSnapshot(db), query)
      : await sourcePage(db, query, now);
  const hour = attemptWindow(now, 1);
  const [sources, buckets] = await Promise.all([
    db.prisma.source.findMany({
      where: { id: { in: ids } },
      include: { state: true, collectorStatus: { orderBy: { collector: "asc" } } },
    }),
    attemptBucketsOf(db, hour, ids),
  ]);
  const byId = new Map(sources.map((s) => [s.id, s]));
  const rows = ids.flatMap((id) => {
    const s = byId.get(id);
    return s ? [toRow(s, buckets.get(id) ?? emptySeries(hour), now)] : [];
  });
  return { sources: rows, nextCursor };
}

export interface SourceDetail extends SourceRow {
  pollIntervalSeconds: number;
  configOrigin: string;
  observes: string | null;
  disabledReason: string | null;
  /** The source's jobs in the frontier (fetch or stream), live and dead. */
  jobs: {
    id: string;
    queue: string;
    key: string | null;
    state: string;
    runAt: Date;
    attempts: number;
    leaseOwner: string | null;
    leaseExpiresAt: Date | null;
  }[];
  recentAttempts: {
    id: string;
    collector: string;
    startedAt: Date;
    durationMs: number;
    code: string;
    httpStatus: number | null;
    bytes: number;
    retry: number;
    message: string | null;
  }[];
  /**
   * The Fetching charts' windows: attempts over the last `hours` in buckets of `bucketSeconds`,
   * outcomes by code over the last `codesHours` (the same when a window was asked, else 1 and 24).
   */
  fetching: { hours: number; bucketSeconds: number; series: RatePoint[]; codesHours: number };
  /** Outcomes by code over the last fetching.codesHours, most frequent first. */
  codes: { code: string; count: number }[];
  /** A page: how it is read, and what each way of reading it cost over the last 24 hours. */
  reading: PageReading | null;
  /** A feed: its WebSub subscription, when discovery looked for a hub (workers/websub). */
  websub: {
    state: string;
    hub: string | null;
    expiresAt: Date | null;
    pushes: number;
    lastPushAt: Date | null;
    rejectedPushes: number;
    lastRejection: string | null;
    lastError: string | null;
  } | null;
}

/** One way of reading a page (HTTP as served, or the browser) over the last 24 hours. */
export interface PageReadingMode {
  mode: "http" | "browser";
  looks: number;
  cpuMsMedian: number;
  cpuMsP95: number;
  /** CPU-seconds the day's looks cost in all. */
  cpuSecondsTotal: number;
  wallMsMedian: number;
  requestsMedian: number;
  headlinesMedian: number;
  blocked: number;
}

export interface PageReading {
  render: "http" | "browser";
  modes: PageReadingMode[];
  /** The latest look that had requests refused: what and why (SSRF, robots.txt, method…). */
  lastBlocked: { at: Date; detail: { url: string; reason: string }[] } | null;
  /**
   * Read as served, and its latest successful look found no headline: the page may build them
   * with scripts, and the browser is offered.
   */
  offerBrowser: boolean;
}

async function pageReading(
  db: Database,
  id: string,
  render: string,
  since: Date,
): Promise<PageReading> {
  const [modes, blocked, latest] = await Promise.all([
    db.prisma.$queryRaw<
      {
        mode: "http" | "browser";
        looks: number;
        cpu_p50: number;
        cpu_p95: number;
        cpu_total: number;
        wall_p50: number;
        requests_p50: number;
        headlines_p50: number;
        blocked: number;
      }[]
    >`
      SELECT mode, count(*)::int AS looks,
             percentile_cont(0.5) WITHIN GROUP (ORDER BY cpu_ms)::float8 AS cpu_p50,
             percentile_cont(0.95) WITHIN GROUP (ORDER BY cpu_ms)::float8 AS cpu_p95,
             (sum(cpu_ms) / 1000.0)::float8 AS cpu_total,
             percentile_cont(0.5) WITHIN GROUP (ORDER BY wall_ms)::float8 AS wall_p50,
             percentile_cont(0.5) WITHIN GROUP (ORDER BY requests)::float8 AS requests_p50,
             percentile_cont(0.5) WITHIN GROUP (ORDER BY headlines)::float8 AS headlines_p50,
             sum(blocked)::int AS blocked
      FROM page_looks
      WHERE source_id = ${id} AND at >= ${since}
      GROUP BY mode
      ORDER BY mode DESC`,
    db.prisma.pageLook.findFirst({
      where: { sourceId: id, blocked: { gt: 0 } },
      orderBy: { at: "desc" },
      select: { at: true, blockedDetail: true },
    }),
    db.prisma.pageLook.findFirst({
      where: { sourceId: id, code: "ok" },
      orderBy: { at: "desc" },
      select: { mode: true, headlines: true },
    }),
  ]);
  return {
    render: render === "browser" ? "browser" : "http",
    modes: modes.map((m) => ({
      mode: m.mode,
      looks: m.looks,
      cpuMsMedian: Math.round(m.cpu_p50),
      cpuMsP95: Math.round(m.cpu_p95),
      cpuSecondsTotal: m.cpu_total,
      wallMsMedian: Math.round(m.wall_p50),
      requestsMedian: m.requests_p50,
      headlinesMedian: m.headlines_p50,
      blocked: m.blocked,
    })),
    lastBlocked: blocked
      ? {
          at: blocked.at,
          detail: (blocked.blockedDetail ?? []) as { url: string; reason: string }[],
        }
      : null,
    offerBrowser: render !== "browser" && latest?.mode === "http" && latest.headlines === 0,
  };
}

/**
 * One source, its jobs, its latest attempts (bounded), and its attempts and outcomes by code over
 * the last `hours`; without `hours`, attempts over the hour and codes over the day. Its row's
 * figures stay the last hour's, as in the list.
 */
export async function sourceDetail(
  db: Database,
  id: string,
  { limit = 50, now = new Date(), hours }: { limit?: number; now?: Date; hours?: number } = {},
): Promise<SourceDetail | null> {
  const source = await db.prisma.source.findUnique({
    where: { id },
    include: { state: true, collectorStatus: { orderBy: { collector: "asc" } } },
  });
  if (!source) return null;
  const seriesHours = hours ?? 1;
  const codesHours = hours ?? 24;
  const hour = attemptWindow(now, 1);
  const window = attemptWindow(now, seriesHours);
  const codesFrom = new Date(now.getTime() - codesHours * HOUR_MS);
  // The page reading's figures are a day's whatever the window: its panel says "24 h".
  const dayAgo = new Date(now.getTime() - 24 * HOUR_MS);
  const [lastHour, inWindow, jobs, attempts, codes, reading, websub] = await Promise.all([
    attemptBuckets(db, hour, id),
    seriesHours === 1 ? null : attemptBuckets(db, window, id),
    db.prisma.job.findMany({
      where: { sourceId: id, state: { in: ["ready", "leased", "dead"] } },
      orderBy: { id: "asc" },
      take: 50,
    }),
    db.prisma.fetchAttempt.findMany({
      where: { sourceId: id },
      orderBy: { startedAt: "desc" },
      take: limit,
    }),
    db.prisma.$queryRaw<{ code: string; count: number }[]>`
      SELECT code, count(*)::int AS count
      FROM fetch_attempts
      WHERE source_id = ${id} AND started_at >= ${codesFrom} AND started_at <= ${now}
      GROUP BY code
      ORDER BY count DESC, code`,
    source.kind === "page" ? pageReading(db, id, source.render, dayAgo) : null,
    source.kind === "feed"
      ? db.prisma.websubSubscription.findUnique({ where: { sourceId: id } })
      : null,
  ]);
  const hourSeries = lastHour.get(id) ?? emptySeries(hour);
  return {
    ...toRow(source, hourSeries, now),
    pollIntervalSeconds: source.pollIntervalSeconds,
    configOrigin: source.configOrigin,
    observes: source.observes,
    disabledReason: source.state?.disabledReason ?? null,
    jobs: jobs.map((j) => ({
      id: j.id.toString(),
      queue: j.queue,
      key: j.key,
      state: j.state,
      runAt: j.runAt,
      attempts: j.attempts,
      leaseOwner: j.leaseOwner,
      leaseExpiresAt: j.leaseExpiresAt,
    })),
    recentAttempts: attempts.map((a) => ({
      id: a.id.toString(),
      collector: a.collector,
      startedAt: a.startedAt,
      durationMs: a.durationMs,
      code: a.code,
      httpStatus: a.httpStatus,
      bytes: a.bytes,
      retry: a.retry,
      message: a.message,
    })),
    fetching: {
      hours: seriesHours,
      bucketSeconds: window.bucketSeconds,
      series: inWindow ? (inWindow.get(id) ?? emptySeries(window)) : hourSeries,
      codesHours,
    },
    codes,
    reading,
    websub: websub
      ? {
          state: websub.state,
          hub: websub.hub,
          expiresAt: websub.expiresAt,
          pushes: Number(websub.pushes),
          lastPushAt: websub.lastPushAt,
          rejectedPushes: Number(websub.rejectedPushes),
          lastRejection: websub.lastRejection,
          lastError: websub.lastError,
        }
      : null,
  };
}

export const SOURCE_AUDIT_ACTIONS = {
  fetchNow: "sources.fetch_now",
  pause: "sources.pause",
  resume: "sources.resume",
  /** An OPML file's feeds added (workers/sources/opml/apply.ts). */
  importOpml: "sources.import_opml",
  /** A source added, edited or removed in the dashboard (workers/admin/sources.ts). */
  add: "sources.add",
  edit: "sources.edit",
  remove: "sources.remove",
} as const;

/** What an admin action on a source did (workers/admin/sources.ts), as the page shows it. */
export interface ActionResult {
  affected: number;
  auditId: string;
  message: string;
}
