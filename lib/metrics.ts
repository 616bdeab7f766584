import { createHash, timingSafeEqual } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  type CollectFunction,
  Counter,
  collectDefaultMetrics,
  Gauge,
  Histogram,
  Registry,
} from "prom-client";
import {
  expectedActivitySeconds,
  GAPS_TO_LEARN,
  HEALTH_STATES,
  sourceHealth,
} from "@/workers/collectors/health";
import { FETCH_CODES } from "@/workers/fetcher/classify";
import { countWorkers, WORKER_STATES, type WorkerState } from "@/workers/queue/workerState";
import { ORIGINS, RESULTS } from "@/workers/store/observation";
import { REJECT_REASONS } from "@/workers/stories/receiveWebhook";
import { config } from "./config";
import type { Database } from "./db";
import { on } from "./events";
import { logger } from "./logger";

/**
 * Every Prometheus metric wirewatch exports, in one place (served at GET /api/metrics).
 *
 * Two kinds, and which process to scrape for which:
 *
 * - **Own counters** (`ownRegistry`): what happened in THIS process, fed by lib/events.ts
 *   (observations written, fetch attempts, buffer waits and drops, reclaimed leases, story
 *   webhook deliveries with their lag, story notifications) plus the
 *   default process metrics. Every process that does work exports them: the web app (which runs
 *   the workers inline on the embedded default) and each `npm run workers -- --metrics-port N`.
 *   Prometheus adds `instance`; sum across instances.
 * - **Database-derived** (`dbRegistry`): queue and dead-letter depth, queue lag, breakers, source
 *   health, collector timestamps, local outage, admin actions, and the story-API copy (cursor
 *   age, stories open/closed, missed webhooks, unlisted events, reloads, refused webhooks, the
 *   last four read from the totals the consumer keeps). Computed at scrape time (collect())
 *   from the shared database, so they carry no instance-specific values and every process would
 *   export the same numbers. The rule: only the web app's /api/metrics exports them (worker
 *   processes' endpoints never do); with several web replicas, scrape one of them for the
 *   `wirewatch-db` job (deploy/prometheus.yml), or dashboards will double what they sum.
 *
 * Labels only from bounded sets. Enumerated labels (origin, result, code, state) are checked
 * against their enumerations ("other" otherwise). Open labels (source, collector, stage, action)
 * must look like an identifier (no URL, no spaces; "invalid" otherwise) and each metric admits at
 * most LIMITS.values distinct values per open label and LIMITS.series label sets; past that the
 * open labels fold into "other". The bound per metric is therefore LIMITS.series series plus the
 * folded ones (at most the product of its enumerated labels, e.g. 4 origins × 6 results), so one
 * misbehaving source list cannot blow up Prometheus. Database-derived per-source gauges read at
 * most LIMITS.sources sources (enabled first), in bounded queries.
 *
 * Queue lag (wirewatch_queue_lag_seconds) is measured from the queue's own claims: lease_events
 * records, for every claim, how long the job had been due (run_at: its enqueue, requeue, retry
 * time or the frontier's next poll) when a worker took it. That is the time work waited for a
 * worker, the part of "enqueue → available downstream" the queue owns; the fetch itself is in
 * wirewatch_fetch_duration_seconds and the writer is synchronous behind the bounded buffer. Each
 * scrape folds the lease events written since the previous one (by id, at most LAG_BATCH rows,
 * events older than 2 s so that slow commits are not skipped) into the histogram; a new process
 * starts with the last 10 minutes.
 */

export const LIMITS = {
  /** Distinct values per open label per metric (a deployment has tens of sources, not 500). */
  values: 500,
  /** Label sets per metric before open labels fold into "other". */
  series: 1_000,
  /** Sources read per scrape for the per-source gauges. */
  sources: 500,
} as const;

/** Lease events folded into the lag histogram per scrape: bounded work even after a backlog. */
const LAG_BATCH = 20_000;
const LAG_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900, 1800, 3600];
const FETCH_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/**
 * Webhook lag (receipt minus publication): a healthy sender delivers within a second; its retries
 * back off over minutes, so the top bucket (10 min) separates "retried" from "lost and found by
 * the catch-up" (which is counted in wirewatch_story_missed_webhooks_total instead).
 */
