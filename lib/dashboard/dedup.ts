import type { Database } from "@/lib/db";
import { type Evidence, readEvidence } from "./dedupEvidence";
import { httpLink } from "./links";

export { type Evidence, readEvidence } from "./dedupEvidence";

/**
 * The Dedup page's reads (issue 13), all bounded. The stage writes dedup_items (one row per
 * item, its last decision), dedup_clusters and dedup_links (every link with its evidence; live =
 * ended_at null); this module only reads them back. The review queue, the thresholds and the
 * re-runs are read by workers/admin/dedup*.ts, beside the actions that change them. Per-item
 * questions go by primary key or the cluster index; the time plots scan
 * dedup_items_decided_at_idx over the window only; lists are keyset-paged, never OFFSET.
 */

/**
 * What a decision is shown as: the stage that linked a duplicate (url, exact, near, meaning),
 * "review" for a pair in the grey band (waiting, or linked by an operator's confirmation), or
 * "unique". An item removed from clusters (retracted) is no decision and not counted.
 */
export const DECISION_KINDS = ["url", "exact", "near", "meaning", "review", "unique"] as const;
export type DecisionKind = (typeof DECISION_KINDS)[number];

/** Windows the page offers; the bucket keeps a plot at 48–72 bars whatever the window. */
export const WINDOWS = { 6: 5 * 60, 24: 20 * 60, 72: 3600 } as const satisfies Record<
  number,
  number
>;
export type WindowHours = keyof typeof WINDOWS;
export const isWindowHours = (h: number): h is WindowHours => h in WINDOWS;

/** Rows per page of the cluster list. */
export const PAGE_SIZE = 20;
/** Members of one cluster shown: a wire story republished by every outlet is tens, not hundreds. */
export const CLUSTER_MEMBERS_SHOWN = 200;
/** Sources in the per-source table (a deployment has tens). */
export const SOURCES_SHOWN = 100;

export type StageBucket = { t: number } & Record<DecisionKind, number>;

export interface LatencyBucket {
  t: number;
  /** Decisions with a recorded duration in the bucket. */
  n: number;
  p50: number | null;
  p95: number | null;
}

export interface SourceRate {
  sourceId: string;
  sourceName: string | null;
  /** Items decided (all time) and of them linked as duplicates. */
  decided: number;
  duplicates: number;
  /** The same for items first seen in the last 24 hours. */
  decidedDay: number;
  duplicatesDay: number;
}

export interface ClusterSummary {
  id: string;
  canonicalKey: string;
  canonicalTitle: string | null;
  canonicalSource: string | null;
  members: number;
  outlets: number;
  firstSeenAt: string;
  createdAt: string;
  updatedAt: string;
  dissolvedAt: string | null;
}

export interface DedupOverview {
  now: string;
  hours: WindowHours;
  bucketSeconds: number;
  decisions: {
    buckets: StageBucket[];
    totals: Record<DecisionKind, number>;
    decided: number;
  };
  latency: {
    buckets: LatencyBucket[];
    p50: number | null;
    p95: number | null;
    p99: number | null;
  };
  sources: SourceRate[];
  clusters: { live: number };
  reviews: { pending: number; oldestPendingAt: string | null };
  /** When the stage last decided anything (null: never). */
  lastDecisionAt: string | null;
}

const emptyTotals = (): Record<DecisionKind, number> =>
  Object.fromEntries(DECISION_KINDS.map((k) => [k, 0])) as Record<DecisionKind, number>;

const iso = (d: Date | null | undefined): string | null => (d ? d.toISOString() : null);

/** The overview's heavy part: both plots over the window, and the per-source rates. */
type WindowStats = Pick<DedupOverview, "bucketSeconds" | "decisions" | "latency" | "sources">;

