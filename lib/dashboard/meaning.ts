import type { Database } from "@/lib/db";
import { activeSearchModel } from "@/lib/search/hybrid";
import type { VectorBackend } from "@/lib/search/types";
import { vectorBackendStatus } from "@/lib/search/vectors";
import { type SearchLatency, searchLatency } from "./searchLatency";

/**
 * The Meaning page's reads: which embedding models exist and how far each has got through the
 * canonical items, how fast they embed, what their supplier calls cost and how often they fail,
 * which model search answers with, where vectors are searched, and how long searches take. The
 * embed stage (workers/embed) writes embedding_models and item_vectors, the cost ledger
 * provider_calls; this module only reads them back, every read bounded by an index or a window.
 */

/** The embeddings-per-minute bars: 12 of 5 minutes, the last hour, the newest ending now. */
export const RATE_BUCKET_SECONDS = 300;
export const RATE_BUCKETS = 12;
/** Supplier calls are added up over the last day, the cost ledger's own window. */
export const CALLS_WINDOW_HOURS = 24;
/**
 * A model's last error is looked for over the last week: older than that it says nothing about
 * the supplier now, and the look stays a range of provider_calls_at_idx, not the whole ledger.
 */
export const LAST_ERROR_WINDOW_HOURS = 7 * 24;

/** How the page and the API name a kind: lexical is never presented as meaning. */
export const KIND_LABELS = { meaning: "meaning", lexical: "lexical — not meaning" } as const;

export interface RateBucket {
  /** Epoch ms of the bucket's start. */
  t: number;
  /** Vectors stored in the bucket, per minute. */
  perMinute: number;
}

export interface ProviderCallStats {
  calls: number;
  errors: number;
  costUsd: number;
  /** Input and output tokens. */
  tokens: number;
  lastError: { message: string | null; status: number | null; at: string } | null;
}

export interface MeaningModel {
  id: number;
  /** "shipped:use-lite@0.2.0": the id stored with every vector. */
  model: string;
  provider: string;
  kind: string;
  /** KIND_LABELS[kind]; a kind this page does not know is shown as it is, never as meaning. */
  kindLabel: string;
  dims: number;
  languages: string[];
  crossLingual: boolean;
  /** What it cannot do, as the page says it: "no Bangla ↔ English", "English only". */
  limits: string[];
  meaningThreshold: number | null;
  distinctThreshold: number | null;
  state: string;
  /** Vectors stored by the model, of canonical items or not (an item may have become a duplicate). */
  embedded: number;
  /** Canonical items with a vector of their current version by this model. */
  covered: number;
  /** covered / canonical (null: no canonical items yet). */
  coverage: number | null;
  backfill: { startedAt: string | null; completedAt: string | null; progress: number | null };
  rate: { buckets: RateBucket[]; lastHour: number };
  calls: ProviderCallStats;
  /** Search answers with this model now. */
  inSearch: boolean;
}

/** Supplier calls for embeddings under a model with no row (it never stored a vector). */
export interface UnregisteredCalls extends ProviderCallStats {
  model: string;
  provider: string;
}

export interface MeaningOverview {
  now: string;
  /** When coverage and rates were counted (up to COUNTS_TTL_MS before `now`). */
  countedAt: string;
  backend: {
    kind: VectorBackend;
    description: string;
    /** The extension's version when pgvector is in use. */
    pgvectorVersion: string | null;
    /** Why the portable path is in use (the server's answer), or null. */
    reason: string | null;
  };
  /** Live items that survived dedup (unique, or waiting for review): what every model must cover. */
  canonical: number;
  models: MeaningModel[];
  /** The model search ranks by meaning with; null: keyword search only. */
  searchModel: {
    id: number;
    model: string;
    kind: string;
    kindLabel: string;
    /** Why not the configured model, when one is configured and not complete. */
    note: string | null;
  } | null;
  unregistered: UnregisteredCalls[];
  /** This process's last searches (lib/dashboard/searchLatency.ts). */
  latency: SearchLatency;
}

/**
 * The backends as the page names them. The portable path's figures are lib/search's (bench
 * search, PostgreSQL 15 with two parallel workers; lib/search/vectors.ts): a scan reads every
 * vector of the model, so its time grows with the count.
 */
