import type { Database } from "@/lib/db";
import { extractionCoverage } from "./extractionCoverage";

/**
 * The Costs page's reads (seed 002, "costed per item"): what extraction spends, on which
 * provider and model, over time; what each source's spend buys (unique stories, duplicates,
 * failed attempts: "is this source worth crawling?"); the month's forecast against the budget;
 * each paid provider's budget today; the calls by outcome, corrections and fallovers; the most
 * expensive items; and how far the configured extractor has got through the canonical items.
 * The chain (lib/extract) writes provider_calls through the ledger, the extract stage
 * item_extractions; this module only reads them, every read a bounded time range of an indexed
 * column (provider_calls_at_idx, item_extractions_at_idx, news_source_first_seen_idx) with a
 * LIMIT on what it lists.
 */

/** The windows the per-source table, the outcomes and the top items can be read over. */
export const COST_WINDOWS = { "24h": 24, "7d": 7 * 24, "30d": 30 * 24 } as const;
export type CostWindow = keyof typeof COST_WINDOWS;

/** Spend over time: 24 clock hours (the last one running), and 30 UTC days (today running). */
export const HOURLY_BUCKETS = 24;
export const DAILY_BUCKETS = 30;
/**
 * Provider/model series drawn apart in the spend plot; the rest are summed as "other". A chain
 * has two or three providers and a model change adds one: six leave room for a month of changes.
 */
export const MAX_SERIES = 6;
/** Rows of the per-source table: a deployment has tens of sources. */
export const MAX_SOURCES = 200;
export const TOP_ITEMS = 10;
/** The forecast's rate: the last 7 days' daily average (fewer when the calls began later). */
export const FORECAST_BASIS_DAYS = 7;

/**
 * Outcomes of attempts that made no call (lib/extract/types.ts EXTRACT_FAILURE_CODES): the
 * chain recorded that it held the provider back. They cost nothing and say nothing about the
 * item or its source, so the error rate leaves them out (they are counted by outcome).
 */
export const NOT_CALLED = ["breaker_open", "skipped", "budget_exhausted"] as const;

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

export interface SpendSeries {
  /** "llm/sim-extract-1": the field of the series in every bucket's `usd`. */
  key: string;
  provider: string;
  model: string;
  costUsd: number;
  calls: number;
  tokensIn: number;
  tokensOut: number;
}

export interface SpendBucket {
  /** Epoch ms of the bucket's start (UTC). */
  t: number;
  /** Spend in the bucket by series key; every series of the span has a value (0 when none). */
  usd: Record<string, number>;
}

export interface SpendOverTime {
  bucketSeconds: number;
  /** Most spent first; past MAX_SERIES the rest are one series, "other". */
  series: SpendSeries[];
  buckets: SpendBucket[];
  totalUsd: number;
}

/** What a source's extraction spend buys over the window. */
export interface SourceCosts {
  sourceId: string;
  sourceName: string | null;
  costUsd: number;
  tokensIn: number;
  tokensOut: number;
  /** Calls made for its items (all providers, corrections included; NOT_CALLED left out). */
  attempts: number;
  failed: number;
  /** failed / attempts; null with no attempt. */
  errorRate: number | null;
  /** Its items first seen in the window that dedup kept (unique, or waiting for review). */
  uniqueStories: number;
  /** Its items first seen in the window that dedup linked to another item. */
  duplicates: number;
  /** duplicates / (uniqueStories + duplicates); null when dedup decided none. */
  duplicateRate: number | null;
  /** costUsd / uniqueStories; null without a unique story. */
  costPerUniqueStory: number | null;
}

export interface Forecast {
  /** "2026-12": the UTC month. */
  month: string;
  monthToDateUsd: number;
  /** Spend per day at the current rate: the basis days' spend / basisDays. */
  dailyAverageUsd: number;
  /** Days the rate is averaged over: 7, or since the first call of those 7 days (at least 1). */
  basisDays: number;
  daysInMonth: number;
  /** Days from now to the end of the month (fractional). */
  daysLeft: number;
  /** monthToDateUsd + dailyAverageUsd × daysLeft. */
  forecastUsd: number;
  /** The paid providers' daily budgets × days in the month; null with no budget set. */
  budgetUsd: number | null;
  /** forecastUsd / budgetUsd; null with no budget. */
  share: number | null;
  /** Embedding suppliers' spend this month (the Meaning page), not in the figures above. */
  embeddingMonthToDateUsd: number;
}

