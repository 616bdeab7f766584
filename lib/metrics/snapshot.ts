import type { WorkerState } from "@/lib/codes";
import { config } from "@/lib/config";
import { budgetStates } from "@/lib/dashboard/costs";
import { countWorkers } from "@/lib/dashboard/workers";
import type { Database } from "@/lib/db";
import { LIMITS } from "./labels";

/**
 * The database-derived metrics' reads, run once per scrape of the web app's /api/metrics and
 * shared by every database-derived metric's collect() (./definitions.ts): a fixed set of bounded
 * queries (per-source reads capped at LIMITS.sources, enabled first), plus the fold of closed
 * claim minutes into the lag histogram.
 */

export interface Snapshot {
  queues: { queue: string; due: number; leased: number; dead: number; oldestDead: number }[];
  breakers: { open: number; halfOpen: number };
  outage: number;
  sources: {
    id: string;
    kind: string;
    enabled: boolean;
    pollIntervalSeconds: number;
    /** The delay the scheduler chose for the next poll (null before the first). */
    pollEverySeconds: number | null;
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
  dedup: {
    pending: number;
    /** Seconds the oldest pending review has waited (0: none). */
    oldestPending: number;
    clusters: number;
    /** Unix seconds of the last decision, null before the first. */
    lastDecision: number | null;
    decidedHour: number;
    duplicatesHour: number;
    undecided: number;
    undecidedOldest: number;
  };
  embedding: {
    canonical: number;
    models: { model: string; kind: string; state: string; embedded: number }[];
  };
  /** The newest finished build of the read model (read_model_builds); nulls before the first. */
  readModel: { version: number | null; ageSeconds: number | null };
  /**
   * websub_subscriptions by state, the active ones past their renewal time, and each subscribed
   * feed's refused pushes (rows that ever had a callback, so a first refusal is an increase).
   */
  websub: {
    states: { state: string; n: number }[];
    renewalsDue: number;
    rejected: { source: string; n: number }[];
  };
  extraction: {
    /** Each paid provider's UTC day (lib/dashboard/costs.ts budgetStates). */
    budgets: { provider: string; spentUsd: number; budgetUsd: number | null; exhausted: boolean }[];
    canonical: number;
    /** item_extractions rows by the chain that made the newest one. */
    extracted: number;
  };
}

export async function readSnapshot(db: Database): Promise<Snapshot> {
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
      -- A paused queue's marker row (workers/queue/paused.ts) is not a queue.
      AND queue <> 'queue:paused'
    GROUP BY queue ORDER BY queue LIMIT 50`;
  const [breakers] = await p.$queryRaw<Snapshot["breakers"][]>`
    SELECT (count(*) FILTER (WHERE breaker_state = 'open'))::int AS open,
           (count(*) FILTER (WHERE breaker_state = 'half_open'))::int AS "halfOpen"
    FROM source_state`;
  const [outage] = await p.$queryRaw<{ open: number }[]>`
    SELECT count(*)::int AS open FROM network_outages WHERE ended_at IS NULL`;
  const sources = await p.$queryRaw<Snapshot["sources"]>`
    SELECT s.id, s.kind, s.enabled, s.poll_interval_seconds AS "pollIntervalSeconds",
           st.poll_every_seconds AS "pollEverySeconds", s.created_at AS "createdAt",
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
  const [dedup] = await readDedup(db);
  const embedding = await readEmbedding(db);
  const extraction = await readExtraction(db, embedding.canonical);
  const readModel = await readReadModel(db);
  const websub = await readWebSub(db);
  return {
    queues,
    breakers: breakers ?? { open: 0, halfOpen: 0 },
    outage: outage?.open ?? 0,
    sources,
    actions,
    stories,
    rejections,
    workers,
    dedup: dedup ?? {
      pending: 0,
      oldestPending: 0,
      clusters: 0,
      lastDecision: null,
      decidedHour: 0,
      duplicatesHour: 0,
      undecided: 0,
      undecidedOldest: 0,
    },
    embedding,
    extraction,
    readModel,
    websub,
  };
}

/**
 * WebSub's subscriptions: one row per feed source looked at (tens to thousands), counted by state
 * in one pass (the due renewals among the active ones with it); then the refused pushes of the
 * feeds that ever had a callback token, at most LIMITS.sources of them, as the per-source gauges.
 */
async function readWebSub(db: Database): Promise<Snapshot["websub"]> {
  const states = await db.prisma.$queryRaw<
    (Snapshot["websub"]["states"][number] & { due: number })[]
  >`
    SELECT state, count(*)::int AS n,
           (count(*) FILTER (WHERE state = 'active' AND renew_at <= now()))::int AS due
    FROM websub_subscriptions GROUP BY state ORDER BY state LIMIT 50`;
  const rejected = await db.prisma.$queryRaw<Snapshot["websub"]["rejected"]>`
    SELECT source_id AS source, rejected_pushes::float8 AS n FROM websub_subscriptions
    WHERE token IS NOT NULL ORDER BY source_id LIMIT ${LIMITS.sources}`;
  return {
    states: states.map(({ state, n }) => ({ state, n })),
    renewalsDue: states.reduce((sum, r) => sum + r.due, 0),
    rejected,
  };
}

/**
 * The read model's head as the builder recorded it: the newest build that finished without an
 * error, found walking read_model_builds_started_idx backwards (a build a second: ~3,600 rows an
 * hour, and the newest finished one is among the first rows read).
 */
async function readReadModel(db: Database): Promise<Snapshot["readModel"]> {
  const [row] = await db.prisma.$queryRaw<{ version: number; age: number }[]>`
    SELECT model_version::float8 AS version,
           greatest(0, extract(epoch FROM now() - finished_at))::float8 AS age
    FROM read_model_builds
    WHERE finished_at IS NOT NULL AND error IS NULL
    ORDER BY started_at DESC LIMIT 1`;
  return { version: row?.version ?? null, ageSeconds: row?.age ?? null };
}

/**
 * Extraction's budgets today (a range of today's ledger rows on provider_calls_provider_idx) and
 * its coverage, counted cheaply: the rows of the newest extraction's chain on
 * item_extractions_extractor_idx against the canonical count already read, not the join the
 * Costs page makes (that one checks each row's version: seconds at 1,000,000 items, too slow for
 * a scrape every 15 s). An item edited since its extraction still counts here until re-extracted.
 */
async function readExtraction(db: Database, canonical: number): Promise<Snapshot["extraction"]> {
  const { states } = await budgetStates(db, {
    budgets: { llm: config().WIREWATCH_EXTRACT_LLM_DAILY_BUDGET_USD },
  });
  const [row] = await db.prisma.$queryRaw<{ n: number }[]>`
    SELECT count(*)::float8 AS n FROM item_extractions
    WHERE extractor = (SELECT extractor FROM item_extractions ORDER BY extracted_at DESC LIMIT 1)`;
  return {
    budgets: states.map((b) => ({
      provider: b.provider,
      spentUsd: b.spentUsd,
      budgetUsd: b.budgetUsd,
      exhausted: b.exhausted,
    })),
    canonical,
    extracted: row?.n ?? 0,
  };
}

/**
 * The embedding models and their coverage: the canonical items (live, unique or in review) and
 * each model's vectors, counted over item_vectors' primary key (model first).
 */
async function readEmbedding(db: Database): Promise<Snapshot["embedding"]> {
  const [row] = await db.prisma.$queryRaw<{ n: number }[]>`
    SELECT count(*)::float8 AS n FROM dedup_items WHERE live AND outcome IN ('unique', 'review')`;
  const models = await db.prisma.$queryRaw<Snapshot["embedding"]["models"]>`
    SELECT m.model, m.kind, m.state,
           (SELECT count(*) FROM item_vectors v WHERE v.model_id = m.id)::float8 AS embedded
    FROM embedding_models m ORDER BY m.id LIMIT 50`;
  return { canonical: row?.n ?? 0, models };
}

/**
 * The dedup stage's gauges in one statement: pending reviews (dedup_reviews_pending_idx), live
 * clusters (dedup_clusters_members_idx is partial on live ones), the last hour's decisions
 * (dedup_items_decided_at_idx), and the items changed in the last hour that are not decided at
 * their version (news_updated_at_idx, then dedup_items by primary key). The hour bounds the
 * last part: a stage stalled for longer still shows an hour-old item, which the alert needs.
 * With 100,000 items changed in the hour, the whole snapshot took 46–69 ms on PostgreSQL.
 */
function readDedup(db: Database) {
  return db.prisma.$queryRaw<Snapshot["dedup"][]>`
    SELECT
      (SELECT count(*) FROM dedup_reviews WHERE state = 'pending')::int AS pending,
      coalesce((SELECT extract(epoch FROM now() - min(created_at)) FROM dedup_reviews
                WHERE state = 'pending'), 0)::float8 AS "oldestPending",
      (SELECT count(*) FROM dedup_clusters WHERE dissolved_at IS NULL)::int AS clusters,
      (SELECT extract(epoch FROM max(decided_at)) FROM dedup_items)::float8 AS "lastDecision",
      h.decided::int AS "decidedHour", h.duplicates::int AS "duplicatesHour",
      u.undecided::int AS undecided, u.oldest::float8 AS "undecidedOldest"
    FROM (SELECT count(*) FILTER (WHERE outcome <> 'removed') AS decided,
                 count(*) FILTER (WHERE outcome = 'duplicate') AS duplicates
          FROM dedup_items WHERE decided_at > now() - interval '1 hour') h,
         (SELECT count(*) AS undecided,
                 coalesce(extract(epoch FROM now() - min(n.updated_at)), 0) AS oldest
          FROM news n LEFT JOIN dedup_items d ON d.entry_key = n.entry_key
          WHERE n.updated_at > now() - interval '1 hour'
            AND (d.version IS NULL OR d.version < n.version)) u`;
}

/**
 * Folds the claims of the minutes that closed since the last fold into the lag histogram,
 * exactly once per process. The claim statement adds its jobs to queue_claim_stats' row of its
 * minute (on the database clock), so a minute is final once it has ended; 5 s more covers a claim
 * statement still committing when its minute ends (a claim of 1,000 takes tens of ms). Each call
 * reads the minutes after `after` up to the last closed one, at most 60 (60 rows per queue:
 * bounded work even after a long gap between scrapes), and returns the new cursor. A process
 * starts with the last 10 minutes (`after` undefined).
 */
export async function foldClaimMinutes(
  db: Database,
  after: Date | undefined,
  add: (queue: string, buckets: readonly number[], sumSeconds: number) => void,
): Promise<Date> {
  const rows = await db.prisma.$queryRaw<
    {
      upto: Date;
      queue: string | null;
      wait_buckets: bigint[] | null;
      wait_ms_sum: bigint | null;
    }[]
  >`
    WITH bounds AS (
      SELECT coalesce(${after ?? null}::timestamptz,
                      date_trunc('minute', now()) - interval '11 minutes') AS after,
             date_trunc('minute', now() - interval '65 seconds') AS closed
    ), span AS (
      SELECT after, greatest(after, least(closed, after + interval '60 minutes')) AS upto
      FROM bounds
    )
    SELECT s.upto, q.queue, q.wait_buckets, q.wait_ms_sum
    FROM span s
    LEFT JOIN queue_claim_stats q ON q.minute > s.after AND q.minute <= s.upto
    ORDER BY q.minute, q.queue`;
  for (const r of rows) {
    if (r.queue === null || r.wait_buckets === null) continue;
    add(r.queue, r.wait_buckets.map(Number), Number(r.wait_ms_sum ?? 0) / 1000);
  }
  const upto = rows[0]?.upto;
  if (!upto) throw new Error("metrics: the claim fold read no bounds");
  return new Date(upto);
}