const STORY_LAG_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];
const STORY_WEBHOOK_OUTCOMES = ["accepted", "duplicate", "ignored", "rejected", "failed"];
/**
 * Why a webhook delivery was refused (workers/stories/receiveWebhook.ts RejectReason, the values
 * of story_webhook_rejections.reason), plus the reasons non-refusals carry (replayed_id for a
 * duplicate, not_recorded for a 5xx) and "none" for an accepted one. Anything else is "other".
 */
const STORY_WEBHOOK_REASONS = [...REJECT_REASONS, "replayed_id", "not_recorded", "paused", "none"];
const STORY_NOTIFICATION_OUTCOMES = ["sent", "already_claimed", "backfill", "failed"];
const IDENTIFIER = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,99}$/;

type Labels = Record<string, string>;

/**
 * Keeps one metric's label sets bounded (see the header). `open` labels are identifiers capped
 * at LIMITS.values distinct values; `closed` ones must be in their enumeration.
 */
export class LabelGuard {
  private readonly values = new Map<string, Set<string>>();
  private readonly series = new Set<string>();

  constructor(
    private readonly open: readonly string[],
    private readonly closed: Record<string, readonly string[]> = {},
    private readonly maxValues: number = LIMITS.values,
    private readonly maxSeries: number = LIMITS.series,
  ) {}

  /** Bounded labels from an event or row (fields that are not labels are ignored). */
  labels(raw: Record<string, unknown>): Labels {
    const out: Labels = {};
    for (const name of this.open) {
      const v = raw[name];
      out[name] = this.admit(name, typeof v === "string" ? v : "");
    }
    for (const [name, allowed] of Object.entries(this.closed)) {
      const v = raw[name];
      out[name] = typeof v === "string" && allowed.includes(v) ? v : "other";
    }
    const key = this.key(out);
    if (this.series.has(key)) return out;
    if (this.series.size < this.maxSeries) {
      this.series.add(key);
      return out;
    }
    for (const name of this.open) out[name] = "other";
    return out;
  }

  private admit(name: string, value: string): string {
    if (!IDENTIFIER.test(value) || value.includes("://")) return "invalid";
    let seen = this.values.get(name);
    if (!seen) {
      seen = new Set();
      this.values.set(name, seen);
    }
    if (seen.has(value)) return value;
    if (seen.size >= this.maxValues) return "other";
    seen.add(value);
    return value;
  }

  private key(labels: Labels): string {
    return Object.keys(labels)
      .sort()
      .map((k) => `${k}=${labels[k]}`)
      .join("\u0000");
  }
}

interface State {
  own: Registry;
  db: Registry;
  /** Where the database-derived metrics read from during a scrape (set by scrape()). */
  database: (() => Promise<Database>) | null;
  snapshot: Promise<Snapshot | null> | null;
  lagCursor: WeakMap<Database, bigint>;
  unsubscribe: () => void;
}

const globalForMetrics = globalThis as unknown as { wirewatchMetrics?: State };

/**
 * The process's registries, created once and kept on globalThis (Next's route handlers,
 * instrumentation and the workers in one process share them), subscribed to lib/events.ts.
 * Call it at start in every process that does work, so no event is missed before the first scrape.
 */
export function registerMetrics(): State {
  globalForMetrics.wirewatchMetrics ??= create();
  return globalForMetrics.wirewatchMetrics;
}

function create(): State {
  const own = new Registry();
  const db = new Registry();
  collectDefaultMetrics({ register: own });
  // Gauges named like counters (promtool check metrics rejects them); the per-type
  // nodejs_active_handles / _requests / _resources beside them carry the same numbers.
  for (const name of [
    "nodejs_active_handles_total",
    "nodejs_active_requests_total",
    "nodejs_active_resources_total",
  ]) {
    own.removeSingleMetric(name);
  }
  const state: State = {
    own,
    db,
    database: null,
    snapshot: null,
    lagCursor: new WeakMap(),
    unsubscribe: () => {},
  };
  state.unsubscribe = subscribeOwn(own);
  defineDbMetrics(db, state);
  return state;
}