export interface BudgetState {
  provider: string;
  /** Today's (UTC) extraction spend of the provider. */
  spentUsd: number;
  /** Its daily budget; null when none is set. */
  budgetUsd: number | null;
  /** The budget is spent: the chain skips the provider until midnight UTC. */
  exhausted: boolean;
  /** Attempts today the chain did not make because the budget was spent. */
  skippedToday: number;
  lastSkippedAt: string | null;
  /** When the budget resets (the next UTC midnight). */
  resetsAt: string;
}

export interface OutcomeCount {
  provider: string;
  /** "ok", or the failure's code. */
  outcome: string;
  calls: number;
  costUsd: number;
}

export interface CallsSummary {
  byOutcome: OutcomeCount[];
  /** Rows of the ledger in the window (NOT_CALLED included). */
  total: number;
  attempts: number;
  failed: number;
  /** Correction retries (the validation errors fed back), and how many of them were valid. */
  corrections: number;
  correctionsOk: number;
  /** Extractions made in the window (item_extractions at their latest version). */
  extractions: number;
  /** Of those, answered by a provider after the first of the chain. */
  fallovers: number;
  /** Extractions by the provider and model that made them. */
  byProvider: { provider: string; model: string; extractions: number; fallovers: number }[];
}

export interface TopItem {
  entryKey: string;
  title: string | null;
  sourceId: string | null;
  sourceName: string | null;
  costUsd: number;
  calls: number;
  tokensIn: number;
  tokensOut: number;
}

export interface Coverage {
  /** The extractor coverage is counted for; null before the first extraction. */
  extractor: string | null;
  canonical: number;
  done: number;
  remaining: number;
  /** done / canonical; null with no canonical item or no extractor. */
  ratio: number | null;
}

export interface CostsOverview {
  now: string;
  /** When the window's figures were read (up to COUNTS_TTL_MS before `now`). */
  countedAt: string;
  window: CostWindow;
  spend: { hourly: SpendOverTime; daily: SpendOverTime };
  /** Today's (UTC) extraction spend and calls, all providers. */
  today: { costUsd: number; calls: number };
  sources: SourceCosts[];
  forecast: Forecast;
  budgets: BudgetState[];
  calls: CallsSummary;
  topItems: TopItem[];
  coverage: Coverage;
}

export interface CostsOptions {
  /** Read at this instant, no cache (tests). */
  now?: Date;
  window?: CostWindow;
  /** Daily budget per paid provider (WIREWATCH_EXTRACT_LLM_DAILY_BUDGET_USD for "llm"). */
  budgets?: Record<string, number | undefined | null>;
  /**
   * The extractor the line runs (lib/extract chain id); undefined: the one that made the newest
   * extraction.
   */
  extractor?: string | null;
}

const utcDay = (d: Date) => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()));
const utcHour = (d: Date) => new Date(Math.floor(d.getTime() / HOUR_MS) * HOUR_MS);