async function readWindow(db: Database, hours: WindowHours, now: Date): Promise<WindowStats> {
  const p = db.prisma;
  const bucketSeconds = WINDOWS[hours];
  // Buckets aligned on the epoch, so a poll a few seconds later keeps the same bars; the first
  // is the one holding `since`.
  const end = Math.floor(now.getTime() / 1000 / bucketSeconds) * bucketSeconds;
  const first = end - Math.ceil((hours * 3600) / bucketSeconds) * bucketSeconds + bucketSeconds;
  const since = new Date(first * 1000);

  // One pass over the window (dedup_items_decided_at_idx) for both plots: counts per bucket and
  // kind, the latency percentiles per bucket, and over the whole window, as grouping sets.
  // The kind each row counts as (DECISION_KINDS); a stage this page does not know yet counts
  // as "other" and is left out of the plot rather than drawn as a kind it is not.
  const rows = await p.$queryRaw<
    {
      t: number | null;
      kind: string | null;
      n: number;
      timed: number;
      p50: number | null;
      p95: number | null;
      p99: number | null;
    }[]
  >`
    SELECT t, kind, count(*)::int AS n, count(decision_ms)::int AS timed,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY decision_ms) AS p50,
           percentile_cont(0.95) WITHIN GROUP (ORDER BY decision_ms) AS p95,
           percentile_cont(0.99) WITHIN GROUP (ORDER BY decision_ms) AS p99
    FROM (
      SELECT (floor(extract(epoch FROM decided_at) / ${bucketSeconds}::int) * ${bucketSeconds}::int)::float8 AS t,
             CASE WHEN outcome = 'review' OR stage = 'review' THEN 'review'
                  WHEN outcome = 'duplicate' AND stage IN ('url', 'exact', 'near', 'meaning') THEN stage
                  WHEN outcome = 'unique' THEN 'unique'
                  ELSE 'other' END AS kind,
             decision_ms
      FROM dedup_items
      WHERE decided_at >= ${since}::timestamptz AND decided_at <= ${now}::timestamptz
        AND outcome <> 'removed'
    ) w
    GROUP BY GROUPING SETS ((t, kind), (t), ())`;
  const counted = rows.filter((r) => r.t !== null && r.kind !== null);
  const latencyRows = rows.filter((r) => r.t !== null && r.kind === null);
  const overall = rows.find((r) => r.t === null && r.kind === null);

  const byT = new Map<number, StageBucket>();
  const latency = new Map<number, LatencyBucket>();
  for (let t = first; t <= end; t += bucketSeconds) {
    byT.set(t, { t: t * 1000, ...emptyTotals() });
    latency.set(t, { t: t * 1000, n: 0, p50: null, p95: null });
  }
  const totals = emptyTotals();
  for (const r of counted) {
    const b = byT.get(r.t as number);
    if (!b || !(DECISION_KINDS as readonly string[]).includes(r.kind as string)) continue;
    b[r.kind as DecisionKind] += r.n;
    totals[r.kind as DecisionKind] += r.n;
  }
  for (const r of latencyRows) {
    const t = r.t as number;
    if (latency.has(t) && r.timed > 0) {
      latency.set(t, { t: t * 1000, n: r.timed, p50: r.p50, p95: r.p95 });
    }
  }

  const dayAgo = new Date(now.getTime() - 86_400_000);
  // One pass over dedup_items grouped by source (one narrow row per item the stage ever
  // decided: the cost WINDOW_TTL_MS is there for); the 24-hour columns are filters of it.
  const sources = await p.$queryRaw<
    {
      source_id: string;
      source_name: string | null;
      decided: number;
      duplicates: number;
      decided_day: number;
      duplicates_day: number;
    }[]
  >`
    SELECT d.source_id, s.name AS source_name, d.decided, d.duplicates, d.decided_day,
           d.duplicates_day
    FROM (
      SELECT source_id,
             count(*)::int AS decided,
             (count(*) FILTER (WHERE outcome = 'duplicate'))::int AS duplicates,
             (count(*) FILTER (WHERE first_seen_at >= ${dayAgo}::timestamptz))::int AS decided_day,
             (count(*) FILTER (WHERE outcome = 'duplicate'
                                 AND first_seen_at >= ${dayAgo}::timestamptz))::int AS duplicates_day
      FROM dedup_items WHERE outcome <> 'removed'
      GROUP BY source_id
    ) d LEFT JOIN sources s ON s.id = d.source_id
    ORDER BY d.decided DESC, d.source_id
    LIMIT ${SOURCES_SHOWN}`;

  return {
    bucketSeconds,
    decisions: {
      buckets: [...byT.values()],
      totals,
      decided: Object.values(totals).reduce((a, b) => a + b, 0),
    },
    latency: {
      buckets: [...latency.values()],
      p50: overall?.p50 ?? null,
      p95: overall?.p95 ?? null,
      p99: overall?.p99 ?? null,
    },
    sources: sources.map((r) => ({
      sourceId: r.source_id,
      sourceName: r.source_name,
      decided: r.decided,
      duplicates: r.duplicates,
      decidedDay: r.decided_day,
      duplicatesDay: r.duplicates_day,
    })),
  };
}

