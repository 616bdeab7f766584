import { type CollectFunction, Counter, Gauge, Histogram, type Registry } from "prom-client";
import { CLAIM_WAIT_BUCKETS_SECONDS } from "@/lib/claimWaits";
import {
  FETCH_CODES,
  ORIGINS,
  REJECT_REASONS,
  RESULTS,
  WEBSUB_STATES,
  WORKER_STATES,
} from "@/lib/codes";
import type { EventMap } from "@/lib/events";
import { EXTRACT_FAILURE_CODES } from "@/lib/extract/types";
import { expectedActivitySeconds, GAPS_TO_LEARN, HEALTH_STATES, sourceHealth } from "@/lib/health";
import type { BuildInfo } from "./buildInfo";
import { LabelGuard, type Labels, LIMITS, modelGuard, stageGuard } from "./labels";
import { READ_OUTCOMES, TTFB_EDGES } from "./readPath";
import type { Snapshot } from "./snapshot";

/**
 * Every Prometheus metric wirewatch exports, with its help text and bounded labels, in one
 * place. Two kinds (see ./index.ts for which process exports which): own metrics, counted from
 * lib/events.ts by ./subscriptions.ts, and database-derived ones, filled at scrape time from one
 * snapshot (./snapshot.ts). Nothing here reads an event or runs a query.
 */

const FETCH_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** Reading HTML takes milliseconds; a render from a tenth of a second to several seconds. */
const PAGE_CPU_BUCKETS = [0.001, 0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/**
 * Webhook lag (receipt minus publication): a healthy sender delivers within a second; its retries
 * back off over minutes, so the top bucket (10 min) separates "retried" from "lost and found by
 * the catch-up" (which is counted in wirewatch_story_missed_webhooks_total instead).
 */
const STORY_LAG_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];
const STORY_WEBHOOK_OUTCOMES = ["accepted", "duplicate", "ignored", "rejected", "failed"];
/**
 * Why a webhook delivery was refused (lib/codes.ts REJECT_REASONS, the values of
 * story_webhook_rejections.reason), plus the reasons non-refusals carry (replayed_id for a
 * duplicate, not_recorded for a 5xx) and "none" for an accepted one. Anything else is "other".
 */
const STORY_WEBHOOK_REASONS = [...REJECT_REASONS, "replayed_id", "not_recorded", "paused", "none"];
const STORY_NOTIFICATION_OUTCOMES = ["sent", "already_claimed", "backfill", "failed"];
/** What became of queue jobs (lib/events.ts job:*); `failed` counts every failed attempt. */
const QUEUE_JOB_OUTCOMES = ["completed", "failed", "dead", "expired", "released", "lost"] as const;
/**
 * How long a job's handler ran (claim to completion written, or to the failure): a dedup
 * decision takes milliseconds (the aim is under 5 ms), a fetch job seconds (its retries
 * included), an extraction up to its 30 s call timeout (WIREWATCH_EXTRACT_LLM_TIMEOUT_MS) and a
 * correction retry. The stages' leases are 30 to 60 s, extended by heartbeats, so 300 s (five of
 * them) is a job that hangs. Stream jobs run until stopped and are released, not timed.
 */
const JOB_DURATION_BUCKETS = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300,
];
const JOB_DURATION_OUTCOMES = ["completed", "failed"];
/**
 * The fetch duration histogram's source label is capped at 100 sources, the rest summed into
 * source="other". Why a cap and not the configured list: the fetcher fetches only configured
 * sources anyway (rows of sources), but a subscriber runs in the emitter's turn and cannot read
 * that list, and a list of 10,000 would still be 10,000 series sets. Why 100: a histogram costs
 * 13 series a source (10 buckets, +Inf, sum, count) where a counter costs 1, so 100 sources are
 * 1,300 series per process, the order of one counter's LIMITS.series; a deployment has tens of
 * sources, so the cap rarely binds, and when it does nothing is lost: `sum by (le)` still covers
 * every fetch, only the sources past the first 100 seen are not told apart.
 */
const FETCH_DURATION_SOURCES = 100;
const BREAKER_TRANSITIONS = ["open", "closed", "disabled"];
/** A stream ends with a fetch code (it dropped: reset, timeout …) or `stopped` (we stopped it). */
const STREAM_END_CODES = [...FETCH_CODES, "stopped"];
/**
 * The dedup stage's decisions (lib/events.ts dedup:decided): what linked an item, "none" for a
 * unique or removed one, and the outcome. Fixed sets, never a key or a URL.
 */
const DEDUP_STAGES = ["url", "exact", "near", "meaning", "review", "none"];
const DEDUP_OUTCOMES = ["unique", "duplicate", "review", "removed"];
/**
 * Decision time per item: the aim is p99 < 5 ms (issue 13), so the buckets are dense below 5 ms
 * and reach 1 s for a decision that waited on a lock or a slow disk.
 */