/** The counters fed by events: what this process did. */
function subscribeOwn(registers: Registry): () => void {
  const registry = [registers];
  const observations = new Counter({
    name: "wirewatch_observations_total",
    help: "Deliveries through the writer, by source, collector, origin and the writer's result (rejected included).",
    labelNames: ["source", "collector", "origin", "result"],
    registers: registry,
  });
  const observationLabels = new LabelGuard(["source", "collector"], {
    origin: [...ORIGINS, "unknown"],
    result: RESULTS,
  });
  const fetches = new Counter({
    name: "wirewatch_fetch_requests_total",
    help: "Fetch attempts (retries included) by source and outcome code (ok, not_modified, http_5xx, timeout ...).",
    labelNames: ["source", "code"],
    registers: registry,
  });
  const fetchLabels = new LabelGuard(["source"], { code: FETCH_CODES });
  const fetchDuration = new Histogram({
    name: "wirewatch_fetch_duration_seconds",
    help: "Duration of one fetch attempt, from request to the whole body read.",
    buckets: FETCH_BUCKETS,
    registers: registry,
  });
  const fetchBytes = new Counter({
    name: "wirewatch_fetch_bytes_total",
    help: "Decompressed body bytes received by fetch attempts, by source.",
    labelNames: ["source"],
    registers: registry,
  });
  const bytesLabels = new LabelGuard(["source"]);
  const entriesLeftOut = new Counter({
    name: "wirewatch_feed_entries_left_out_total",
    help: "Entries past FEED_MAX_ENTRIES in feed documents, counted but not read, by source.",
    labelNames: ["source"],
    registers: registry,
  });
  const leftOutLabels = new LabelGuard(["source"]);
  const waits = new Counter({
    name: "wirewatch_backpressure_waits_total",
    help: "Producers that had to wait for room in a stage's bounded buffer (the writer is behind).",
    labelNames: ["stage"],
    registers: registry,
  });
  const dropped = new Counter({
    name: "wirewatch_dropped_total",
    help: "Deliveries a stage's buffer refused (closing); their jobs fail and run again.",
    labelNames: ["stage"],
    registers: registry,
  });
  const reclaimed = new Counter({
    name: "wirewatch_leases_reclaimed_total",
    help: "Jobs claimed after their previous holder's lease ran out (a worker died or hung).",
    labelNames: ["stage"],
    registers: registry,
  });
  const stageLabels = new LabelGuard(["stage"], {}, 32, 32);
  const storyWebhooks = new Counter({
    name: "wirewatch_story_webhooks_total",
    help: "Deliveries to the story webhook endpoint by source, outcome (accepted, duplicate, ignored, rejected, failed) and reason.",
    labelNames: ["source", "outcome", "reason"],
    registers: registry,
  });
  const storyWebhookLabels = new LabelGuard(["source"], {
    outcome: STORY_WEBHOOK_OUTCOMES,
    reason: STORY_WEBHOOK_REASONS,
  });
  const storyLag = new Histogram({
    name: "wirewatch_story_webhook_lag_seconds",
    help: "Webhook receipt minus the story event's publication, for accepted deliveries, by source.",
    labelNames: ["source"],
    buckets: STORY_LAG_BUCKETS,
    registers: registry,
  });
  const storyLagLabels = new LabelGuard(["source"]);
  const storyNotifications = new Counter({
    name: "wirewatch_story_notifications_total",
    help: "One-time story notifications by source and outcome (sent, already_claimed, backfill, failed).",
    labelNames: ["source", "outcome"],
    registers: registry,
  });
  const storyNotificationLabels = new LabelGuard(["source"], {
    outcome: STORY_NOTIFICATION_OUTCOMES,
  });
  // The write buffer exists in every worker process: show its series at 0 from the start.
  waits.inc(stageLabels.labels({ stage: "store" }), 0);
  dropped.inc(stageLabels.labels({ stage: "store" }), 0);

  const offs = [
    on("observation:written", (e) => observations.inc(observationLabels.labels(e))),
    on("fetch:finished", (e) => {
      fetches.inc(fetchLabels.labels(e));
      if (Number.isFinite(e.durationSeconds) && e.durationSeconds >= 0) {
        fetchDuration.observe(e.durationSeconds);
      }
      if (e.bytes > 0) fetchBytes.inc(bytesLabels.labels(e), e.bytes);
    }),
    on("feed:capped", (e) => entriesLeftOut.inc(leftOutLabels.labels(e), Math.max(0, e.count))),
    on("buffer:waited", (e) => waits.inc(stageLabels.labels(e))),
    on("buffer:dropped", (e) => dropped.inc(stageLabels.labels(e), Math.max(0, e.count))),
    on("lease:reclaimed", (e) => reclaimed.inc(stageLabels.labels(e), Math.max(0, e.count))),
    on("story:webhook", (e) => {
      // A delivery naming no source still counts: under "unknown", like its rejection row ('').
      const source = e.source || "unknown";
      storyWebhooks.inc(storyWebhookLabels.labels({ ...e, source, reason: e.reason || "none" }));
      if (e.lagSeconds !== null && Number.isFinite(e.lagSeconds)) {
        // A publication stamped slightly ahead of our clock is a lag of 0, not a negative one.
        storyLag.observe(storyLagLabels.labels({ source }), Math.max(0, e.lagSeconds));
      }
    }),
    on("story:notification", (e) =>
      storyNotifications.inc(
        storyNotificationLabels.labels({ ...e, source: e.source || "unknown" }),
      ),
    ),
  ];
  return () => {
    for (const off of offs) off();
  };
}