/** Spend by provider and model in `count` buckets of `bucketMs` from `since` up to `now`. */
async function readSpend(
  db: Database,
  since: Date,
  now: Date,
  bucketMs: number,
  count: number,
): Promise<SpendOverTime> {
  const bucketSeconds = bucketMs / 1000;
  const rows = await db.prisma.$queryRaw<
    {
      provider: string;
      model: string;
      bucket: number;
      usd: number;
      calls: number;
      tokens_in: number;
      tokens_out: number;
    }[]
  >`
    SELECT provider, model,
           least(${count - 1}::int,
                 floor(extract(epoch FROM (at - ${since}::timestamptz)) / ${bucketSeconds}::int)::int)
             AS bucket,
           coalesce(sum(cost_usd), 0)::float8 AS usd, count(*)::int AS calls,
           coalesce(sum(input_tokens), 0)::float8 AS tokens_in,
           coalesce(sum(output_tokens), 0)::float8 AS tokens_out
    FROM provider_calls
    WHERE purpose = 'extract' AND at >= ${since}::timestamptz AND at <= ${now}::timestamptz
    GROUP BY 1, 2, 3`;
  const totals = new Map<string, SpendSeries>();
  for (const r of rows) {
    const key = `${r.provider}/${r.model}`;
    const s = totals.get(key) ?? {
      key,
      provider: r.provider,
      model: r.model,
      costUsd: 0,
      calls: 0,
      tokensIn: 0,
      tokensOut: 0,
    };
    s.costUsd += r.usd;
    s.calls += r.calls;
    s.tokensIn += r.tokens_in;
    s.tokensOut += r.tokens_out;
    totals.set(key, s);
  }
  const ranked = [...totals.values()].sort(
    (a, b) => b.costUsd - a.costUsd || b.calls - a.calls || a.key.localeCompare(b.key),
  );
  const kept = ranked.slice(0, ranked.length > MAX_SERIES ? MAX_SERIES - 1 : MAX_SERIES);
  const folded = ranked.slice(kept.length);
  const series = [...kept];
  if (folded.length > 0) {
    const other: SpendSeries = {
      key: "other",
      provider: "other",
      model: `${folded.length} more`,
      costUsd: 0,
      calls: 0,
      tokensIn: 0,
      tokensOut: 0,
    };
    for (const s of folded) {
      other.costUsd += s.costUsd;
      other.calls += s.calls;
      other.tokensIn += s.tokensIn;
      other.tokensOut += s.tokensOut;
    }
    series.push(other);
  }
  const keyOf = new Map(ranked.map((s, i) => [s.key, i < kept.length ? s.key : "other"]));
  const buckets: SpendBucket[] = Array.from({ length: count }, (_, i) => ({
    t: since.getTime() + i * bucketMs,
    usd: Object.fromEntries(series.map((s) => [s.key, 0])),
  }));
  for (const r of rows) {
    const b = buckets[r.bucket];
    const key = keyOf.get(`${r.provider}/${r.model}`);
    if (b && key) b.usd[key] = (b.usd[key] ?? 0) + r.usd;
  }
  return {
    bucketSeconds,
    series,
    buckets,
    totalUsd: series.reduce((a, s) => a + s.costUsd, 0),
  };
}

/**
 * Per source over the window: the ledger's rows for its items (provider_calls_source_idx), and
 * its items first seen in the window with dedup's decision, walked source by source on
 * news_source_first_seen_idx (a range per source, not a pass over every item).
 */
