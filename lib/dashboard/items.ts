import type { Database } from "@/lib/db";
import { isId } from "@/lib/validation";
import { type ItemDedup, itemDedup } from "./dedup";
import { type ItemExtraction, itemExtraction } from "./itemExtraction";
import { httpLink } from "./links";

/**
 * The Items page's reads: a bounded search over current rows, and one item's provenance (the
 * current row and every observation of it, with what the writer did: seed 000's table).
 */

/** Items per page. */
export const ITEMS_PAGE_SIZE = 50;
/**
 * Rows one search request looks at, newest update first (news_updated_at_idx). There is no index
 * a title substring can use (a pg_trgm GIN index would be one), so a request examines at most
 * this many rows, not the whole table: about 20 ms on PostgreSQL for 20k rows, against seconds
 * for a sequential scan of 1M. When the window ends before a page is full, the answer carries
 * a cursor to search further back, one window per click.
 */
export const SCAN_WINDOW = 20_000;
/** Observations shown per page of an item's timeline. */
export const TIMELINE_PAGE_SIZE = 500;

export interface ItemSummary {
  entryKey: string;
  sourceId: string;
  sourceName: string | null;
  title: string | null;
  /** Only http(s) links are ever put in an href. */
  link: string | null;
  version: number;
  state: "live" | "retracted";
  quality: "authoritative" | "fallback";
  lastResult: string;
  firstSeenAt: string;
  updatedAt: string;
}

export interface ItemSearch {
  /** Title contains this (case-insensitive), or an exact 64-hex entry key. */
  q?: string;
  sourceId?: string;
  cursor?: string;
  limit?: number;
}

export interface ItemSearchPage {
  items: ItemSummary[];
  /** Older matches (or the rest of the table to search) from here; null when done. */
  nextCursor: string | null;
  /** Rows this request examined, and the most it examines. */
  scanned: number;
  scanWindow: number;
  /** True when the window ran out before the page filled: the cursor searches further back. */
  windowEnded: boolean;
}

export class BadCursorError extends Error {
  constructor() {
    super("bad cursor");
    this.name = "BadCursorError";
  }
}

/** A keyset position (updated_at as PostgreSQL prints it, keeping microseconds; entry key). */
function encodeCursor(at: string, key: string): string {
  return Buffer.from(JSON.stringify([at, key])).toString("base64url");
}

/**
 * Decodes a cursor this module made, and nothing else: the pair goes into the query as a
 * timestamptz and a text, so anything PostgreSQL would refuse there ("2026", February 30, a
 * NUL in the key) must be a BadCursorError here rather than a failed query.
 */
function decodeCursor(cursor: string): [string, string] {
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw new BadCursorError();
  }
  if (
    Array.isArray(v) &&
    v.length === 2 &&
    typeof v[0] === "string" &&
    typeof v[1] === "string" &&
    isPrintedTimestamp(v[0]) &&
    /^[0-9a-f]{64}$/.test(v[1])
  ) {
    return [v[0], v[1]];
  }
  throw new BadCursorError();
}

/**
 * A timestamptz as PostgreSQL prints it ("2026-05-01 12:34:56.123456+00", the offset in the
 * session's time zone, up to ±15:59:59) that names a real instant: no month 13, no February 30.
 */
function isPrintedTimestamp(at: string): boolean {
  const m =
    /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.\d{1,6})?[+-](\d{2})(?::([0-5]\d)(?::([0-5]\d))?)?$/.exec(
      at,
    );
  if (!m) return false;
  const [year, month, day, hour, minute, second, offsetHours] = m.slice(1, 8).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const date = new Date(Date.UTC(year, month - 1, day));
  return (
    date.getUTCFullYear() === year &&
    date.getUTCMonth() === month - 1 &&
    date.getUTCDate() === day &&
    hour < 24 &&
    minute < 60 &&
    second < 60 &&
    offsetHours <= 15
  );
}

export { httpLink } from "./links";

/** `%`, `_` and `\` stand for themselves in the pattern. */
const likeEscape = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