const DEDUP_DECISION_BUCKETS = [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];

/**
 * What became of a supplier call: "ok", "error" (an embedding call's failure) or an extraction
 * failure's stable code (lib/extract/types.ts), so a 429 and a schema violation are told apart.
 */
const PROVIDER_OUTCOMES = ["ok", "error", ...EXTRACT_FAILURE_CODES];

/** Search latency: the aim is p95 < 100 ms at 1,000,000 items (bench search). */
const SEARCH_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/**
 * The read path (issue 16). Lag from fetch to availability in the read model: the builder runs
 * every 2 s (WIREWATCH_READ_MODEL_INTERVAL_MS) behind the processing line, so a healthy story
 * lands in seconds; the alert is at 5 min and the top bucket (30 min) tells a stalled line from a
 * slow one.
 */
const READ_MODEL_LAG_BUCKETS = [0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1800];
/** A build of tens of thousands of stories takes a second or two; 30 s is a builder in trouble. */
const READ_MODEL_BUILD_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/**
 * Time to first byte of a public read: the aim is p99 ≤ 20 ms at 400 req/s (issue 16), so the
 * buckets are fine below 50 ms; 0.8 s and 2 s are seed 003's p95 and p99 thresholds, edges here
 * so the alert's quantile is not interpolated across them.
 */
const READ_REQUEST_BUCKETS = [...TTFB_EDGES];
const READ_ROUTES = ["list", "story", "page"];

/**
 * WebSub (workers/websub). Every value an event may carry, checked against lib/events.ts by the
 * compiler (a Record over each union), so a new outcome cannot be left out of its metric.
 */
const WEBSUB_PUSH_OUTCOMES = Object.keys({
  accepted: true,
  missing_signature: true,
  bad_signature: true,
  unknown_callback: true,
  not_subscribed: true,
  source_off: true,
  parse_error: true,
  too_large: true,
  not_written: true,
} satisfies Record<EventMap["websub:push"]["outcome"], true>);
const WEBSUB_VERIFY_MODES = Object.keys({
  subscribe: true,
  unsubscribe: true,
  other: true,
} satisfies Record<EventMap["websub:verification"]["mode"], true>);
const WEBSUB_VERIFY_OUTCOMES = Object.keys({
  verified: true,
  denied: true,
  failed: true,
  refused: true,
} satisfies Record<EventMap["websub:verification"]["outcome"], true>);
const WEBSUB_RENEWAL_OUTCOMES = Object.keys({
  renewed: true,
  refused: true,
  unreachable: true,
  unverified: true,
} satisfies Record<EventMap["websub:renewal"]["outcome"], true>);
/**
 * Push arrival to entries written: the bench measured 17-18 ms for a poll's parse and write and
 * ≈ 74 ms publication to stored through the simulator's hub (docs/decisions/034), so the buckets
 * are fine up to 0.25 s; 5 s and 10 s are a writer that waited on a busy pool.
 */
const WEBSUB_STORE_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** A counter whose labels are bounded by its guard: callers hand it the raw event or row. */
export interface BoundedCounter {
  inc(raw: Record<string, unknown>, n?: number): void;
}

export interface BoundedHistogram {
  observe(raw: Record<string, unknown>, value: number): void;
  /** Shows the label set's series at 0 before its first observation. */
  zero(raw: Record<string, unknown>): void;
}

function counter(
  registry: Registry,
  guard: LabelGuard,
  config: { name: string; help: string; labelNames: string[] },
): BoundedCounter {
  const c = new Counter({ ...config, registers: [registry] });
  return { inc: (raw, n = 1) => c.inc(guard.labels(raw), n) };
}

function histogram(
  registry: Registry,
  guard: LabelGuard,
  config: { name: string; help: string; labelNames: string[]; buckets: number[] },
): BoundedHistogram {
  const h = new Histogram({ ...config, registers: [registry] });
  return {
    observe: (raw, value) => h.observe(guard.labels(raw), value),
    zero: (raw) => h.zero(guard.labels(raw)),
  };
}

