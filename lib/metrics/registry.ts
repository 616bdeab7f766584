import { collectDefaultMetrics, Registry } from "prom-client";
import type { Database } from "@/lib/db";
import { logger } from "@/lib/logger";
import { readBuildInfo } from "./buildInfo";
import {
  type ClaimLagAdder,
  defineBuildInfo,
  defineDbMetrics,
  defineOwnMetrics,
} from "./definitions";
import { foldClaimMinutes, readSnapshot, type Snapshot } from "./snapshot";
import { subscribeMetrics } from "./subscriptions";

/**
 * Two kinds of metrics, and which process to scrape for which:
 *
 * - **Own metrics** (`own`): what happened in THIS process, counted from lib/events.ts
 *   (observations written, fetch attempts and their duration by source, buffer waits and drops,
 *   queue jobs by outcome with their handlers' duration, reclaimed leases, breaker transitions,
 *   stream connections and events, story webhook deliveries with their lag, story notifications,
 *   dedup decisions and their time, supplier calls by outcome with their tokens in and out, cost
 *   and correction retries, extractions and fallovers, read model builds with each changed story's
 *   lag from fetch, public read requests by route and outcome with their time to first byte, the
 *   read model store in use and its Redis fallback), wirewatch_build_info, plus the default process
 *   metrics. Every process that does work exports them: the web app (which runs the workers inline
 *   on the embedded default) and each `npm run workers -- --metrics-port N`. Prometheus adds
 *   `instance`; sum across instances.
 * - **Database-derived** (`db`): queue and dead-letter depth, queue lag, breakers, source health,
 *   collector timestamps, local outage, admin actions, the story-API copy, and the dedup stage's
 *   review queue, clusters, duplicate share and backlog, and extraction's spend today against each
 *   paid provider's budget (wirewatch_extract_budget_exhausted) and its coverage, and the read
 *   model's version and age (read_model_builds). Computed at scrape
 *   time from the shared database, so they carry no instance-specific values and every process
 *   would export the same numbers. The rule: only the web app's /api/metrics exports them (worker
 *   processes' endpoints never do); with several web replicas, scrape one of them for the
 *   `wirewatch-db` job (deploy/prometheus.yml), or dashboards will double what they sum.
 *
 * Queue lag (wirewatch_queue_lag_seconds) is measured from the queue's own claims: the claim
 * statement adds, per queue and minute, how long each claimed job had been due (run_at: its
 * enqueue, requeue, retry time or the frontier's next poll) to queue_claim_stats' wait histogram.
 * That is the time work waited for a worker, the part of "enqueue → available downstream" the
 * queue owns. Scrapes fold each closed minute into the histogram once (./snapshot.ts).
 */
interface State {
  own: Registry;
  db: Registry;
  /** Where the database-derived metrics read from during a scrape (set by scrape()). */
  database: (() => Promise<Database>) | null;
  snapshot: Promise<Snapshot | null> | null;
  /** Per database, the last claim minute folded into the lag histogram. */
  claimCursor: WeakMap<Database, Date>;
  addClaimLag: ClaimLagAdder;
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
    claimCursor: new WeakMap(),
    addClaimLag: () => {},
    unsubscribe: () => {},
  };
  state.unsubscribe = subscribeMetrics(defineOwnMetrics(own));
  defineBuildInfo(own, readBuildInfo());
  state.addClaimLag = defineDbMetrics(db, () => snapshot(state)).addClaimLag;
  return state;
}

/** One snapshot per scrape, shared by every database-derived metric's collect(). */
function snapshot(state: State): Promise<Snapshot | null> {
  // scrape() clears it first: the collect() calls of one scrape (they run together) share it.
  state.snapshot ??= read(state);
  return state.snapshot;
}

async function read(state: State): Promise<Snapshot | null> {
  if (!state.database) return null;
  try {
    const db = await state.database();
    const cursor = await foldClaimMinutes(db, state.claimCursor.get(db), state.addClaimLag);
    state.claimCursor.set(db, cursor);
    return await readSnapshot(db);
  } catch (err) {
    logger().warn({ err }, "metrics: database-derived metrics unavailable for this scrape");
    return null;
  }
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