interface Snapshot {
  queues: { queue: string; due: number; leased: number; dead: number; oldestDead: number }[];
  breakers: { open: number; halfOpen: number };
  outage: number;
  sources: {
    id: string;
    kind: string;
    enabled: boolean;
    pollIntervalSeconds: number;
    createdAt: Date;
    breakerState: string;
    disabledReason: string | null;
    lastErrorAt: Date | null;
    lastErrorCode: string | null;
    collectors: {
      collector: string;
      activity: string | null;
      content: string | null;
      gap: number | null;
      gaps: number;
    }[];
  }[];
  actions: { action: string; n: number }[];
  stories: {
    id: string;
    /** Seconds since the last catch-up reached the end (since the source was added if never). */
    cursorAge: number | null;
    missed: number;
    unlisted: number;
    reloads: number;
    open: number;
    closed: number;
  }[];
  rejections: { source: string; reason: string; n: number }[];
  workers: Record<WorkerState, number>;
}

/** One set of bounded queries per scrape, shared by every database-derived metric's collect(). */
function snapshot(state: State): Promise<Snapshot | null> {
  // scrape() clears it first: the collect() calls of one scrape (they run together) share it.
  state.snapshot ??= readSnapshot(state);
  return state.snapshot;
}

async function readSnapshot(state: State): Promise<Snapshot | null> {
  if (!state.database) return null;
  try {
    const db = await state.database();
    await foldLag(state, db);
    const p = db.prisma;
    // jobs: the frontier (one row per source and collector) plus dead letters; the partial
    // indexes keep this a scan of live and dead rows only.
    const queues = await p.$queryRaw<Snapshot["queues"]>`
      SELECT queue,
             (count(*) FILTER (WHERE state = 'ready' AND run_at <= now()))::int AS due,
             (count(*) FILTER (WHERE state = 'leased'))::int AS leased,
             (count(*) FILTER (WHERE state = 'dead'))::int AS dead,
             coalesce(extract(epoch FROM now() - min(dead_at) FILTER (WHERE state = 'dead')), 0)::float8
               AS "oldestDead"
      FROM jobs WHERE state IN ('ready', 'leased', 'dead')
      GROUP BY queue ORDER BY queue LIMIT 50`;
    const [breakers] = await p.$queryRaw<Snapshot["breakers"][]>`
      SELECT (count(*) FILTER (WHERE breaker_state = 'open'))::int AS open,
             (count(*) FILTER (WHERE breaker_state = 'half_open'))::int AS "halfOpen"
      FROM source_state`;
    const [outage] = await p.$queryRaw<{ open: number }[]>`
      SELECT count(*)::int AS open FROM network_outages WHERE ended_at IS NULL`;
    const sources = await p.$queryRaw<Snapshot["sources"]>`
      SELECT s.id, s.kind, s.enabled, s.poll_interval_seconds AS "pollIntervalSeconds",
             s.created_at AS "createdAt",
             coalesce(st.breaker_state, 'closed') AS "breakerState",
             st.disabled_reason AS "disabledReason", st.last_error_at AS "lastErrorAt",
             st.last_error_code AS "lastErrorCode",
             coalesce((SELECT json_agg(json_build_object(
                         'collector', c.collector, 'activity', c.last_activity_at,
                         'content', c.last_content_at, 'gap', c.usual_gap_seconds,
                         'gaps', c.gaps_seen) ORDER BY c.collector)
                       FROM collector_status c WHERE c.source_id = s.id), '[]'::json) AS collectors
      FROM sources s LEFT JOIN source_state st ON st.source_id = s.id
      ORDER BY s.enabled DESC, s.id LIMIT ${LIMITS.sources}`;
    const actions = await p.$queryRaw<Snapshot["actions"]>`
      SELECT action, count(*)::int AS n FROM admin_audit WHERE NOT dry_run
      GROUP BY action ORDER BY action LIMIT 50`;
    // story-api sources (tens at most): their sync row by primary key, their stories counted on
    // stories_ticker_idx (source_id, ticker, closed), an index-only count. A disabled source's
    // catch-up does not run, so it has no cursor age to alert on.
    const stories = await p.$queryRaw<Snapshot["stories"]>`
      SELECT s.id,
             CASE WHEN s.enabled
               THEN extract(epoch FROM now() - coalesce(y.caught_up_at, s.created_at))::float8
             END AS "cursorAge",
             coalesce(y.missed_webhooks, 0)::float8 AS missed,
             coalesce(y.unlisted_events, 0)::float8 AS unlisted,
             coalesce(y.reloads, 0)::int AS reloads,
             (SELECT count(*) FROM stories t WHERE t.source_id = s.id AND NOT t.closed)::int AS open,
             (SELECT count(*) FROM stories t WHERE t.source_id = s.id AND t.closed)::int AS closed
      FROM sources s LEFT JOIN story_sync y ON y.source_id = s.id
      WHERE s.kind = 'story-api'
      ORDER BY s.enabled DESC, s.id LIMIT ${LIMITS.sources}`;
    // One row per source and reason (a bounded set): the table is its own aggregate.
    const rejections = await p.$queryRaw<Snapshot["rejections"]>`
      SELECT source_id AS source, reason, count::float8 AS n FROM story_webhook_rejections
      ORDER BY source_id, reason LIMIT 1000`;
    const workers = await countWorkers(db);
    return {
      queues,
      breakers: breakers ?? { open: 0, halfOpen: 0 },
      outage: outage?.open ?? 0,
      sources,
      actions,
      stories,
      rejections,
      workers,
    };
  } catch (err) {
    logger().warn({ err }, "metrics: database-derived metrics unavailable for this scrape");
    return null;
  }
}