interface SummaryRow {
  entry_key: string;
  source_id: string;
  source_name: string | null;
  title: string | null;
  link: string | null;
  version: number;
  quality: string;
  deleted_at: Date | null;
  last_result: string;
  first_seen_at: Date;
  updated_at: Date;
  at_text: string;
}

const toSummary = (r: SummaryRow): ItemSummary => ({
  entryKey: r.entry_key,
  sourceId: r.source_id,
  sourceName: r.source_name,
  title: r.title,
  link: httpLink(r.link),
  version: r.version,
  state: r.deleted_at ? "retracted" : "live",
  quality: r.quality === "fallback" ? "fallback" : "authoritative",
  lastResult: r.last_result,
  firstSeenAt: r.first_seen_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
});

/**
 * Current rows, newest update first, whose title contains `q` and/or that come from a source.
 * Bounded: one request reads at most SCAN_WINDOW rows along news_updated_at_idx and returns at
 * most `limit`; keyset paging on (updated_at, entry_key), never OFFSET. An exact entry key is
 * looked up by primary key.
 */
export async function searchItems(db: Database, search: ItemSearch = {}): Promise<ItemSearchPage> {
  const limit = Math.max(1, Math.min(200, Math.trunc(search.limit ?? ITEMS_PAGE_SIZE)));
  const q = search.q?.trim() || null;
  const sourceId = search.sourceId?.trim() || null;

  if (q && /^[0-9a-f]{64}$/i.test(q)) {
    const rows = await db.prisma.$queryRaw<SummaryRow[]>`
      SELECT n.entry_key, n.source_id, s.name AS source_name, n.title, n.link, n.version,
             n.quality, n.deleted_at, n.last_result, n.first_seen_at, n.updated_at,
             n.updated_at::text AS at_text
      FROM news n LEFT JOIN sources s ON s.id = n.source_id
      WHERE n.entry_key = ${q.toLowerCase()}`;
    return {
      items: rows.map(toSummary),
      nextCursor: null,
      scanned: rows.length,
      scanWindow: SCAN_WINDOW,
      windowEnded: false,
    };
  }

  const [at, key] = search.cursor ? decodeCursor(search.cursor) : [null, null];
  const pattern = q ? `%${likeEscape(q)}%` : null;
  // scan: the window, along the updated_at index from the cursor (updated_at <= … is the index
  // condition; ties on updated_at are broken by entry_key). hits: the page among them.
  const rows = await db.prisma.$queryRaw<
    (SummaryRow & { scanned: number; last_at: string | null; last_key: string | null })[]
  >`
    WITH scan AS MATERIALIZED (
      SELECT n.entry_key, n.source_id, n.title, n.link, n.version, n.quality, n.deleted_at,
             n.last_result, n.first_seen_at, n.updated_at
      FROM news n
      WHERE n.updated_at <= coalesce(${at}::timestamptz, 'infinity'::timestamptz)
        AND (${at}::timestamptz IS NULL OR n.updated_at < ${at}::timestamptz
             OR n.entry_key < ${key}::text)
      ORDER BY n.updated_at DESC, n.entry_key DESC
      LIMIT ${SCAN_WINDOW}
    ), edge AS (
      SELECT count(*)::int AS scanned,
             (array_agg(updated_at::text ORDER BY updated_at, entry_key))[1] AS last_at,
             (array_agg(entry_key ORDER BY updated_at, entry_key))[1] AS last_key
      FROM scan
    ), hits AS (
      SELECT * FROM scan
      WHERE (${pattern}::text IS NULL OR title ILIKE ${pattern}::text)
        AND (${sourceId}::text IS NULL OR source_id = ${sourceId}::text)
      ORDER BY updated_at DESC, entry_key DESC
      LIMIT ${limit + 1}
    )
    SELECT h.entry_key, h.source_id, s.name AS source_name, h.title, h.link, h.version,
           h.quality, h.deleted_at, h.last_result, h.first_seen_at, h.updated_at,
           h.updated_at::text AS at_text, e.scanned, e.last_at, e.last_key
    FROM edge e LEFT JOIN hits h ON true LEFT JOIN sources s ON s.id = h.source_id
    ORDER BY h.updated_at DESC, h.entry_key DESC`;
  const edge = rows[0];
  const scanned = edge?.scanned ?? 0;
  const hits = rows.filter((r) => r.entry_key !== null);
  const page = hits.slice(0, limit);
  const windowEnded = hits.length <= limit && scanned >= SCAN_WINDOW;
  let nextCursor: string | null = null;
  if (hits.length > limit) {
    const last = page[page.length - 1] as SummaryRow;
    nextCursor = encodeCursor(last.at_text, last.entry_key);
  } else if (windowEnded && edge?.last_at && edge.last_key) {
    nextCursor = encodeCursor(edge.last_at, edge.last_key);
  }
  return { items: page.map(toSummary), nextCursor, scanned, scanWindow: SCAN_WINDOW, windowEnded };
}