async function readSources(db: Database, since: Date, now: Date): Promise<SourceCosts[]> {
  const p = db.prisma;
  const [calls, stories] = await Promise.all([
    p.$queryRaw<
      {
        source_id: string;
        cost: number;
        tokens_in: number;
        tokens_out: number;
        attempts: number;
        failed: number;
      }[]
    >`
      SELECT source_id, coalesce(sum(cost_usd), 0)::float8 AS cost,
             coalesce(sum(input_tokens), 0)::float8 AS tokens_in,
             coalesce(sum(output_tokens), 0)::float8 AS tokens_out,
             count(*) FILTER (WHERE coalesce(outcome, '') <> ALL (${[...NOT_CALLED]}::text[]))::int
               AS attempts,
             count(*) FILTER (WHERE NOT ok
                                AND coalesce(outcome, '') <> ALL (${[...NOT_CALLED]}::text[]))::int
               AS failed
      FROM provider_calls
      WHERE purpose = 'extract' AND source_id IS NOT NULL
        AND at >= ${since}::timestamptz AND at <= ${now}::timestamptz
      GROUP BY source_id
      ORDER BY cost DESC, source_id
      LIMIT ${MAX_SOURCES}`,
    p.$queryRaw<{ id: string; name: string; uniq: number; duplicates: number }[]>`
      SELECT s.id, s.name, x.uniq, x.duplicates
      FROM (SELECT id, name FROM sources ORDER BY enabled DESC, id LIMIT ${MAX_SOURCES}) s
      CROSS JOIN LATERAL (
        SELECT count(*) FILTER (WHERE d.outcome IN ('unique', 'review'))::int AS uniq,
               count(*) FILTER (WHERE d.outcome = 'duplicate')::int AS duplicates
        FROM news n JOIN dedup_items d ON d.entry_key = n.entry_key
        WHERE n.source_id = s.id
          AND n.first_seen_at >= ${since}::timestamptz AND n.first_seen_at <= ${now}::timestamptz
      ) x`,
  ]);
  const names = new Map(stories.map((s) => [s.id, s]));
  const ids = new Set([...calls.map((c) => c.source_id), ...stories.map((s) => s.id)]);
  const byId = new Map(calls.map((c) => [c.source_id, c]));
  const rows = [...ids].map((id): SourceCosts => {
    const c = byId.get(id);
    const s = names.get(id);
    const uniqueStories = s?.uniq ?? 0;
    const duplicates = s?.duplicates ?? 0;
    const cost = c?.cost ?? 0;
    const attempts = c?.attempts ?? 0;
    return {
      sourceId: id,
      sourceName: s?.name ?? null,
      costUsd: cost,
      tokensIn: c?.tokens_in ?? 0,
      tokensOut: c?.tokens_out ?? 0,
      attempts,
      failed: c?.failed ?? 0,
      errorRate: attempts > 0 ? (c?.failed ?? 0) / attempts : null,
      uniqueStories,
      duplicates,
      duplicateRate:
        uniqueStories + duplicates > 0 ? duplicates / (uniqueStories + duplicates) : null,
      costPerUniqueStory: uniqueStories > 0 ? cost / uniqueStories : null,
    };
  });
  // A source with neither spend nor stories in the window says nothing: left out.
  return rows
    .filter((r) => r.attempts > 0 || r.costUsd > 0 || r.uniqueStories + r.duplicates > 0)
    .sort(
      (a, b) =>
        b.costUsd - a.costUsd ||
        b.attempts - a.attempts ||
        b.uniqueStories - a.uniqueStories ||
        a.sourceId.localeCompare(b.sourceId),
    )
    .slice(0, MAX_SOURCES);
}

/** The month so far, the last 7 days' rate, and the embedding suppliers' month beside them. */
async function readForecast(
  db: Database,
  now: Date,
  dailyBudgetUsd: number | null,
): Promise<Forecast> {
  const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const monthEnd = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  const basisStart = new Date(now.getTime() - FORECAST_BASIS_DAYS * DAY_MS);
  const from = monthStart < basisStart ? monthStart : basisStart;
  const [r] = await db.prisma.$queryRaw<
    { mtd: number; basis: number; first: Date | null; older: boolean; embed_mtd: number }[]
  >`
    SELECT coalesce(sum(cost_usd) FILTER (WHERE purpose = 'extract'
                                            AND at >= ${monthStart}::timestamptz), 0)::float8 AS mtd,
           coalesce(sum(cost_usd) FILTER (WHERE purpose = 'extract'
                                            AND at > ${basisStart}::timestamptz), 0)::float8 AS basis,
           min(at) FILTER (WHERE purpose = 'extract' AND at > ${basisStart}::timestamptz) AS first,
           EXISTS (SELECT 1 FROM provider_calls o
                   WHERE o.purpose = 'extract' AND o.at <= ${basisStart}::timestamptz) AS older,
           coalesce(sum(cost_usd) FILTER (WHERE purpose <> 'extract'
                                            AND at >= ${monthStart}::timestamptz), 0)::float8
             AS embed_mtd
    FROM provider_calls
    WHERE at >= ${from}::timestamptz AND at <= ${now}::timestamptz`;
  // The rate of the last 7 days; a deployment whose calls began 2 days ago has a 2-day rate, not
  // a seventh of its spend a day. Less than a day of calls is still averaged over one day, so an
  // hour's burst is not taken for a month's rate ×24.
  const began = r?.older || !r?.first ? null : (now.getTime() - r.first.getTime()) / DAY_MS;
  const basisDays =
    began === null ? FORECAST_BASIS_DAYS : Math.min(FORECAST_BASIS_DAYS, Math.max(1, began));
  const dailyAverageUsd = (r?.basis ?? 0) / basisDays;
  const daysInMonth = (monthEnd.getTime() - monthStart.getTime()) / DAY_MS;
  const daysLeft = (monthEnd.getTime() - now.getTime()) / DAY_MS;
  const monthToDateUsd = r?.mtd ?? 0;
  const forecastUsd = monthToDateUsd + dailyAverageUsd * daysLeft;
  const budgetUsd = dailyBudgetUsd === null ? null : dailyBudgetUsd * daysInMonth;
  return {
    month: monthStart.toISOString().slice(0, 7),
    monthToDateUsd,
    dailyAverageUsd,
    basisDays,
    daysInMonth,
    daysLeft,
    forecastUsd,
    budgetUsd,
    share: budgetUsd !== null && budgetUsd > 0 ? forecastUsd / budgetUsd : null,
    embeddingMonthToDateUsd: r?.embed_mtd ?? 0,
  };
}