export const BACKEND_DESCRIPTIONS: Record<VectorBackend, string> = {
  pgvector: "pgvector (HNSW, an index per model)",
  portable:
    "portable: exact scan of sign codes, then cosine; ~40 ms a search at 100,000 vectors, " +
    "250–400 ms at 1,000,000",
};

export function kindLabel(kind: string): string {
  return Object.hasOwn(KIND_LABELS, kind) ? KIND_LABELS[kind as keyof typeof KIND_LABELS] : kind;
}

/** What a model cannot do, said on the page rather than left out. */
export function modelLimits(m: { languages: string[]; crossLingual: boolean }): string[] {
  const limits: string[] = [];
  if (!m.crossLingual) limits.push("no Bangla ↔ English");
  if (m.languages.length === 1 && m.languages[0] === "en") limits.push("English only");
  return limits;
}

const iso = (d: Date | null | undefined): string | null => (d ? d.toISOString() : null);

/** A row of embedding_models with its counts. */
interface ModelRow {
  id: number;
  model: string;
  provider: string;
  kind: string;
  dims: number;
  languages: string[];
  crossLingual: boolean;
  meaningThreshold: number | null;
  distinctThreshold: number | null;
  state: string;
  backfillStartedAt: Date | null;
  backfillCompletedAt: Date | null;
  embedded: number;
  covered: number;
}

/**
 * The heavy part (see COUNTS_TTL_MS): every model's counts over the canonical items, and the
 * last hour's embedding rates, as of `at`.
 */
interface Counts {
  at: Date;
  canonical: number;
  models: ModelRow[];
  rates: Map<number, RateBucket[]>;
}

async function readCounts(db: Database, at: Date): Promise<Counts> {
  const [coverage, rates] = await Promise.all([readCoverage(db), readRates(db, at)]);
  return { at, ...coverage, rates };
}

async function readCoverage(db: Database): Promise<Omit<Counts, "at" | "rates">> {
  const p = db.prisma;
  // The canonical items, as the embed stage and its backfill count them (workers/embed).
  const [canonical] = await p.$queryRaw<{ n: bigint }[]>`
    SELECT count(*) AS n FROM dedup_items WHERE live AND outcome IN ('unique', 'review')`;
  const models = await p.$queryRaw<
    {
      id: number;
      model: string;
      provider: string;
      kind: string;
      dims: number;
      languages: string[];
      cross_lingual: boolean;
      meaning_threshold: number | null;
      distinct_threshold: number | null;
      state: string;
      backfill_started_at: Date | null;
      backfill_completed_at: Date | null;
    }[]
  >`
    SELECT id, model, provider, kind, dims, languages, cross_lingual, meaning_threshold,
           distinct_threshold, state, backfill_started_at, backfill_completed_at
    FROM embedding_models ORDER BY id`;
  // One pass over the vectors for both counts. A canonical item counts as covered when its
  // current version has a vector, as the backfill decides what is missing: a vector of an older
  // version is being replaced, one of an item that became a duplicate (or was removed) is
  // stored but covers nothing.
  const counts = await p.$queryRaw<{ model_id: number; embedded: bigint; covered: bigint }[]>`
    SELECT v.model_id, count(*) AS embedded,
           count(*) FILTER (WHERE d.live AND d.outcome IN ('unique', 'review')
                              AND v.item_version >= d.version) AS covered
    FROM item_vectors v LEFT JOIN dedup_items d ON d.entry_key = v.entry_key
    GROUP BY v.model_id`;
  const byModel = new Map(counts.map((c) => [c.model_id, c]));
  return {
    canonical: Number(canonical?.n ?? 0),
    models: models.map((m) => ({
      id: m.id,
      model: m.model,
      provider: m.provider,
      kind: m.kind,
      dims: m.dims,
      languages: m.languages,
      crossLingual: m.cross_lingual,
      meaningThreshold: m.meaning_threshold,
      distinctThreshold: m.distinct_threshold,
      state: m.state,
      backfillStartedAt: m.backfill_started_at,
      backfillCompletedAt: m.backfill_completed_at,
      embedded: Number(byModel.get(m.id)?.embedded ?? 0),
      covered: Number(byModel.get(m.id)?.covered ?? 0),
    })),
  };
}