export interface Observation {
  id: string;
  observedAt: string;
  receivedAt: string;
  sourceId: string;
  collector: string;
  /** primary, fallback, backfill… as the collector said. */
  origin: string;
  /** observe, edit, retract. */
  kind: string;
  revision: string | null;
  /** What the writer did: inserted, upgraded, unchanged, updated, tombstoned, rejected. */
  result: string;
  reason: string | null;
  /** The version this delivery made (null when it changed nothing). */
  version: number | null;
  /** The row's version after it: its own, or the one it left standing (seed 000's column). */
  versionAfter: number | null;
  /** The title this delivery carried (text; never rendered as markup). */
  title: string | null;
  payload: unknown;
  /**
   * Identical deliveries this row stands for (docs/decisions/011): the first at observedAt, the
   * repeats (which changed nothing) up to lastSeenAt. 1 for a single delivery.
   */
  sightings: number;
  lastSeenAt: string | null;
}

export interface ItemDetail {
  item: ItemSummary & {
    canonicalId: string;
    summary: string | null;
    category: string | null;
    language: string | null;
    breaking: boolean;
    instruments: string[];
    publishedAt: string | null;
    firstSource: string;
    firstCollector: string;
    revision: string | null;
    contentHash: string | null;
    deletedAt: string | null;
    duplicateOf: string | null;
    dedupStage: string | null;
  };
  /** Every observation of it, oldest first (a page of TIMELINE_PAGE_SIZE). */
  observations: Observation[];
  /** news_events rows for this item in all. */
  observationCount: number;
  /** Deliveries of this item in all: the rows' sightings, repeats included. */
  sightingCount: number;
  /** Pass as `after` for the next page of the timeline; null when this was the last. */
  nextAfter: string | null;
  /** Deliveries that changed the row, by the version they made. */
  versions: { version: number; result: string; at: string; title: string | null }[];
  /** The dedup stage's decision, cluster and link (null: not decided yet). */
  dedup: ItemDedup | null;
  /** Its extraction (a duplicate: its canonical's) and its own calls in the cost ledger. */
  extraction: ItemExtraction;
}

const CHANGED = new Set(["inserted", "upgraded", "updated", "tombstoned", "repaired"]);

/**
 * One item's current row and its observations in recorded order (news_events_entry_key_idx:
 * entry_key, id), a page at a time. Null when there is no such row.
 */