/**
 * Each paid provider's UTC day so far (provider_calls_provider_idx: purpose, provider, at), as
 * the chain's budget reads it: a provider is exhausted once its spend reaches its budget, and
 * skipped until the next midnight. Listed: every provider with a budget, and every other
 * provider but the free local one that spent anything today.
 */
export async function budgetStates(
  db: Database,
  {
    now = new Date(),
    budgets = {},
  }: { now?: Date; budgets?: Record<string, number | undefined | null> } = {},
): Promise<{ states: BudgetState[]; today: { costUsd: number; calls: number } }> {
  const dayStart = utcDay(now);
  const resetsAt = new Date(dayStart.getTime() + DAY_MS).toISOString();
  const rows = await db.prisma.$queryRaw<
    { provider: string; spent: number; calls: number; skipped: number; last_skipped: Date | null }[]
  >`
    SELECT provider, coalesce(sum(cost_usd), 0)::float8 AS spent, count(*)::int AS calls,
           count(*) FILTER (WHERE outcome = 'budget_exhausted')::int AS skipped,
           max(at) FILTER (WHERE outcome = 'budget_exhausted') AS last_skipped
    FROM provider_calls
    WHERE purpose = 'extract' AND at >= ${dayStart}::timestamptz AND at <= ${now}::timestamptz
    GROUP BY provider ORDER BY provider LIMIT 50`;
  const byProvider = new Map(rows.map((r) => [r.provider, r]));
  const names = new Set([
    ...Object.entries(budgets)
      .filter(([, b]) => b !== undefined && b !== null)
      .map(([p]) => p),
    ...rows
      .filter((r) => r.provider !== "local" && (r.spent > 0 || r.skipped > 0))
      .map((r) => r.provider),
  ]);
  const states = [...names].sort().map((provider): BudgetState => {
    const r = byProvider.get(provider);
    const budgetUsd = budgets[provider] ?? null;
    const spentUsd = r?.spent ?? 0;
    return {
      provider,
      spentUsd,
      budgetUsd,
      exhausted: budgetUsd !== null && spentUsd >= budgetUsd,
      skippedToday: r?.skipped ?? 0,
      lastSkippedAt: r?.last_skipped?.toISOString() ?? null,
      resetsAt,
    };
  });
  return {
    states,
    today: {
      costUsd: rows.reduce((a, r) => a + r.spent, 0),
      calls: rows.reduce((a, r) => a + r.calls, 0),
    },
  };
}

