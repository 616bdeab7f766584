import type { Database } from "@/lib/db";
import { Prisma } from "@/lib/generated/prisma/client";
import { HEALTH_STATES, type HealthState } from "@/lib/health";
import { textProblem } from "@/lib/validation";
import { collectorFactsSql, healthRankSql } from "./sourceHealthSql";
import type { SourceKeys, SourceSnapshot } from "./sourceIndex";

/**
 * Which sources one page of the Sources list shows: filtered, sorted and cut in the database,
 * one keyset page at a time, so a request reads the page's rows (by name) or one pass over the
 * sources (by health, error rate or last poll), never every source into the app.
 */

export const SOURCE_SORTS = ["name", "health", "errorRate", "lastPolled"] as const;
export type SourceSort = (typeof SOURCE_SORTS)[number];
export const SOURCE_KINDS = ["feed", "stream", "page", "backfill", "story-api"] as const;
export const BREAKER_STATES = ["closed", "open", "half_open"] as const;

/** Rows per page unless asked; a page is at most SOURCES_MAX_LIMIT (its rows' figures are read per id). */
export const SOURCES_PAGE_SIZE = 50;
export const SOURCES_MAX_LIMIT = 200;

export interface SourceListQuery {
  limit?: number;
  cursor?: string;
  sort?: SourceSort;
  dir?: "asc" | "desc";
  kind?: string;
  health?: HealthState;
  breaker?: (typeof BREAKER_STATES)[number];
  /** Name, id or URL contains this (case-insensitive). */
  q?: string;
}

export class BadSourceCursorError extends Error {
  constructor(why: string) {
    super(why);
    this.name = "BadSourceCursorError";
  }
}

/**
 * A keyset position: the sort and direction it was made for (a cursor from another ordering
 * would skip or repeat rows), the last row's key (its name, or a number) and its id.
 */
type Cursor = [SourceSort, "asc" | "desc", string | number, string];

export function encodeSourceCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify(c)).toString("base64url");
}

/**
 * Decodes a cursor this module made for this ordering, and nothing else: its key and id go into
 * the query as text or float8, so what PostgreSQL would refuse there (a NUL, a lone surrogate,
 * NaN) is a BadSourceCursorError here rather than a failed query.
 */
export function decodeSourceCursor(cursor: string, sort: SourceSort, dir: "asc" | "desc") {
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw new BadSourceCursorError("not valid");
  }
  if (!Array.isArray(v) || v.length !== 4) throw new BadSourceCursorError("not valid");
  const [s, d, key, id] = v as unknown[];
  if (s !== sort || d !== dir)
    throw new BadSourceCursorError(`made for another sort than ${sort} ${dir}`);
  const keyOk =
    sort === "name"
      ? typeof key === "string" && key.length <= 1000 && textProblem(key) === null
      : typeof key === "number" && Number.isFinite(key);
  if (!keyOk || typeof id !== "string" || id.length > 1000 || textProblem(id) !== null) {
    throw new BadSourceCursorError("not valid");
  }
  return { key: key as string | number, id };
}