export async function getItem(
  db: Database,
  entryKey: string,
  { after }: { after?: string } = {},
): Promise<ItemDetail | null> {
  if (after !== undefined && !isId(after)) throw new BadCursorError();
  const rows = await db.prisma.$queryRaw<
    (SummaryRow & {
      canonical_id: string;
      summary: string | null;
      category: string | null;
      language: string | null;
      breaking: boolean;
      instruments: string[];
      published_at: Date | null;
      first_source: string;
      first_collector: string;
      revision: string | null;
      content_hash: string | null;
      duplicate_of: string | null;
      dedup_stage: string | null;
      observation_count: number;
      sighting_count: number;
    })[]
  >`
    SELECT n.entry_key, n.source_id, s.name AS source_name, n.title, n.link, n.version,
           n.quality, n.deleted_at, n.last_result, n.first_seen_at, n.updated_at,
           n.updated_at::text AS at_text, n.canonical_id, n.summary, n.category, n.language,
           n.breaking, n.instruments, n.published_at, n.first_source, n.first_collector,
           n.revision::text AS revision, n.content_hash, n.duplicate_of, n.dedup_stage,
           (SELECT count(*)::int FROM news_events e WHERE e.entry_key = n.entry_key)
             AS observation_count,
           (SELECT coalesce(sum(e.sightings), 0)::int FROM news_events e WHERE e.entry_key = n.entry_key)
             AS sighting_count
    FROM news n LEFT JOIN sources s ON s.id = n.source_id
    WHERE n.entry_key = ${entryKey}`;
  const r = rows[0];
  if (!r) return null;
  const events = await db.prisma.$queryRaw<
    {
      id: string;
      observed_at: Date;
      received_at: Date;
      source_id: string;
      collector: string;
      origin: string;
      kind: string;
      revision: string | null;
      result: string;
      reason: string | null;
      version: number | null;
      payload: unknown;
      sightings: number;
      last_seen_at: Date | null;
    }[]
  >`
    SELECT id::text AS id, observed_at, received_at, source_id, collector, origin, kind,
           revision::text AS revision, result, reason, version, payload, sightings, last_seen_at
    FROM news_events
    WHERE entry_key = ${entryKey} AND id > ${after ?? "0"}::bigint
    ORDER BY id
    LIMIT ${TIMELINE_PAGE_SIZE + 1}`;
  const page = events.slice(0, TIMELINE_PAGE_SIZE);
  // The version standing before this page, for deliveries that changed nothing.
  let standing: number | null = null;
  if (after !== undefined) {
    const prior = await db.prisma.$queryRaw<{ version: number }[]>`
      SELECT version FROM news_events
      WHERE entry_key = ${entryKey} AND id <= ${after}::bigint AND version IS NOT NULL
      ORDER BY id DESC LIMIT 1`;
    standing = prior[0]?.version ?? null;
  }
  const observations: Observation[] = page.map((e) => {
    const p = e.payload as { title?: unknown } | null;
    if (e.version !== null) standing = e.version;
    return {
      id: e.id,
      observedAt: e.observed_at.toISOString(),
      receivedAt: e.received_at.toISOString(),
      sourceId: e.source_id,
      collector: e.collector,
      origin: e.origin,
      kind: e.kind,
      revision: e.revision,
      result: e.result,
      reason: e.reason,
      version: e.version,
      versionAfter: standing,
      title: p && typeof p.title === "string" ? p.title : null,
      payload: e.payload,
      sightings: e.sightings,
      lastSeenAt: e.last_seen_at?.toISOString() ?? null,
    };
  });
  return {
    item: {
      ...toSummary(r),
      canonicalId: r.canonical_id,
      summary: r.summary,
      category: r.category,
      language: r.language,
      breaking: r.breaking,
      instruments: r.instruments,
      publishedAt: r.published_at?.toISOString() ?? null,
      firstSource: r.first_source,
      firstCollector: r.first_collector,
      revision: r.revision,
      contentHash: r.content_hash,
      deletedAt: r.deleted_at?.toISOString() ?? null,
      duplicateOf: r.duplicate_of,
      dedupStage: r.dedup_stage,
    },
    observations,
    observationCount: r.observation_count,
    sightingCount: r.sighting_count,
    nextAfter: events.length > TIMELINE_PAGE_SIZE ? (page[page.length - 1]?.id ?? null) : null,
    versions: observations
      .filter((o) => CHANGED.has(o.result) && o.version !== null)
      .map((o) => ({
        version: o.version as number,
        result: o.result,
        at: o.receivedAt,
        title: o.title,
      })),
    dedup: await itemDedup(db, entryKey),
    extraction: await itemExtraction(db, entryKey, r.duplicate_of),
  };
}