/**
 * Folds the claims recorded since the last scrape into the lag histogram: grouped in SQL by
 * bucket (wait_ms are whole milliseconds, so `width_bucket(wait_ms - 1, thresholds)` is the
 * Prometheus `le` bucket), observed at each bucket's mean, so bucket counts and the sum are exact.
 */
async function foldLag(state: State, db: Database): Promise<void> {
  const histogram = state.db.getSingleMetric("wirewatch_queue_lag_seconds") as Histogram;
  let cursor = state.lagCursor.get(db);
  if (cursor === undefined) {
    const [start] = await db.prisma.$queryRaw<{ cursor: bigint }[]>`
      SELECT coalesce((SELECT min(id) FROM lease_events WHERE at >= now() - interval '10 minutes'),
                      (SELECT coalesce(max(id), 0) + 1 FROM lease_events)) - 1 AS cursor`;
    cursor = BigInt(start?.cursor ?? 0);
  }
  const thresholds = LAG_BUCKETS.map((s) => Math.round(s * 1000));
  const rows = await db.prisma.$queryRaw<
    { last: bigint | null; queue: string | null; n: number | null; total: number | null }[]
  >`
    WITH batch AS (
      SELECT id, queue, kind, wait_ms FROM lease_events
      WHERE id > ${cursor} AND at < now() - interval '2 seconds'
      ORDER BY id LIMIT ${LAG_BATCH}
    ), grouped AS (
      SELECT queue, width_bucket(wait_ms - 1, ${thresholds}::int[]) AS b, count(*)::int AS n,
             (sum(wait_ms) / 1000.0)::float8 AS total
      FROM batch WHERE kind IN ('claimed', 'reclaimed') AND wait_ms IS NOT NULL
      GROUP BY queue, b
    )
    SELECT m.last, g.queue, g.n, g.total
    FROM (SELECT max(id) AS last FROM batch) m LEFT JOIN grouped g ON true`;
  const stages = new LabelGuard(["stage"], {}, 32, 32);
  for (const r of rows) {
    if (r.last !== null) cursor = BigInt(r.last);
    if (r.queue === null || !r.n) continue;
    const labels = stages.labels({ stage: r.queue });
    const mean = (r.total ?? 0) / r.n;
    for (let i = 0; i < r.n; i++) histogram.observe(labels, mean);
  }
  state.lagCursor.set(db, cursor);
}