/** LIKE's wildcards taken literally: a search for "50%" finds "50%", not "50 anything". */
const likePattern = (q: string) => `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

export interface SourcePageKeys {
  ids: string[];
  nextCursor: string | null;
}

/**
 * The ids of one page, in order, and the cursor for the next.
 *
 * By name it walks sources_name_id_idx from the cursor and stops after the page (with a health
 * filter, after enough matches); by health, error rate or last poll it judges every source
 * that passes the other filters and keeps the top `limit` (a top-N sort, no full sort). Health
 * is judged at `now` (sourceHealthSql.ts) and the error rate over the hour before it, so a
 * source can move between pages while someone pages through: the keyset never repeats a row
 * inside one ordering, but a source whose health changed may be seen twice or not at all.
 */
export async function sourcePage(
  db: Database,
  query: SourceListQuery,
  now: Date,
): Promise<SourcePageKeys> {
  const sort = query.sort ?? "name";

  const dir = query.dir ?? "asc";
  const limit = Math.min(Math.max(1, query.limit ?? SOURCES_PAGE_SIZE), SOURCES_MAX_LIMIT);
  const after = query.cursor ? decodeSourceCursor(query.cursor, sort, dir) : null;
  const needsHealth = sort === "health" || query.health !== undefined;
  const hourAgo = new Date(now.getTime() - 3_600_000);

  const key =
    sort === "name"
      ? Prisma.sql`s.name`
      : sort === "health"
        ? Prisma.sql`${healthRankSql(now)}::float8`
        : sort === "errorRate"
          ? // No attempt in the hour sorts below 0 %: the sources that fail most come first when descending.
            Prisma.sql`coalesce(r.rate, -1)::float8`
          : Prisma.sql`coalesce(extract(epoch FROM st.last_polled_at) * 1000000, -1)::float8`;

  const where: Prisma.Sql[] = [];
  if (query.kind) where.push(Prisma.sql`s.kind = ${query.kind}`);
  if (query.breaker)
    where.push(Prisma.sql`coalesce(st.breaker_state, 'closed') = ${query.breaker}`);
  if (query.q) {
    const p = likePattern(query.q);
    where.push(Prisma.sql`(s.name ILIKE ${p} OR s.id ILIKE ${p} OR s.url ILIKE ${p})`);
  }
  if (query.health) {
    where.push(Prisma.sql`${healthRankSql(now)} = ${HEALTH_STATES.indexOf(query.health)}::int`);
  }
  if (after) {
    const k = sort === "name" ? Prisma.sql`${after.key}::text` : Prisma.sql`${after.key}::float8`;
    where.push(
      dir === "asc"
        ? Prisma.sql`(${key}, s.id) > (${k}, ${after.id}::text)`
        : Prisma.sql`(${key}, s.id) < (${k}, ${after.id}::text)`,
    );
  }
  const order = dir === "asc" ? Prisma.sql`ASC` : Prisma.sql`DESC`;

  const rows = await db.prisma.$queryRaw<{ id: string; key: string | number }[]>`
    SELECT s.id, ${key} AS key
    FROM sources s
    LEFT JOIN source_state st ON st.source_id = s.id
    ${needsHealth ? collectorFactsSql(now) : Prisma.empty}
    ${
      sort === "errorRate"
        ? Prisma.sql`LEFT JOIN (
            SELECT source_id,
                   (count(*) FILTER (WHERE code NOT IN ('ok', 'not_modified')))::float8 / count(*) AS rate
            FROM fetch_attempts
            WHERE started_at >= ${hourAgo} AND started_at <= ${now}
            GROUP BY source_id
          ) r ON r.source_id = s.id`
        : Prisma.empty
    }
    ${where.length ? Prisma.sql`WHERE ${Prisma.join(where, " AND ")}` : Prisma.empty}
    ORDER BY 2 ${order}, s.id ${order}
    LIMIT ${limit + 1}`;

  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    ids: page.map((r) => r.id),
    nextCursor:
      rows.length > limit && last
        ? encodeSourceCursor([
            sort,
            dir,
            sort === "name" ? String(last.key) : Number(last.key),
            last.id,
          ])
        : null,
  };
}

/**
 * Whether a query orders or filters by what only a pass over every source can tell (health, the
 * hour's error rate, the last poll, a name or URL containing some text: no index answers
 * "contains"), rather than by an index (name, kind, breaker).
 */
export function needsSnapshot(query: SourceListQuery): boolean {
  return (
    query.health !== undefined ||
    Boolean(query.q) ||
    (query.sort !== undefined && query.sort !== "name")
  );
}

const SNAPSHOT_KEY: Record<SourceSort, (k: SourceKeys) => string | number> = {
  name: (k) => k.name,
  health: (k) => k.health,
  errorRate: (k) => k.errorRate,
  lastPolled: (k) => k.lastPolled,
};

const compare = (a: string | number, b: string | number) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * One page from a snapshot of every source's keys (./sourceIndex.ts): the same filters, order,
 * limit and cursors as sourcePage(), over memory. Names compare by code unit here (PostgreSQL
 * by its collation), so a name order with a health filter may differ from the unfiltered one in
 * where "a" and "B" go; each is stable across its own pages.
 */
export function pageFromSnapshot(snapshot: SourceSnapshot, query: SourceListQuery): SourcePageKeys {
  const sort = query.sort ?? "name";
  const dir = query.dir ?? "asc";
  const limit = Math.min(Math.max(1, query.limit ?? SOURCES_PAGE_SIZE), SOURCES_MAX_LIMIT);
  const after = query.cursor ? decodeSourceCursor(query.cursor, sort, dir) : null;
  const health = query.health === undefined ? undefined : HEALTH_STATES.indexOf(query.health);
  const q = query.q?.toLowerCase();
  const keyOf = SNAPSHOT_KEY[sort];
  const sign = dir === "asc" ? 1 : -1;
  const order = (ka: string | number, ia: string, kb: string | number, ib: string) =>
    sign * (compare(ka, kb) || compare(ia, ib));
  const matches = snapshot.keys.filter(
    (k) =>
      (health === undefined || k.health === health) &&
      (!query.kind || k.kind === query.kind) &&
      (!query.breaker || k.breaker === query.breaker) &&
      (!q ||
        k.name.toLowerCase().includes(q) ||
        k.id.toLowerCase().includes(q) ||
        (k.url?.toLowerCase().includes(q) ?? false)) &&
      (!after || order(keyOf(k), k.id, after.key, after.id) > 0),
  );
  // The page's rows and one more (is there a next page?), without sorting every match.
  const top: SourceKeys[] = [];
  for (const k of matches) {
    if (top.length === limit + 1) {
      const last = top[limit] as SourceKeys;
      if (order(keyOf(k), k.id, keyOf(last), last.id) >= 0) continue;
      top.pop();
    }
    let i = top.length;
    while (
      i > 0 &&
      order(keyOf(k), k.id, keyOf(top[i - 1] as SourceKeys), (top[i - 1] as SourceKeys).id) < 0
    )
      i--;
    top.splice(i, 0, k);
  }
  const page = top.slice(0, limit);
  const last = page.at(-1);
  return {
    ids: page.map((k) => k.id),
    nextCursor:
      top.length > limit && last ? encodeSourceCursor([sort, dir, keyOf(last), last.id]) : null,
  };
}