/** What this process did, counted from its events. */
export function defineOwnMetrics(registry: Registry) {
  const stage = stageGuard();
  const own = {
    observations: counter(
      registry,
      new LabelGuard(["source", "collector"], {
        origin: [...ORIGINS, "unknown"],
        result: RESULTS,
      }),
      {
        name: "wirewatch_observations_total",
        help: "Deliveries through the writer, by source, collector, origin and the writer's result (rejected included).",
        labelNames: ["source", "collector", "origin", "result"],
      },
    ),
    fetches: counter(registry, new LabelGuard(["source"], { code: FETCH_CODES }), {
      name: "wirewatch_fetch_requests_total",
      help: "Fetch attempts (retries included) by source and outcome code (ok, not_modified, http_5xx, timeout ...).",
      labelNames: ["source", "code"],
    }),
    fetchDuration: histogram(
      registry,
      new LabelGuard(["source"], {}, FETCH_DURATION_SOURCES, FETCH_DURATION_SOURCES),
      {
        name: "wirewatch_fetch_duration_seconds",
        help: 'Duration of one fetch attempt, from request to the whole body read, by source (the first 100 sources seen; the rest as "other").',
        labelNames: ["source"],
        buckets: FETCH_BUCKETS,
      },
    ),
    pageLookCpu: histogram(registry, new LabelGuard([], { mode: ["http", "browser"] }), {
      name: "wirewatch_page_look_cpu_seconds",
      help: "CPU time of one look at a page source, by how it was read: http (reading the HTML as served, in this process) or browser (the headless renderer's main-thread task time).",
      labelNames: ["mode"],
      buckets: PAGE_CPU_BUCKETS,
    }),
    browserRequestsRefused: counter(registry, new LabelGuard(["source"]), {
      name: "wirewatch_browser_requests_refused_total",
      help: "Requests a page rendered in the browser made that were refused (SSRF, robots.txt, a method other than GET, the per-render cap, WebSockets), by source.",
      labelNames: ["source"],
    }),
    fetchBytes: counter(registry, new LabelGuard(["source"]), {
      name: "wirewatch_fetch_bytes_total",
      help: "Decompressed body bytes received by fetch attempts, by source.",
      labelNames: ["source"],
    }),
    entriesLeftOut: counter(registry, new LabelGuard(["source"]), {
      name: "wirewatch_feed_entries_left_out_total",
      help: "Entries past FEED_MAX_ENTRIES in feed documents, counted but not read, by source.",
      labelNames: ["source"],
    }),
    waits: counter(registry, stage, {
      name: "wirewatch_backpressure_waits_total",
      help: "Producers that had to wait for room in a stage's bounded buffer (the writer is behind).",
      labelNames: ["stage"],
    }),
    dropped: counter(registry, stage, {
      name: "wirewatch_dropped_total",
      help: "Deliveries a stage's buffer refused (closing); their jobs fail and run again.",
      labelNames: ["stage"],
    }),
    reclaimed: counter(registry, stage, {
      name: "wirewatch_leases_reclaimed_total",
      help: "Jobs claimed after their previous holder's lease ran out (a worker died or hung).",
      labelNames: ["stage"],
    }),
    queueJobs: counter(
      registry,
      new LabelGuard(["stage"], { outcome: QUEUE_JOB_OUTCOMES }, 32, 256),
      {
        name: "wirewatch_queue_jobs_total",
        help: "Queue jobs by stage and what became of them: completed, failed (an attempt; it retries or is dead), dead (parked as a dead letter, after a failure or an expired lease), expired (lease ran out), released (handed back at stop), lost (a lease that could not be extended).",
        labelNames: ["stage", "outcome"],
      },
    ),
    queueJobDuration: histogram(
      registry,
      new LabelGuard(["stage"], { outcome: JOB_DURATION_OUTCOMES }, 32, 64),
      {
        name: "wirewatch_queue_job_duration_seconds",
        help: "How long a queue job's handler ran, by stage and outcome: completed (claim to its completion written) or failed (claim to the failure; it retries or is dead).",
        labelNames: ["stage", "outcome"],
        buckets: JOB_DURATION_BUCKETS,
      },
    ),
    breakerTransitions: counter(registry, new LabelGuard([], { to: BREAKER_TRANSITIONS }), {
      name: "wirewatch_breaker_transitions_total",
      help: "Circuit breaker transitions by the state entered: open (opened or reopened after a failed probe), closed, disabled.",
      labelNames: ["to"],
    }),
    streamConnections: counter(registry, new LabelGuard(["source", "collector"]), {
      name: "wirewatch_stream_connections_total",
      help: "Stream connections opened, by source and collector.",
      labelNames: ["source", "collector"],
    }),
    streamDisconnects: counter(
      registry,
      new LabelGuard(["source", "collector"], { code: STREAM_END_CODES }),
      {
        name: "wirewatch_stream_disconnects_total",
        help: "Stream connections ended, by source, collector and code (a fetch code when it dropped: reset, timeout ...; stopped when we stopped it).",
        labelNames: ["source", "collector", "code"],
      },
    ),
    streamEvents: counter(registry, new LabelGuard(["source", "collector"]), {
      name: "wirewatch_stream_events_total",
      help: "Events read from streams and handed to the writer, by source and collector.",
      labelNames: ["source", "collector"],
    }),
    storyWebhooks: counter(
      registry,
      new LabelGuard(["source"], {
        outcome: STORY_WEBHOOK_OUTCOMES,
        reason: STORY_WEBHOOK_REASONS,
      }),
      {
        name: "wirewatch_story_webhooks_total",
        help: "Deliveries to the story webhook endpoint by source, outcome (accepted, duplicate, ignored, rejected, failed) and reason.",
        labelNames: ["source", "outcome", "reason"],
      },
    ),
    storyLag: histogram(registry, new LabelGuard(["source"]), {
      name: "wirewatch_story_webhook_lag_seconds",
      help: "Webhook receipt minus the story event's publication, for accepted deliveries, by source.",
      labelNames: ["source"],
      buckets: STORY_LAG_BUCKETS,
    }),
    storyNotifications: counter(
      registry,
      new LabelGuard(["source"], { outcome: STORY_NOTIFICATION_OUTCOMES }),
      {
        name: "wirewatch_story_notifications_total",
        help: "One-time story notifications by source and outcome (sent, already_claimed, backfill, failed).",
        labelNames: ["source", "outcome"],
      },
    ),
    dedupDecisions: counter(
      registry,
      new LabelGuard([], { stage: DEDUP_STAGES, outcome: DEDUP_OUTCOMES }),
      {
        name: "wirewatch_dedup_decisions_total",
        help: "Dedup stage decisions by the stage that settled them (url, exact, near, meaning; none for unique or removed) and outcome (unique, duplicate, review, removed).",
        labelNames: ["stage", "outcome"],
      },
    ),
    dedupDecisionSeconds: histogram(registry, new LabelGuard([], { outcome: DEDUP_OUTCOMES }), {
      name: "wirewatch_dedup_decision_seconds",
      help: "Time the dedup stage took to decide one item (lookups and writes included), by outcome.",
      labelNames: ["outcome"],
      buckets: DEDUP_DECISION_BUCKETS,
    }),
    embeddings: counter(registry, new LabelGuard(["model"], { outcome: ["stored", "failed"] }), {
      name: "wirewatch_embeddings_total",
      help: "Items the embed stage embedded and stored (or failed to), by model id and outcome; its rate is embeddings per second.",
      labelNames: ["model", "outcome"],
    }),
    providerCalls: counter(
      registry,
      modelGuard(["purpose", "provider", "model"], { outcome: PROVIDER_OUTCOMES }),
      {
        name: "wirewatch_provider_calls_total",
        help: "Calls to a supplier (embeddings, extraction), retries and attempts held back (budget_exhausted, breaker_open, skipped) included, by purpose, provider, model and outcome (ok, error for an embedding call, or the extraction failure's code).",
        labelNames: ["purpose", "provider", "model", "outcome"],
      },
    ),
    providerCost: counter(registry, modelGuard(["purpose", "provider", "model"]), {
      name: "wirewatch_provider_cost_usd_total",
      help: "What calls to a supplier cost, in US dollars at the configured price, by purpose, provider and model.",
      labelNames: ["purpose", "provider", "model"],
    }),
    providerTokens: counter(registry, modelGuard(["purpose", "provider", "model"]), {
      name: "wirewatch_provider_input_tokens_total",
      help: "Input tokens sent to a supplier (as it reported them, or estimated), by purpose, provider and model.",
      labelNames: ["purpose", "provider", "model"],
    }),
    providerOutputTokens: counter(registry, modelGuard(["purpose", "provider", "model"]), {
      name: "wirewatch_provider_output_tokens_total",
      help: "Output tokens a supplier answered with (as it reported them), by purpose, provider and model.",
      labelNames: ["purpose", "provider", "model"],
    }),
    providerCorrections: counter(registry, modelGuard(["purpose", "provider", "model"]), {
      name: "wirewatch_provider_correction_retries_total",
      help: "Correction retries: a call that fed the validation errors of the answer before it back to the supplier, by purpose, provider and model.",
      labelNames: ["purpose", "provider", "model"],
    }),
    extractions: counter(
      registry,
      modelGuard(["provider", "model"], { outcome: ["ok", "failed"] }),
      {
        name: "wirewatch_extractions_total",
        help: 'Extractions settled by the chain: ok by the provider and model that answered, or failed (every provider failed; provider and model "none").',
        labelNames: ["provider", "model", "outcome"],
      },
    ),
    extractFallovers: counter(registry, modelGuard(["provider", "model"]), {
      name: "wirewatch_extract_fallovers_total",
      help: "Extractions answered by a provider after the first of the chain (the first failed, was rate limited, over its budget or invalid twice), by the provider and model that answered.",
      labelNames: ["provider", "model"],
    }),
    extractBudgetReached: counter(registry, new LabelGuard(["provider"], {}, 20, 20), {
      name: "wirewatch_extract_budget_reached_total",
      help: "Times a paid extraction provider reached its daily budget (it is skipped until midnight UTC), by provider.",
      labelNames: ["provider"],
    }),
    searchSeconds: histogram(
      registry,
      new LabelGuard([], { mode: ["hybrid", "fulltext"], backend: ["pgvector", "portable"] }),
      {
        name: "wirewatch_search_seconds",
        help: "Time to answer one search, by mode (hybrid: full text and vectors; fulltext: no complete model) and vector backend.",
        labelNames: ["mode", "backend"],
        buckets: SEARCH_BUCKETS,
      },
    ),
    readModelLag: histogram(registry, new LabelGuard([]), {
      name: "wirewatch_read_model_lag_seconds",
      help: "Seconds from a story's fetch to its availability in the read model (the build that holds it finished), one observation per changed story of each build.",
      labelNames: [],
      buckets: READ_MODEL_LAG_BUCKETS,
    }),
    readModelBuildSeconds: histogram(registry, new LabelGuard([]), {
      name: "wirewatch_read_model_build_seconds",
      help: "Time one read model build took (ranking, payloads, store writes), for the builds that finished.",
      labelNames: [],
      buckets: READ_MODEL_BUILD_BUCKETS,
    }),
    readModelBuilds: counter(registry, new LabelGuard([], { outcome: ["built", "failed"] }), {
      name: "wirewatch_read_model_builds_total",
      help: "Read model builds run by this process, by outcome (built: a new model version; failed: none, the previous one stays).",
      labelNames: ["outcome"],
    }),
    readRequests: counter(
      registry,
      new LabelGuard([], { route: READ_ROUTES, outcome: READ_OUTCOMES }),
      {
        name: "wirewatch_read_requests_total",
        help: "Public read requests answered by this process, by route (list, story, page) and outcome (hit, miss, stale, not_modified, not_found, error, rate_limited). Cache hit ratio: (hit + not_modified) / (hit + not_modified + miss + stale + error).",
        labelNames: ["route", "outcome"],
      },
    ),
    readRequestSeconds: histogram(registry, new LabelGuard([], { route: READ_ROUTES }), {
      name: "wirewatch_read_request_seconds",
      help: "Time to first byte of a public read request (from the handler's start to the response's headers), by route.",
      labelNames: ["route"],
      buckets: READ_REQUEST_BUCKETS,
    }),
    readModelStore: new Gauge({
      name: "wirewatch_read_model_store",
      help: "The read model store this process serves from: 1 for the kind in use (redis or memory), 0 for the other; absent before the process chose one.",
      labelNames: ["kind"],
      registers: [registry],
    }),
    readModelStoreFallback: new Gauge({
      name: "wirewatch_read_model_store_fallback",
      help: "1 while this process serves from its own memory because Redis (REDIS_URL) failed, else 0; absent before the process chose a store.",
      registers: [registry],
    }),
    websubPushes: counter(registry, new LabelGuard(["source"], { outcome: WEBSUB_PUSH_OUTCOMES }), {
      name: "wirewatch_websub_pushes_total",
      help: 'Pushes to WebSub callbacks answered by this process, by source ("unknown" when the callback names no subscription) and outcome: accepted (signed, read, written), missing_signature, bad_signature, unknown_callback, not_subscribed and source_off (410), parse_error, too_large (over 10 MiB), not_written (503, the hub retries).',
      labelNames: ["source", "outcome"],
    }),
    websubStoreSeconds: histogram(registry, new LabelGuard([]), {
      name: "wirewatch_websub_push_store_seconds",
      help: "From an accepted push's arrival at the callback to its entries written (signature check, parse and writer included).",
      labelNames: [],
      buckets: WEBSUB_STORE_BUCKETS,
    }),
    websubVerifications: counter(
      registry,
      new LabelGuard([], { mode: WEBSUB_VERIFY_MODES, outcome: WEBSUB_VERIFY_OUTCOMES }),
      {
        name: "wirewatch_websub_verifications_total",
        help: "WebSub intent verifications by mode (subscribe, renewals included; unsubscribe) and outcome: verified (challenge echoed), denied (the hub refused the subscription), failed (no verification within 10 minutes of the request), refused (a verification answered 404: nothing waited for it).",
        labelNames: ["mode", "outcome"],
      },
    ),
    websubRenewals: counter(registry, new LabelGuard([], { outcome: WEBSUB_RENEWAL_OUTCOMES }), {
      name: "wirewatch_websub_lease_renewals_total",
      help: "WebSub lease renewals settled, by outcome: renewed (the hub verified it), refused (the hub answered the request without a 2xx), unreachable, unverified (never verified within 10 minutes). One that did not succeed is asked again a minute later.",
      labelNames: ["outcome"],
    }),
  };
  // The write buffer exists in every worker process: show its series at 0 from the start.
  own.waits.inc({ stage: "store" }, 0);
  own.dropped.inc({ stage: "store" }, 0);
  // WebSub's enumerated series too (a handful), so increase() sees the first denial or failed
  // renewal and an alert on it can fire.
  for (const mode of ["subscribe", "unsubscribe"]) {
    for (const outcome of WEBSUB_VERIFY_OUTCOMES) own.websubVerifications.inc({ mode, outcome }, 0);
  }
  for (const outcome of WEBSUB_RENEWAL_OUTCOMES) own.websubRenewals.inc({ outcome }, 0);
  own.websubStoreSeconds.zero({});
  return own;
}

