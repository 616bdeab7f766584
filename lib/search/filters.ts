import { Prisma } from "@/lib/generated/prisma/client";
import type { SearchFilters } from "./types";

/**
 * The filters both sides of search apply, as SQL: search_docs and item_vectors carry the same
 * three columns (lang, source_id, first_seen_at), copied there so neither side joins to filter.
 * Used inside a WHERE that already has a condition. `languages`: only rows in one of them, or
 * of no known language (the vector side, for a model that reads only those).
 */
export function filterSql(filters: SearchFilters = {}, languages?: readonly string[]): Prisma.Sql {
  const parts: Prisma.Sql[] = [];
  if (languages) {
    parts.push(Prisma.sql`AND (lang = ANY(${[...languages]}::text[]) OR lang IS NULL)`);
  }
  if (filters.lang) parts.push(Prisma.sql`AND lang = ${filters.lang}`);
  if (filters.sourceId) parts.push(Prisma.sql`AND source_id = ${filters.sourceId}`);
  if (filters.since) parts.push(Prisma.sql`AND first_seen_at >= ${filters.since}`);
  if (filters.until) parts.push(Prisma.sql`AND first_seen_at < ${filters.until}`);
  return parts.length ? Prisma.join(parts, " ") : Prisma.empty;
}

export const hasFilters = (f: SearchFilters = {}, languages?: readonly string[]) =>
  Boolean(f.lang || f.sourceId || f.since || f.until || languages);

/** A stable text of the filters, for a cursor's fingerprint. */
export const filtersKey = (f: SearchFilters = {}) =>
  JSON.stringify([
    f.lang ?? null,
    f.sourceId ?? null,
    f.since?.toISOString() ?? null,
    f.until?.toISOString() ?? null,
  ]);