/**
 * How long one process may reuse the counts: 20 times what reading them took, at most this.
 * Coverage passes over every vector and every canonical item, and while a backfill runs at full
 * speed most of the last hour's vectors are new, so the rates read a large part of item_vectors
 * too. Measured on PostgreSQL 15 (2 cores, shared) at 1,000,000 items (900,000 canonical) and
 * 1,400,000 vectors of two models, 730,000 of them stored in the last hour: 2.8 s for coverage
 * (a hash join of the two tables), 1.3 s for the rates, 0.3 s for the canonical count; the
 * rest of the answer (supplier calls, the search model) 0.1 s, read fresh on every request.
 * The page polls every 10 s and each open page would pay that; reused, the counts cost 4.4 s a
 * minute at that size whatever the number of pages open, and a minute-old coverage of a
 * backfill that moves a few percent a minute says the same. A small deployment reads them in milliseconds, fresh.
 */
export const COUNTS_TTL_MS = 60_000;

const countsCache = globalThis as unknown as {
  wirewatchMeaningCounts?: WeakMap<Database, { until: number; counts: Promise<Counts> }>;
};

function cachedCounts(db: Database, now: Date): Promise<Counts> {
  countsCache.wirewatchMeaningCounts ??= new WeakMap();
  const cache = countsCache.wirewatchMeaningCounts;
  const hit = cache.get(db);
  if (hit && hit.until > now.getTime()) return hit.counts;
  const started = performance.now();
  const counts = readCounts(db, now);
  // Until the read ends, concurrent requests share it; then it is reused for 20× its cost.
  const entry = { until: Number.POSITIVE_INFINITY, counts };
  cache.set(db, entry);
  counts.then(
    () => {
      entry.until = now.getTime() + Math.min(COUNTS_TTL_MS, 20 * (performance.now() - started));
    },
    // A failed read is not kept: the next request tries again.
    () => {
      if (cache.get(db) === entry) cache.delete(db);
    },
  );
  return counts;
}

/** Vectors stored per model in each 5-minute bucket of the last hour (item_vectors_created_idx). */
async function readRates(db: Database, now: Date): Promise<Map<number, RateBucket[]>> {
  const span = RATE_BUCKET_SECONDS * RATE_BUCKETS;
  const since = new Date(now.getTime() - span * 1000);
  // Bucket 0 is the oldest; buckets end at `now`, so every bar is five whole minutes.
  const rows = await db.prisma.$queryRaw<{ model_id: number; bucket: number; n: bigint }[]>`
    SELECT model_id,
           least(${RATE_BUCKETS - 1}::int,
                 floor(extract(epoch FROM (created_at - ${since}::timestamptz))
                       / ${RATE_BUCKET_SECONDS}::int)::int) AS bucket,
           count(*) AS n
    FROM item_vectors
    WHERE created_at > ${since}::timestamptz AND created_at <= ${now}::timestamptz
    GROUP BY 1, 2`;
  const byModel = new Map<number, RateBucket[]>();
  for (const r of rows) {
    let buckets = byModel.get(r.model_id);
    if (!buckets) {
      buckets = emptyRates(since);
      byModel.set(r.model_id, buckets);
    }
    const b = buckets[r.bucket];
    if (b) b.perMinute = Number(r.n) / (RATE_BUCKET_SECONDS / 60);
  }
  return byModel;
}

const emptyRates = (since: Date): RateBucket[] =>
  Array.from({ length: RATE_BUCKETS }, (_, i) => ({
    t: since.getTime() + i * RATE_BUCKET_SECONDS * 1000,
    perMinute: 0,
  }));