/** Calls by provider and outcome, corrections, and the window's extractions and fallovers. */
async function readCalls(db: Database, since: Date, now: Date): Promise<CallsSummary> {
  const p = db.prisma;
  const [outcomes, extractions] = await Promise.all([
    p.$queryRaw<
      {
        provider: string;
        outcome: string;
        calls: number;
        cost: number;
        corrections: number;
        corrections_ok: number;
      }[]
    >`
      SELECT provider, coalesce(outcome, CASE WHEN ok THEN 'ok' ELSE 'error' END) AS outcome,
             count(*)::int AS calls, coalesce(sum(cost_usd), 0)::float8 AS cost,
             count(*) FILTER (WHERE correction)::int AS corrections,
             count(*) FILTER (WHERE correction AND ok)::int AS corrections_ok
      FROM provider_calls
      WHERE purpose = 'extract' AND at >= ${since}::timestamptz AND at <= ${now}::timestamptz
      GROUP BY 1, 2 ORDER BY 1, 3 DESC, 2 LIMIT 200`,
    p.$queryRaw<{ provider: string; model: string; extractions: number; fallovers: number }[]>`
      SELECT provider, model, count(*)::int AS extractions,
             count(*) FILTER (WHERE fell_over)::int AS fallovers
      FROM item_extractions
      WHERE extracted_at >= ${since}::timestamptz AND extracted_at <= ${now}::timestamptz
      GROUP BY 1, 2 ORDER BY 3 DESC, 1, 2 LIMIT 50`,
  ]);
  const notCalled = new Set<string>(NOT_CALLED);
  const made = outcomes.filter((o) => !notCalled.has(o.outcome));
  return {
    byOutcome: outcomes.map((o) => ({
      provider: o.provider,
      outcome: o.outcome,
      calls: o.calls,
      costUsd: o.cost,
    })),
    total: outcomes.reduce((a, o) => a + o.calls, 0),
    attempts: made.reduce((a, o) => a + o.calls, 0),
    failed: made.filter((o) => o.outcome !== "ok").reduce((a, o) => a + o.calls, 0),
    corrections: outcomes.reduce((a, o) => a + o.corrections, 0),
    correctionsOk: outcomes.reduce((a, o) => a + o.corrections_ok, 0),
    extractions: extractions.reduce((a, e) => a + e.extractions, 0),
    fallovers: extractions.reduce((a, e) => a + e.fallovers, 0),
    byProvider: extractions,
  };
}

/** The items whose extraction cost the most in the window, all their attempts counted. */
async function readTopItems(db: Database, since: Date, now: Date): Promise<TopItem[]> {
  const rows = await db.prisma.$queryRaw<
    {
      entry_key: string;
      cost: number;
      calls: number;
      tokens_in: number;
      tokens_out: number;
      title: string | null;
      source_id: string | null;
      source_name: string | null;
    }[]
  >`
    SELECT c.entry_key, c.cost, c.calls, c.tokens_in, c.tokens_out, n.title,
           coalesce(n.source_id, c.source_id) AS source_id, s.name AS source_name
    FROM (SELECT entry_key, min(source_id) AS source_id,
                 coalesce(sum(cost_usd), 0)::float8 AS cost, count(*)::int AS calls,
                 coalesce(sum(input_tokens), 0)::float8 AS tokens_in,
                 coalesce(sum(output_tokens), 0)::float8 AS tokens_out
          FROM provider_calls
          WHERE purpose = 'extract' AND entry_key IS NOT NULL
            AND at >= ${since}::timestamptz AND at <= ${now}::timestamptz
          GROUP BY entry_key
          HAVING sum(cost_usd) > 0
          ORDER BY cost DESC, calls DESC, entry_key
          LIMIT ${TOP_ITEMS}) c
    LEFT JOIN news n ON n.entry_key = c.entry_key
    LEFT JOIN sources s ON s.id = coalesce(n.source_id, c.source_id)
    ORDER BY c.cost DESC, c.calls DESC, c.entry_key`;
  return rows.map((r) => ({
    entryKey: r.entry_key,
    title: r.title,
    sourceId: r.source_id,
    sourceName: r.source_name,
    costUsd: r.cost,
    calls: r.calls,
    tokensIn: r.tokens_in,
    tokensOut: r.tokens_out,
  }));
}

/**
 * Coverage by the extractor the line runs (given), else by the chain that made the newest
 * extraction (the one the workers run now, in whichever process): lib/dashboard/extractionCoverage.
 */
async function readCoverage(db: Database, extractor: string | null | undefined): Promise<Coverage> {
  const c = await extractionCoverage(db, extractor ?? undefined);
  return {
    extractor: c.extractor,
    canonical: c.canonical,
    done: c.done,
    remaining: c.remaining,
    // Nothing extracted yet, or nothing to extract: no share to show.
    ratio: c.extractor === null || c.canonical === 0 ? null : c.ratio,
  };
}

/** Everything but the budgets: what the cache keeps (COUNTS_TTL_MS). */
type Counted = Omit<CostsOverview, "now" | "budgets" | "today">;