export type OwnMetrics = ReturnType<typeof defineOwnMetrics>;

/**
 * wirewatch_build_info: 1, labelled with the running build (./buildInfo.ts reads it once at
 * start). Every process exports its own, so a mixed fleet after a partial deploy shows as two
 * label sets: `count(count by (version, commit) (wirewatch_build_info)) > 1`.
 */
export function defineBuildInfo(registry: Registry, info: BuildInfo): void {
  new Gauge({
    name: "wirewatch_build_info",
    help: "1, labelled with the build this process runs: version (package.json), commit (WIREWATCH_COMMIT, else .git's HEAD, else unknown) and node (the Node version).",
    labelNames: ["version", "commit", "node"],
    registers: [registry],
  }).set({ version: info.version, commit: info.commit, node: info.node }, 1);
}

/**
 * Adds a run of claims to the lag histogram, bucket by bucket: the histogram's buckets are the
 * claim rollup's (lib/claimWaits.ts), so counts and the sum are exact, in O(buckets) however many
 * claims a minute held (a minute at 20k jobs/s holds 1.2M; one observe() per claim took 320–345 ms
 * of a scrape per queue-minute on the 2-core development machine). prom-client 15 has no
 * observe-many, so this adds to the series' values the way its observe() does
 * (lib/metrics.test.ts checks the exposition bucket by bucket).
 */