/**
 * How long one process may reuse a window's plots and rates: 20 times what reading them took,
 * at most this. Measured on PostgreSQL with 1,000,000 items decided over 72 hours (the issue's
 * bench size): 0.34 s for the 6-hour window, 0.6–0.9 s for 24 hours, 1.7 s for 72, mostly the
 * scan of the window and the per-source pass over every row. The page polls every 10 s and
 * each open page would pay that; reused, the reads cost at most a twentieth of one connection.
 * A small deployment's read takes milliseconds, so its answer is fresh on every poll. A bar is
 * 5, 20 or 60 minutes wide, so the longest reuse moves the last bar only. Counts, clusters and
 * the review queue stay fresh on every request (index lookups that move with admin actions).
 */
export const WINDOW_TTL_MS: Record<WindowHours, number> = { 6: 10_000, 24: 30_000, 72: 60_000 };

const windowCache = globalThis as unknown as {
  wirewatchDedupWindows?: WeakMap<
    Database,
    Map<WindowHours, { until: number; stats: Promise<WindowStats> }>
  >;
};

function cachedWindow(db: Database, hours: WindowHours, now: Date): Promise<WindowStats> {
  windowCache.wirewatchDedupWindows ??= new WeakMap();
  let byHours = windowCache.wirewatchDedupWindows.get(db);
  if (!byHours) {
    byHours = new Map();
    windowCache.wirewatchDedupWindows.set(db, byHours);
  }
  const hit = byHours.get(hours);
  if (hit && hit.until > now.getTime()) return hit.stats;
  const started = performance.now();
  const stats = readWindow(db, hours, now);
  // Until the read ends, concurrent requests share it; then it is reused for 20× its cost.
  const entry = { until: Number.POSITIVE_INFINITY, stats };
  byHours.set(hours, entry);
  stats.then(
    () => {
      const cost = performance.now() - started;
      entry.until = now.getTime() + Math.min(WINDOW_TTL_MS[hours], 20 * cost);
    },
    // A failed read is not kept: the next request tries again.
    () => {
      if (byHours.get(hours) === entry) byHours.delete(hours);
    },
  );
  return stats;
}

/**
 * The page's summary: plots over the window, per-source rates, clusters, the review queue.
 * `now` given (tests): read at that instant, no cache; otherwise the window part comes from the
 * process's cache (WINDOW_TTL_MS).
 */
export async function dedupOverview(
  db: Database,
  { hours = 24, now }: { hours?: WindowHours; now?: Date } = {},
): Promise<DedupOverview> {
  const at = now ?? new Date();
  const window = now ? await readWindow(db, hours, at) : await cachedWindow(db, hours, at);
  const p = db.prisma;

  const [counts] = await p.$queryRaw<
    {
      live: number;
      pending: number;
      oldest_pending: Date | null;
      last_decision: Date | null;
    }[]
  >`
    SELECT (SELECT count(*) FROM dedup_clusters WHERE dissolved_at IS NULL)::int AS live,
           (SELECT count(*) FROM dedup_reviews WHERE state = 'pending')::int AS pending,
           (SELECT min(created_at) FROM dedup_reviews WHERE state = 'pending') AS oldest_pending,
           (SELECT max(decided_at) FROM dedup_items) AS last_decision`;

  return {
    now: at.toISOString(),
    hours,
    ...window,
    clusters: { live: counts?.live ?? 0 },
    reviews: { pending: counts?.pending ?? 0, oldestPendingAt: iso(counts?.oldest_pending) },
    lastDecisionAt: iso(counts?.last_decision),
  };
}

export class BadDedupCursorError extends Error {
  constructor() {
    super("bad cursor");
    this.name = "BadDedupCursorError";
  }
}

export type ClusterOrder = "largest" | "newest";

interface ClusterRow {
  id: string;
  canonical_key: string;
  canonical_title: string | null;
  canonical_source: string | null;
  members: number;
  outlets: number;
  first_seen_at: Date;
  created_at: Date;
  updated_at: Date;
  dissolved_at: Date | null;
}

const toCluster = (r: ClusterRow): ClusterSummary => ({
  id: r.id,
  canonicalKey: r.canonical_key,
  canonicalTitle: r.canonical_title,
  canonicalSource: r.canonical_source,
  members: r.members,
  outlets: r.outlets,
  firstSeenAt: r.first_seen_at.toISOString(),
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
  dissolvedAt: iso(r.dissolved_at),
});