async function readCounted(
  db: Database,
  at: Date,
  window: CostWindow,
  dailyBudgetUsd: number | null,
  extractor: string | null | undefined,
): Promise<Counted> {
  const since = new Date(at.getTime() - COST_WINDOWS[window] * HOUR_MS);
  const hourStart = new Date(utcHour(at).getTime() - (HOURLY_BUCKETS - 1) * HOUR_MS);
  const dayStart = new Date(utcDay(at).getTime() - (DAILY_BUCKETS - 1) * DAY_MS);
  const [hourly, daily, sources, forecast, calls, topItems, coverage] = await Promise.all([
    readSpend(db, hourStart, at, HOUR_MS, HOURLY_BUCKETS),
    readSpend(db, dayStart, at, DAY_MS, DAILY_BUCKETS),
    readSources(db, since, at),
    readForecast(db, at, dailyBudgetUsd),
    readCalls(db, since, at),
    readTopItems(db, since, at),
    readCoverage(db, extractor),
  ]);
  return {
    countedAt: at.toISOString(),
    window,
    spend: { hourly, daily },
    sources,
    forecast,
    calls,
    topItems,
    coverage,
  };
}

/**
 * How long one process may reuse the window's figures: 20 times what reading them took, at most
 * a minute. The reads aggregate the window's and the month's ledger rows: measured on PostgreSQL
 * 15 (2 cores, shared with other work) over 300,000 extraction calls spread across 30 days and
 * 100,000 items, one answer took 0.9 s (24 h window), 1.3 s (7 d) and 1.7 s (30 d); a month at
 * 1,000,000 items (two to three calls each) is ten times the rows. The page polls every 10 s and
 * each open page would pay that; a minute-old month says the same. A small deployment reads them
 * in milliseconds, fresh. Budgets are read fresh on every request (a range of today's rows): the
 * banner must say at once that a provider stopped.
 */
export const COUNTS_TTL_MS = 60_000;

const cache = globalThis as unknown as {
  wirewatchCostCounts?: WeakMap<
    Database,
    Map<string, { until: number; counted: Promise<Counted> }>
  >;
};

function cachedCounted(
  db: Database,
  at: Date,
  window: CostWindow,
  dailyBudgetUsd: number | null,
  extractor: string | null | undefined,
): Promise<Counted> {
  cache.wirewatchCostCounts ??= new WeakMap();
  let perDb = cache.wirewatchCostCounts.get(db);
  if (!perDb) {
    perDb = new Map();
    cache.wirewatchCostCounts.set(db, perDb);
  }
  const key = JSON.stringify([window, dailyBudgetUsd, extractor ?? null]);
  const hit = perDb.get(key);
  if (hit && hit.until > at.getTime()) return hit.counted;
  const started = performance.now();
  const counted = readCounted(db, at, window, dailyBudgetUsd, extractor);
  // Until the read ends, concurrent requests share it; then it is reused for 20× its cost.
  const entry = { until: Number.POSITIVE_INFINITY, counted };
  const map = perDb;
  map.set(key, entry);
  counted.then(
    () => {
      entry.until = at.getTime() + Math.min(COUNTS_TTL_MS, 20 * (performance.now() - started));
    },
    // A failed read is not kept: the next request tries again.
    () => {
      if (map.get(key) === entry) map.delete(key);
    },
  );
  return counted;
}

/**
 * The page's answer. `now` given (tests): read at that instant, no cache; otherwise the window's
 * figures come from the process's cache (COUNTS_TTL_MS) and the budgets are read fresh.
 */
export async function costsOverview(
  db: Database,
  { now, window = "7d", budgets = {}, extractor }: CostsOptions = {},
): Promise<CostsOverview> {
  const at = now ?? new Date();
  // The forecast's budget: every paid provider's daily budget, summed.
  const daily = Object.values(budgets).filter((b): b is number => typeof b === "number");
  const dailyBudgetUsd = daily.length > 0 ? daily.reduce((a, b) => a + b, 0) : null;
  const [counted, budget] = await Promise.all([
    now
      ? readCounted(db, at, window, dailyBudgetUsd, extractor)
      : cachedCounted(db, at, window, dailyBudgetUsd, extractor),
    budgetStates(db, { now: at, budgets }),
  ]);
  return { now: at.toISOString(), ...counted, budgets: budget.states, today: budget.today };
}