/** The database-derived metrics: each collect() reads the scrape's one snapshot. */
function defineDbMetrics(registry: Registry, state: State): void {
  const registers = [registry];
  const gauge = (
    name: string,
    help: string,
    labelNames: string[],
    fill: (g: Gauge, s: Snapshot) => void,
  ) => {
    const collect: CollectFunction<Gauge> = async function (this: Gauge) {
      this.reset();
      const s = await snapshot(state);
      if (s) fill(this, s);
    };
    return new Gauge({ name, help, labelNames, registers, collect });
  };

  new Gauge({
    name: "wirewatch_metrics_database_up",
    help: "1 when this scrape could read the database-derived metrics, 0 when it could not.",
    registers,
    async collect() {
      this.set((await snapshot(state)) ? 1 : 0);
    },
  });
  new Histogram({
    name: "wirewatch_queue_lag_seconds",
    help: "How long a job had been due when a worker claimed it (from lease_events.wait_ms), by stage.",
    labelNames: ["stage"],
    buckets: LAG_BUCKETS,
    registers,
    async collect() {
      await snapshot(state);
    },
  });
  const stage = () => new LabelGuard(["stage"], {}, 32, 32);
  gauge(
    "wirewatch_queue_depth",
    "Jobs due and waiting for a worker, by stage.",
    ["stage"],
    (g, s) => {
      const b = stage();
      for (const q of s.queues) g.set(b.labels({ stage: q.queue }), q.due);
    },
  );
  gauge(
    "wirewatch_queue_in_flight",
    "Jobs held on a lease by a worker now, by stage.",
    ["stage"],
    (g, s) => {
      const b = stage();
      for (const q of s.queues) g.set(b.labels({ stage: q.queue }), q.leased);
    },
  );
  gauge(
    "wirewatch_queue_workers",
    "Queue workers by state; lost: running or draining but not heard from for 30 s (killed or cut off).",
    ["state"],
    (g, s) => {
      for (const state of WORKER_STATES) g.set({ state }, s.workers[state]);
    },
  );
  gauge("wirewatch_dlq_depth", "Dead letters (not archived), by stage.", ["stage"], (g, s) => {
    const b = stage();
    for (const q of s.queues) g.set(b.labels({ stage: q.queue }), q.dead);
  });
  gauge(
    "wirewatch_dlq_oldest_age_seconds",
    "Age of the oldest dead letter, by stage (0 when there is none).",
    ["stage"],
    (g, s) => {
      const b = stage();
      for (const q of s.queues) g.set(b.labels({ stage: q.queue }), q.oldestDead);
    },
  );
  gauge(
    "wirewatch_breaker_state",
    "Circuit breaker per source: 0 closed, 1 half-open, 2 open.",
    ["source"],
    (g, s) => {
      const b = new LabelGuard(["source"]);
      const value: Record<string, number> = { closed: 0, half_open: 1, open: 2 };
      for (const src of s.sources)
        g.set(b.labels({ source: src.id }), value[src.breakerState] ?? 0);
    },
  );
  gauge("wirewatch_breaker_open", "Sources whose breaker is open now.", [], (g, s) =>
    g.set(s.breakers.open),
  );
  gauge(
    "wirewatch_local_outage",
    "1 while a local network outage is open (most unrelated hosts failing at once), else 0.",
    [],
    (g, s) => g.set(s.outage > 0 ? 1 : 0),
  );
  const collectorGauge = (name: string, help: string, pick: "activity" | "content") =>
    gauge(name, help, ["source", "collector"], (g, s) => {
      const b = new LabelGuard(["source", "collector"]);
      for (const src of s.sources) {
        for (const c of src.collectors) {
          const at = c[pick];
          if (at)
            g.set(b.labels({ source: src.id, collector: c.collector }), Date.parse(at) / 1000);
        }
      }
    });
  collectorGauge(
    "wirewatch_collector_last_activity_timestamp_seconds",
    "When a collector last saw its source alive (connect, keepalive, 304, any answer), Unix seconds.",
    "activity",
  );
  collectorGauge(
    "wirewatch_collector_last_content_timestamp_seconds",
    "When a collector last received news from its source, Unix seconds.",
    "content",
  );
  gauge(
    "wirewatch_source_health",
    "1 for each source's current health state (healthy, quiet, silent, starting, stalled, failing, disabled).",
    ["source", "state"],
    (g, s) => {
      const b = new LabelGuard(["source"], { state: HEALTH_STATES });
      const now = new Date();
      for (const src of s.sources) {
        const health = sourceHealth(
          {
            kind: src.kind,
            enabled: src.enabled,
            disabledReason: src.disabledReason,
            breakerState: src.breakerState,
            lastErrorAt: src.lastErrorAt ? new Date(src.lastErrorAt) : null,
            lastErrorCode: src.lastErrorCode,
            activityIntervalSeconds: expectedActivitySeconds(src.kind, src.pollIntervalSeconds),
            addedAt: new Date(src.createdAt),
            collectors: src.collectors.map((c) => ({
              collector: c.collector,
              lastActivityAt: c.activity ? new Date(c.activity) : null,
              lastContentAt: c.content ? new Date(c.content) : null,
              usualGapSeconds: c.gaps >= GAPS_TO_LEARN ? c.gap : null,
            })),
          },
          now,
        );
        g.set(b.labels({ source: src.id, state: health.state }), 1);
      }
    },
  );
  new Counter({
    name: "wirewatch_admin_actions_total",
    help: "Admin actions carried out (requeue, discard, archive ...; dry runs not counted), from admin_audit.",
    labelNames: ["action"],
    registers,
    async collect() {
      this.reset();
      const s = await snapshot(state);
      const b = new LabelGuard(["action"], {}, 50, 50);
      for (const a of s?.actions ?? []) this.inc(b.labels({ action: a.action }), a.n);
    },
  });

  // The story-API copy (seed 001). Counters read from the database, like admin actions above:
  // their values are the totals the consumer keeps, whichever process counted them.
  const counter = (
    name: string,
    help: string,
    labelNames: string[],
    fill: (c: Counter, s: Snapshot) => void,
  ) =>
    new Counter({
      name,
      help,
      labelNames,
      registers,
      async collect() {
        this.reset();
        const s = await snapshot(state);
        if (s) fill(this, s);
      },
    });
  const storySource = () => new LabelGuard(["source"]);
  gauge(
    "wirewatch_story_cursor_age_seconds",
    "Seconds since a story-api source's catch-up last reached the end of the event list (since the source was added if never); enabled sources only.",
    ["source"],
    (g, s) => {
      const b = storySource();
      for (const r of s.stories)
        if (r.cursorAge !== null) g.set(b.labels({ source: r.id }), r.cursorAge);
    },
  );
  counter(
    "wirewatch_story_missed_webhooks_total",
    "Story events the catch-up found that no webhook had delivered, by source (story_sync).",
    ["source"],
    (c, s) => {
      const b = storySource();
      for (const r of s.stories) c.inc(b.labels({ source: r.id }), r.missed);
    },
  );
  counter(
    "wirewatch_story_unlisted_events_total",
    "Story events a webhook delivered that the catch-up passed without listing, by source (story_sync).",
    ["source"],
    (c, s) => {
      const b = storySource();
      for (const r of s.stories) c.inc(b.labels({ source: r.id }), r.unlisted);
    },
  );
  counter(
    "wirewatch_story_reloads_total",
    "Full reloads of a story-api source's copy (after a 410 or lost webhooks), by source.",
    ["source"],
    (c, s) => {
      const b = storySource();
      for (const r of s.stories) c.inc(b.labels({ source: r.id }), r.reloads);
    },
  );
  gauge(
    "wirewatch_stories",
    "Stories in the copy by source and state (open, or closed: kept so a late event cannot bring it back).",
    ["source", "state"],
    (g, s) => {
      const b = new LabelGuard(["source"], { state: ["open", "closed"] });
      for (const r of s.stories) {
        g.set(b.labels({ source: r.id, state: "open" }), r.open);
        g.set(b.labels({ source: r.id, state: "closed" }), r.closed);
      }
    },
  );
  counter(
    "wirewatch_story_webhooks_rejected_total",
    'Story webhook deliveries refused, by source ("unknown" when none could be told) and reason (story_webhook_rejections).',
    ["source", "reason"],
    (c, s) => {
      const b = new LabelGuard(["source"], { reason: STORY_WEBHOOK_REASONS });
      for (const r of s.rejections) {
        c.inc(b.labels({ source: r.source || "unknown", reason: r.reason }), r.n);
      }
    },
  );
}