/**
 * Live clusters, largest (members, then newest) or newest first, keyset-paged: the cursor is
 * "members:id" for largest (dedup_clusters_members_idx), "id" for newest (the primary key).
 */
export async function listClusters(
  db: Database,
  {
    order = "largest",
    cursor,
    limit = PAGE_SIZE,
  }: { order?: ClusterOrder; cursor?: string; limit?: number } = {},
): Promise<{ clusters: ClusterSummary[]; nextCursor: string | null }> {
  const take = Math.max(1, Math.min(100, Math.trunc(limit)));
  let members: number | null = null;
  let id: string | null = null;
  if (cursor !== undefined) {
    // largest: "members:id"; newest: "id" (what nextCursor below makes, nothing else).
    const m = /^(?:(\d{1,9}):)?(\d{1,18})$/.exec(cursor);
    if (!m || (order === "largest") !== (m[1] !== undefined)) throw new BadDedupCursorError();
    members = m[1] === undefined ? null : Number(m[1]);
    id = m[2] ?? null;
  }
  const rows =
    order === "largest"
      ? await db.prisma.$queryRaw<ClusterRow[]>`
          SELECT c.id::text AS id, c.canonical_key, n.title AS canonical_title,
                 n.source_id AS canonical_source, c.members, c.outlets, c.first_seen_at,
                 c.created_at, c.updated_at, c.dissolved_at
          FROM dedup_clusters c LEFT JOIN news n ON n.entry_key = c.canonical_key
          WHERE c.dissolved_at IS NULL
            AND (${members}::int IS NULL OR (c.members, c.id) < (${members}::int, ${id}::bigint))
          ORDER BY c.members DESC, c.id DESC
          LIMIT ${take + 1}`
      : await db.prisma.$queryRaw<ClusterRow[]>`
          SELECT c.id::text AS id, c.canonical_key, n.title AS canonical_title,
                 n.source_id AS canonical_source, c.members, c.outlets, c.first_seen_at,
                 c.created_at, c.updated_at, c.dissolved_at
          FROM dedup_clusters c LEFT JOIN news n ON n.entry_key = c.canonical_key
          WHERE c.dissolved_at IS NULL AND (${id}::bigint IS NULL OR c.id < ${id}::bigint)
          ORDER BY c.id DESC
          LIMIT ${take + 1}`;
  const page = rows.slice(0, take).map(toCluster);
  const last = page[page.length - 1];
  const nextCursor =
    rows.length > take && last
      ? order === "largest"
        ? `${last.members}:${last.id}`
        : last.id
      : null;
  return { clusters: page, nextCursor };
}

export interface LinkView {
  id: string;
  stage: string;
  score: number;
  threshold: number;
  matchedKey: string;
  matchedTitle: string | null;
  settingsRevision: number;
  itemVersion: number;
  evidence: Evidence | null;
  decidedAt: string;
  decidedBy: string;
  endedAt: string | null;
  endedReason: string | null;
  endedBy: string | null;
}

export interface ClusterMember {
  entryKey: string;
  sourceId: string;
  sourceName: string | null;
  title: string | null;
  link: string | null;
  firstSeenAt: string;
  canonical: boolean;
  /** The item is retracted or has no text left (the stage keeps its row, not live). */
  live: boolean;
  outcome: string;
  /** What linked it to the cluster; null for the canonical item. */
  linkedBy: LinkView | null;
}

export interface ClusterDetail {
  cluster: ClusterSummary;
  members: ClusterMember[];
  /** Links of this cluster that ended (undone, edited away, re-run …), newest first. */
  endedLinks: (LinkView & { entryKey: string; title: string | null })[];
  events: { id: string; at: string; kind: string; entryKey: string | null; detail: unknown }[];
}

interface LinkRow {
  link_id: string | null;
  link_stage: string | null;
  score: number | null;
  threshold: number | null;
  matched_key: string | null;
  matched_title: string | null;
  settings_revision: number | null;
  item_version: number | null;
  evidence: unknown;
  link_decided_at: Date | null;
  decided_by: string | null;
  ended_at: Date | null;
  ended_reason: string | null;
  ended_by: string | null;
}

const toLink = (r: LinkRow): LinkView | null =>
  r.link_id === null
    ? null
    : {
        id: r.link_id,
        stage: r.link_stage ?? "?",
        score: r.score ?? 0,
        threshold: r.threshold ?? 0,
        matchedKey: r.matched_key ?? "",
        matchedTitle: r.matched_title,
        settingsRevision: r.settings_revision ?? 0,
        itemVersion: r.item_version ?? 0,
        evidence: readEvidence(r.evidence),
        decidedAt: (r.link_decided_at as Date).toISOString(),
        decidedBy: r.decided_by ?? "dedup",
        endedAt: iso(r.ended_at),
        endedReason: r.ended_reason,
        endedBy: r.ended_by,
      };