/** Embedding calls per model over the last day, and each model's last error in the last week. */
async function readCalls(
  db: Database,
  now: Date,
): Promise<Map<string, ProviderCallStats & { provider: string }>> {
  const daySince = new Date(now.getTime() - CALLS_WINDOW_HOURS * 3_600_000);
  const errorSince = new Date(now.getTime() - LAST_ERROR_WINDOW_HOURS * 3_600_000);
  const [totals, errors] = await Promise.all([
    db.prisma.$queryRaw<
      {
        model: string;
        provider: string;
        calls: bigint;
        errors: bigint;
        cost_usd: number;
        tokens: bigint;
      }[]
    >`
      SELECT model, min(provider) AS provider, count(*) AS calls,
             count(*) FILTER (WHERE NOT ok) AS errors,
             coalesce(sum(cost_usd), 0)::float8 AS cost_usd,
             coalesce(sum(input_tokens::int8 + output_tokens::int8), 0)::int8 AS tokens
      FROM provider_calls
      WHERE purpose = 'embed' AND at > ${daySince}::timestamptz AND at <= ${now}::timestamptz
      GROUP BY model`,
    db.prisma.$queryRaw<
      { model: string; provider: string; error: string | null; status: number | null; at: Date }[]
    >`
      SELECT DISTINCT ON (model) model, provider, error, status, at
      FROM provider_calls
      WHERE purpose = 'embed' AND NOT ok
        AND at > ${errorSince}::timestamptz AND at <= ${now}::timestamptz
      ORDER BY model, at DESC, id DESC`,
  ]);
  const byModel = new Map<string, ProviderCallStats & { provider: string }>();
  for (const r of totals) {
    byModel.set(r.model, {
      provider: r.provider,
      calls: Number(r.calls),
      errors: Number(r.errors),
      costUsd: r.cost_usd,
      tokens: Number(r.tokens),
      lastError: null,
    });
  }
  for (const r of errors) {
    const stats = byModel.get(r.model) ?? { ...noCalls(), provider: r.provider };
    stats.lastError = { message: r.error, status: r.status, at: r.at.toISOString() };
    byModel.set(r.model, stats);
  }
  return byModel;
}

const noCalls = (): ProviderCallStats => ({
  calls: 0,
  errors: 0,
  costUsd: 0,
  tokens: 0,
  lastError: null,
});

/**
 * The page's answer. `now` given (tests): read at that instant, no cache; otherwise the counts
 * (coverage, rates) come from the process's cache (COUNTS_TTL_MS) and the rest is read fresh.
 */
export async function meaningOverview(
  db: Database,
  {
    now,
    configuredSearchModel,
  }: {
    now?: Date;
    /** The model search is told to use (a model id or its prefix), as the search route is. */
    configuredSearchModel?: string | null;
  } = {},
): Promise<MeaningOverview> {
  const at = now ?? new Date();
  const [backend, search, counts, calls] = await Promise.all([
    vectorBackendStatus(db),
    activeSearchModel(db, configuredSearchModel),
    now ? readCounts(db, at) : cachedCounts(db, at),
    readCalls(db, at),
  ]);
  const since = new Date(counts.at.getTime() - RATE_BUCKET_SECONDS * RATE_BUCKETS * 1000);
  const models = counts.models.map((m): MeaningModel => {
    // Two statements, not one snapshot: an item made canonical between them is not over 100%.
    const covered = Math.min(m.covered, counts.canonical);
    const share = counts.canonical > 0 ? covered / counts.canonical : null;
    const buckets = counts.rates.get(m.id) ?? emptyRates(since);
    const { provider: _, ...stats } = calls.get(m.model) ?? { ...noCalls(), provider: "" };
    return {
      id: m.id,
      model: m.model,
      provider: m.provider,
      kind: m.kind,
      kindLabel: kindLabel(m.kind),
      dims: m.dims,
      languages: m.languages,
      crossLingual: m.crossLingual,
      limits: modelLimits(m),
      meaningThreshold: m.meaningThreshold,
      distinctThreshold: m.distinctThreshold,
      state: m.state,
      embedded: m.embedded,
      covered,
      coverage: share,
      backfill: {
        startedAt: iso(m.backfillStartedAt),
        completedAt: iso(m.backfillCompletedAt),
        progress: share,
      },
      rate: {
        buckets,
        lastHour: buckets.reduce((a, b) => a + b.perMinute * (RATE_BUCKET_SECONDS / 60), 0),
      },
      calls: stats,
      inSearch: search?.id === m.id,
    };
  });
  const known = new Set(counts.models.map((m) => m.model));
  const unregistered = [...calls.entries()]
    .filter(([model]) => !known.has(model))
    .map(([model, stats]) => ({ model, ...stats }))
    .sort((a, b) => a.model.localeCompare(b.model));
  return {
    now: at.toISOString(),
    countedAt: counts.at.toISOString(),
    backend: {
      kind: backend.backend,
      description: BACKEND_DESCRIPTIONS[backend.backend],
      pgvectorVersion: backend.pgvectorVersion,
      reason: backend.reason,
    },
    canonical: counts.canonical,
    models,
    searchModel: search
      ? {
          id: search.id,
          model: search.model,
          kind: search.info.kind,
          kindLabel: kindLabel(search.info.kind),
          note: search.note ?? null,
        }
      : null,
    unregistered,
    latency: searchLatency(),
  };
}