export interface ScrapeOptions {
  /** Export the database-derived metrics too, read from this database (the web app only). */
  database?: () => Promise<Database>;
}

/** The exposition text: this process's own metrics, plus the database's when asked. */
export async function scrape(
  options: ScrapeOptions = {},
): Promise<{ contentType: string; body: string }> {
  const state = registerMetrics();
  let body = await state.own.metrics();
  if (options.database) {
    state.database = options.database;
    state.snapshot = null;
    body += await state.db.metrics();
  }
  return { contentType: state.own.contentType, body };
}

/**
 * `Authorization: Bearer <METRICS_TOKEN>` when the token is set; compared in constant time
 * (both sides hashed first, so neither the length nor a prefix leaks).
 */
export function metricsAuthorized(
  authorization: string | null,
  token = config().METRICS_TOKEN,
): boolean {
  if (!token) return true;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "");
  const given = createHash("sha256")
    .update(match?.[1] ?? "")
    .digest();
  const wanted = createHash("sha256").update(token).digest();
  return timingSafeEqual(given, wanted) && match !== null;
}

/**
 * A worker process's own endpoint (`npm run workers -- --metrics-port N`): its counters and
 * process metrics only, never the database-derived ones (see the header). Same token rule.
 */
export async function serveMetrics(port: number, host = "127.0.0.1"): Promise<Server> {
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new Error("--metrics-port: must be a port number (0-65535)");
  }
  registerMetrics();
  const server = createServer((req, res) => {
    if (req.method !== "GET" || !req.url?.startsWith("/metrics")) {
      res.writeHead(404).end();
      return;
    }
    if (!metricsAuthorized(req.headers.authorization ?? null)) {
      res.writeHead(401, { "www-authenticate": 'Bearer realm="wirewatch metrics"' }).end();
      return;
    }
    scrape().then(
      ({ contentType, body }) => res.writeHead(200, { "content-type": contentType }).end(body),
      (err) => {
        logger().error({ err }, "metrics: scrape failed");
        res.writeHead(500).end();
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  logger().info({ port: (server.address() as AddressInfo).port, host }, "metrics endpoint up");
  return server;
}