/** One cluster with its members side by side, what linked each, and its history; null if none. */
export async function getCluster(db: Database, id: string): Promise<ClusterDetail | null> {
  const p = db.prisma;
  const [cluster] = await p.$queryRaw<ClusterRow[]>`
    SELECT c.id::text AS id, c.canonical_key, n.title AS canonical_title,
           n.source_id AS canonical_source, c.members, c.outlets, c.first_seen_at,
           c.created_at, c.updated_at, c.dissolved_at
    FROM dedup_clusters c LEFT JOIN news n ON n.entry_key = c.canonical_key
    WHERE c.id = ${id}::bigint`;
  if (!cluster) return null;
  const members = await p.$queryRaw<
    (LinkRow & {
      entry_key: string;
      source_id: string;
      source_name: string | null;
      title: string | null;
      link: string | null;
      first_seen_at: Date;
      live: boolean;
      outcome: string;
    })[]
  >`
    SELECT d.entry_key, d.source_id, s.name AS source_name, n.title, n.link, d.first_seen_at,
           d.live AND n.deleted_at IS NULL AS live, d.outcome,
           l.id::text AS link_id, l.stage AS link_stage, l.score, l.threshold, l.matched_key,
           m.title AS matched_title, l.settings_revision, l.item_version, l.evidence,
           l.decided_at AS link_decided_at, l.decided_by, l.ended_at, l.ended_reason, l.ended_by
    FROM dedup_items d
    LEFT JOIN news n ON n.entry_key = d.entry_key
    LEFT JOIN sources s ON s.id = d.source_id
    LEFT JOIN dedup_links l ON l.entry_key = d.entry_key AND l.ended_at IS NULL
    LEFT JOIN news m ON m.entry_key = l.matched_key
    WHERE d.cluster_id = ${id}::bigint
    ORDER BY (d.entry_key = ${cluster.canonical_key}) DESC, d.first_seen_at, d.entry_key
    LIMIT ${CLUSTER_MEMBERS_SHOWN}`;
  const ended = await p.$queryRaw<(LinkRow & { entry_key: string; title: string | null })[]>`
    SELECT l.entry_key, n.title, l.id::text AS link_id, l.stage AS link_stage, l.score,
           l.threshold, l.matched_key, m.title AS matched_title, l.settings_revision,
           l.item_version, l.evidence, l.decided_at AS link_decided_at, l.decided_by,
           l.ended_at, l.ended_reason, l.ended_by
    FROM dedup_links l
    LEFT JOIN news n ON n.entry_key = l.entry_key
    LEFT JOIN news m ON m.entry_key = l.matched_key
    WHERE l.cluster_id = ${id}::bigint AND l.ended_at IS NOT NULL
    ORDER BY l.id DESC LIMIT 50`;
  const events = await p.$queryRaw<
    { id: string; at: Date; kind: string; entry_key: string | null; detail: unknown }[]
  >`
    SELECT id::text AS id, at, kind, entry_key, detail FROM dedup_cluster_events
    WHERE cluster_id = ${id}::bigint ORDER BY id DESC LIMIT 50`;
  return {
    cluster: toCluster(cluster),
    members: members.map((r) => ({
      entryKey: r.entry_key,
      sourceId: r.source_id,
      sourceName: r.source_name,
      title: r.title,
      link: httpLink(r.link),
      firstSeenAt: r.first_seen_at.toISOString(),
      canonical: r.entry_key === cluster.canonical_key,
      live: r.live ?? false,
      outcome: r.outcome,
      // The canonical item has no live link of its own; a link row left on it would be stale.
      linkedBy: r.entry_key === cluster.canonical_key ? null : toLink(r),
    })),
    endedLinks: ended.flatMap((r) => {
      const l = toLink(r);
      return l ? [{ ...l, entryKey: r.entry_key, title: r.title }] : [];
    }),
    events: events.map((e) => ({
      id: e.id,
      at: e.at.toISOString(),
      kind: e.kind,
      entryKey: e.entry_key,
      detail: e.detail,
    })),
  };
}

export const TITLES_MAX = 200;