export type ClaimLagAdder = (stage: string, buckets: readonly number[], sumSeconds: number) => void;

interface HistogramSeries {
  labels: Labels;
  bucketValues: Record<number, number>;
  sum: number;
  count: number;
}

function claimLagAdder(h: Histogram): ClaimLagAdder {
  const guard = stageGuard();
  const internal = h as unknown as {
    hashMap: Record<string, HistogramSeries>;
    upperBounds: number[];
  };
  return (stage, buckets, sumSeconds) => {
    const labels = guard.labels({ stage });
    const find = () => Object.values(internal.hashMap).find((s) => s.labels.stage === labels.stage);
    let series = find();
    if (!series) {
      h.zero(labels);
      series = find();
    }
    if (!series) throw new Error("metrics: the lag histogram has no series for its labels");
    let count = 0;
    for (const [i, n] of buckets.entries()) {
      if (n <= 0) continue;
      count += n;
      const edge = internal.upperBounds[i];
      // The last bucket (past the top edge) is only in the count: prom-client's +Inf is count.
      if (edge !== undefined) series.bucketValues[edge] = (series.bucketValues[edge] ?? 0) + n;
    }
    series.count += count;
    series.sum += sumSeconds;
  };
}

/** The database-derived metrics: each collect() reads the scrape's one snapshot. */
export function defineDbMetrics(
  registry: Registry,
  read: () => Promise<Snapshot | null>,
): { addClaimLag: ClaimLagAdder } {
  const registers = [registry];
  const gauge = (
    name: string,
    help: string,
    labelNames: string[],
    fill: (g: Gauge, s: Snapshot) => void,
  ) => {
    const collect: CollectFunction<Gauge> = async function (this: Gauge) {
      this.reset();
      const s = await read();
      if (s) fill(this, s);
    };
    return new Gauge({ name, help, labelNames, registers, collect });
  };
  // Counters read from the database: their values are the totals kept in rows, whichever
  // process counted them.
  const dbCounter = (
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
        const s = await read();
        if (s) fill(this, s);
      },
    });

  new Gauge({
    name: "wirewatch_metrics_database_up",
    help: "1 when this scrape could read the database-derived metrics, 0 when it could not.",
    registers,
    async collect() {
      this.set((await read()) ? 1 : 0);
    },
  });
  const lag = new Histogram({
    name: "wirewatch_queue_lag_seconds",
    help: "How long a job had been due when a worker claimed it (from queue_claim_stats, per minute once it has closed), by stage.",
    labelNames: ["stage"],
    buckets: [...CLAIM_WAIT_BUCKETS_SECONDS],
    registers,
    async collect() {
      // The snapshot folds the claims of the minutes closed since the last scrape into it.
      await read();
    },
  });
  gauge(
    "wirewatch_queue_depth",
    "Jobs due and waiting for a worker, by stage.",
    ["stage"],
    (g, s) => {
      const b = stageGuard();
      for (const q of s.queues) g.set(b.labels({ stage: q.queue }), q.due);
    },
  );
  gauge(
    "wirewatch_queue_in_flight",
    "Jobs held on a lease by a worker now, by stage.",
    ["stage"],
    (g, s) => {
      const b = stageGuard();
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
    const b = stageGuard();
    for (const q of s.queues) g.set(b.labels({ stage: q.queue }), q.dead);
  });
  gauge(
    "wirewatch_dlq_oldest_age_seconds",
    "Age of the oldest dead letter, by stage (0 when there is none).",
    ["stage"],
    (g, s) => {
      const b = stageGuard();
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
    "Each source's health, one series per state (healthy, quiet, silent, starting, stalled, failing, disabled): 1 for its current state, 0 for the others.",
    ["source", "state"],
    (g, s) => {
      // Every state of every source, so `wirewatch_source_health{state="failing"} == 1` and
      // sums over a state find a 0, not nothing: 7 series a source, at most LIMITS.sources (500)
      // sources a scrape, 3,500 series.
      const b = new LabelGuard(
        ["source"],
        { state: HEALTH_STATES },
        LIMITS.sources,
        LIMITS.sources * HEALTH_STATES.length,
      );
      const values = new Map<string, { labels: Labels; value: number }>();
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
            activityIntervalSeconds: expectedActivitySeconds(
              src.kind,
              src.pollIntervalSeconds,
              src.pollEverySeconds,
            ),
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
        for (const state of HEALTH_STATES) {
          const labels = b.labels({ source: src.id, state });
          const key = `${labels.source}\u0000${labels.state}`;
          // Sources folded into one label ("invalid"): 1 when any of them is in the state.
          const value = Math.max(values.get(key)?.value ?? 0, state === health.state ? 1 : 0);
          values.set(key, { labels, value });
        }
      }
      for (const { labels, value } of values.values()) g.set(labels, value);
    },
  );
  dbCounter(
    "wirewatch_admin_actions_total",
    "Admin actions carried out (requeue, discard, archive ...; dry runs not counted), from admin_audit.",
    ["action"],
    (c, s) => {
      const b = new LabelGuard(["action"], {}, 50, 50);
      for (const a of s.actions) c.inc(b.labels({ action: a.action }), a.n);
    },
  );

  // The story-API copy (seed 001).
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
  dbCounter(
    "wirewatch_story_missed_webhooks_total",
    "Story events the catch-up found that no webhook had delivered, by source (story_sync).",
    ["source"],
    (c, s) => {
      const b = storySource();
      for (const r of s.stories) c.inc(b.labels({ source: r.id }), r.missed);
    },
  );
  dbCounter(
    "wirewatch_story_unlisted_events_total",
    "Story events a webhook delivered that the catch-up passed without listing, by source (story_sync).",
    ["source"],
    (c, s) => {
      const b = storySource();
      for (const r of s.stories) c.inc(b.labels({ source: r.id }), r.unlisted);
    },
  );
  dbCounter(
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
  dbCounter(
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

  // The dedup stage (issue 13), from its tables.
  gauge(
    "wirewatch_dedup_review_queue_depth",
    "Grey-band pairs waiting for an operator (dedup_reviews pending).",
    [],
    (g, s) => g.set(s.dedup.pending),
  );
  gauge(
    "wirewatch_dedup_review_oldest_age_seconds",
    "Age of the oldest pair waiting for review (0 when none waits).",
    [],
    (g, s) => g.set(s.dedup.oldestPending),
  );
  gauge(
    "wirewatch_dedup_clusters",
    "Live dedup clusters (a canonical item and at least one linked copy).",
    [],
    (g, s) => g.set(s.dedup.clusters),
  );
  gauge(
    "wirewatch_dedup_duplicate_ratio",
    "Share of the items the dedup stage decided in the last hour that it linked as duplicates (0 when it decided none).",
    [],
    (g, s) => g.set(s.dedup.decidedHour > 0 ? s.dedup.duplicatesHour / s.dedup.decidedHour : 0),
  );
  gauge(
    "wirewatch_dedup_last_decision_timestamp_seconds",
    "When the dedup stage last decided an item, Unix seconds (0 before its first decision, so an age computed from it is large, not absent).",
    [],
    (g, s) => g.set(s.dedup.lastDecision ?? 0),
  );
  // Meaning (embedding models), from their tables.
  gauge(
    "wirewatch_embedding_vectors",
    "Stored vectors of canonical items by embedding model id (item_vectors).",
    ["model", "kind"],
    (g, s) => {
      const b = new LabelGuard(["model"], { kind: ["meaning", "lexical"] });
      for (const m of s.embedding.models) g.set(b.labels(m), m.embedded);
    },
  );
  gauge(
    "wirewatch_embedding_coverage_ratio",
    "Share of the canonical items that have a current vector of the model (1 when there are none).",
    ["model"],
    (g, s) => {
      const b = new LabelGuard(["model"]);
      for (const m of s.embedding.models) {
        g.set(
          b.labels(m),
          s.embedding.canonical > 0 ? Math.min(1, m.embedded / s.embedding.canonical) : 1,
        );
      }
    },
  );
  gauge(
    "wirewatch_embedding_model_complete",
    "1 when the model's backfill is complete (search may use it), 0 while it backfills or is retired.",
    ["model"],
    (g, s) => {
      const b = new LabelGuard(["model"]);
      for (const m of s.embedding.models) g.set(b.labels(m), m.state === "complete" ? 1 : 0);
    },
  );
  gauge(
    "wirewatch_canonical_items",
    "Live items that survived dedup (unique, or waiting in review): what search and the models cover.",
    [],
    (g, s) => g.set(s.embedding.canonical),
  );
  gauge(
    "wirewatch_dedup_undecided",
    "Items changed in the last hour that the dedup stage has not decided at their current version yet.",
    [],
    (g, s) => g.set(s.dedup.undecided),
  );
  gauge(
    "wirewatch_dedup_undecided_oldest_age_seconds",
    "How long the oldest of those has waited since it changed (0 when none waits; at most an hour).",
    [],
    (g, s) => g.set(s.dedup.undecidedOldest),
  );
  // Extraction (issue 15): each paid provider's day against its budget, and coverage.
  const budgetProvider = () => new LabelGuard(["provider"], {}, 20, 20);
  gauge(
    "wirewatch_extract_spend_today_usd",
    "Extraction spend of the UTC day so far, in US dollars, by paid provider (those with a budget or any spend today).",
    ["provider"],
    (g, s) => {
      const b = budgetProvider();
      for (const p of s.extraction.budgets) g.set(b.labels(p), p.spentUsd);
    },
  );
  gauge(
    "wirewatch_extract_budget_usd",
    "A paid extraction provider's daily budget in US dollars (WIREWATCH_EXTRACT_LLM_DAILY_BUDGET_USD); absent when none is set.",
    ["provider"],
    (g, s) => {
      const b = budgetProvider();
      for (const p of s.extraction.budgets) {
        if (p.budgetUsd !== null) g.set(b.labels(p), p.budgetUsd);
      }
    },
  );
  gauge(
    "wirewatch_extract_budget_exhausted",
    "1 while a paid extraction provider's spend today has reached its daily budget (the chain skips it until midnight UTC and the providers after it answer), else 0.",
    ["provider"],
    (g, s) => {
      const b = budgetProvider();
      for (const p of s.extraction.budgets) g.set(b.labels(p), p.exhausted ? 1 : 0);
    },
  );
  gauge(
    "wirewatch_extract_coverage_ratio",
    "Share of the canonical items with an extraction by the chain that made the newest one (its rows / canonical items, at most 1; 1 when there are none): an extraction backfill's progress.",
    [],
    (g, s) => {
      const { canonical, extracted } = s.extraction;
      g.set(canonical > 0 ? Math.min(1, extracted / canonical) : 1);
    },
  );
  // The read path (issue 16): the model readers are served, from the builder's records.
  gauge(
    "wirewatch_read_model_age_seconds",
    "Seconds since the newest read model build finished (read_model_builds); NaN before the first build. The builder builds only when stories changed, so a quiet system's model ages without being stale.",
    [],
    // A gauge without labels always has a sample: NaN, not a 0 that would read as fresh.
    (g, s) => g.set(s.readModel.ageSeconds ?? Number.NaN),
  );
  gauge(
    "wirewatch_read_model_version",
    "The newest finished read model version (read_model_builds); 0 before the first build.",
    [],
    (g, s) => g.set(s.readModel.version ?? 0),
  );
  // WebSub (workers/websub), from websub_subscriptions.
  gauge(
    "wirewatch_websub_subscriptions",
    "WebSub subscriptions by state (websub_subscriptions, one row per feed looked at): no_hub (none advertised), pending (asked, not verified), active, denied, failed, unsubscribing, unsubscribed.",
    ["state"],
    (g, s) => {
      for (const state of WEBSUB_STATES) {
        g.set({ state }, s.websub.states.find((r) => r.state === state)?.n ?? 0);
      }
    },
  );
  gauge(
    "wirewatch_websub_renewals_due",
    "Active WebSub subscriptions past their renewal time (80 % of the lease) and not renewed: upkeep asks within a minute and the hub verifies within seconds, so one due for long is a renewal that keeps failing, or upkeep that is not running.",
    [],
    (g, s) => g.set(s.websub.renewalsDue),
  );
  dbCounter(
    "wirewatch_websub_rejected_pushes_total",
    "Pushes refused before anything was written (signature missing or bad, not a feed, over 10 MiB), by source, from websub_subscriptions: totals kept in the rows, whichever process answered, for every feed that ever had a callback.",
    ["source"],
    (c, s) => {
      const b = new LabelGuard(["source"]);
      for (const r of s.websub.rejected) c.inc(b.labels({ source: r.source }), r.n);
    },
  );
  return { addClaimLag: claimLagAdder(lag) };
}