/** Headlines and sources of up to TITLES_MAX items by key (a run's diff names items by key). */
export async function itemTitles(
  db: Database,
  keys: readonly string[],
): Promise<Record<string, { title: string | null; sourceId: string }>> {
  const unique = [...new Set(keys)].slice(0, TITLES_MAX);
  if (unique.length === 0) return {};
  const rows = await db.prisma.$queryRaw<
    { entry_key: string; title: string | null; source_id: string }[]
  >`SELECT entry_key, title, source_id FROM news WHERE entry_key = ANY(${unique}::text[])`;
  return Object.fromEntries(
    rows.map((r) => [r.entry_key, { title: r.title, sourceId: r.source_id }]),
  );
}

/** What the item page shows of an item's dedup: its decision, its cluster, what linked it. */
export interface ItemDedup {
  outcome: string;
  stage: string | null;
  decidedAt: string;
  version: number;
  cluster: {
    id: string;
    canonicalKey: string;
    canonicalTitle: string | null;
    members: number;
    outlets: number;
    firstSeenAt: string;
    /** Up to ITEM_MEMBERS_SHOWN other members, first seen first. */
    others: { entryKey: string; title: string | null; sourceId: string; canonical: boolean }[];
  } | null;
  link: LinkView | null;
  pendingReviews: number;
}

export const ITEM_MEMBERS_SHOWN = 10;

/** An item's dedup state, by primary key; null when the stage has not decided it yet. */
export async function itemDedup(db: Database, entryKey: string): Promise<ItemDedup | null> {
  const p = db.prisma;
  const [r] = await p.$queryRaw<
    (LinkRow & {
      outcome: string;
      stage: string | null;
      decided_at: Date;
      version: number;
      cluster_id: string | null;
      canonical_key: string | null;
      canonical_title: string | null;
      members: number | null;
      outlets: number | null;
      cluster_first_seen: Date | null;
      pending: number;
    })[]
  >`
    SELECT d.outcome, d.stage, d.decided_at, d.version, c.id::text AS cluster_id,
           c.canonical_key, cn.title AS canonical_title, c.members, c.outlets,
           c.first_seen_at AS cluster_first_seen,
           l.id::text AS link_id, l.stage AS link_stage, l.score, l.threshold, l.matched_key,
           m.title AS matched_title, l.settings_revision, l.item_version, l.evidence,
           l.decided_at AS link_decided_at, l.decided_by, l.ended_at, l.ended_reason, l.ended_by,
           (SELECT count(*) FROM dedup_reviews rv
             WHERE rv.state = 'pending' AND (rv.pair_a = d.entry_key OR rv.pair_b = d.entry_key))::int
             AS pending
    FROM dedup_items d
    LEFT JOIN dedup_clusters c ON c.id = d.cluster_id
    LEFT JOIN news cn ON cn.entry_key = c.canonical_key
    LEFT JOIN dedup_links l ON l.entry_key = d.entry_key AND l.ended_at IS NULL
    LEFT JOIN news m ON m.entry_key = l.matched_key
    WHERE d.entry_key = ${entryKey}`;
  if (!r) return null;
  let cluster: ItemDedup["cluster"] = null;
  if (r.cluster_id !== null && r.canonical_key !== null) {
    const others = await p.$queryRaw<
      { entry_key: string; title: string | null; source_id: string }[]
    >`
      SELECT d.entry_key, n.title, d.source_id
      FROM dedup_items d LEFT JOIN news n ON n.entry_key = d.entry_key
      WHERE d.cluster_id = ${r.cluster_id}::bigint AND d.entry_key <> ${entryKey}
      ORDER BY (d.entry_key = ${r.canonical_key}) DESC, d.first_seen_at, d.entry_key
      LIMIT ${ITEM_MEMBERS_SHOWN}`;
    cluster = {
      id: r.cluster_id,
      canonicalKey: r.canonical_key,
      canonicalTitle: r.canonical_title,
      members: r.members ?? 0,
      outlets: r.outlets ?? 0,
      firstSeenAt: (r.cluster_first_seen as Date).toISOString(),
      others: others.map((o) => ({
        entryKey: o.entry_key,
        title: o.title,
        sourceId: o.source_id,
        canonical: o.entry_key === r.canonical_key,
      })),
    };
  }
  return {
    outcome: r.outcome,
    stage: r.stage,
    decidedAt: r.decided_at.toISOString(),
    version: r.version,
    cluster,
    link: toLink(r),
    pendingReviews: r.pending,
  };
}
