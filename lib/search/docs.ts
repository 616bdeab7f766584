import type { Database } from "@/lib/db";
import type { SearchDocRow } from "./types";

/**
 * The full-text side of search (search_docs): one document per surviving item, its tsvector
 * built per language. English is stemmed ('english': "strikes" finds "strike"); Bangla, and any
 * other or unknown language, goes through 'simple', which lower-cases and keeps words whole:
 * PostgreSQL's parser keeps a run of Bengali script together as one word under a UTF-8 ctype
 * (PGlite's C.UTF-8 and the server's alike), and there is no Bangla stemmer to use. The title
 * weighs more than the summary (A against B), which ts_rank_cd counts.
 */

/** Letters and vowel signs of the Bengali script (U+0980–U+09FF), not its digits. */
const BENGALI = /(?=\p{Script=Bengali})[\p{L}\p{M}]/gu;
const LATIN = /\p{Script=Latin}/gu;

/**
 * The language of a text by its script: 'bn' when Bengali letters are at least as many as
 * Latin ones (a Bangla headline with an English name in it is Bangla), 'en' when Latin letters
 * are, null when it has neither (figures only, Bengali digits included, or another script).
 */
export function detectLanguage(text: string | null | undefined): "bn" | "en" | null {
  if (!text) return null;
  const bengali = text.match(BENGALI)?.length ?? 0;
  const latin = text.match(LATIN)?.length ?? 0;
  if (bengali === 0 && latin === 0) return null;
  return bengali >= latin ? "bn" : "en";
}

/**
 * A feed's language tag as search filters it: the primary subtag, lower case ("en-US" → "en",
 * "bn-BD" → "bn", "ben" → "bn"); null for an empty or malformed tag.
 */
export function normalizeLanguage(tag: string | null | undefined): string | null {
  if (!tag) return null;
  const primary = tag.trim().toLowerCase().split(/[-_]/)[0] ?? "";
  if (!/^[a-z]{2,3}$/.test(primary)) return null;
  if (primary === "ben") return "bn";
  if (primary === "eng") return "en";
  return primary;
}

/** The text search configuration a document of this language is parsed with. */
export const tsConfigFor = (lang: string | null): "english" | "simple" =>
  lang === "en" ? "english" : "simple";

export class SearchDocInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SearchDocInputError";
  }
}

/**
 * Stores documents, one per item: inserted, or replacing the stored one when its item_version
 * is not newer (a late older version changes nothing). The language is the row's (normalised),
 * else detected from the text. Of several rows for one item in a call the newest is kept.
 * Returns the rows written.
 */
export async function storeSearchDocs(
  db: Database,
  rows: readonly SearchDocRow[],
): Promise<number> {
  if (rows.length === 0) return 0;
  const newest = new Map<string, SearchDocRow & { lang: string | null }>();
  for (const row of rows) {
    if (typeof row.entryKey !== "string" || row.entryKey === "") {
      throw new SearchDocInputError("search document: the entry key is empty");
    }
    const what = `search document ${JSON.stringify(row.entryKey)}`;
    if (!Number.isInteger(row.itemVersion) || row.itemVersion < 0) {
      throw new SearchDocInputError(
        `${what}: item version ${row.itemVersion} is not an integer ≥ 0`,
      );
    }
    if (!(row.firstSeenAt instanceof Date) || Number.isNaN(row.firstSeenAt.getTime())) {
      throw new SearchDocInputError(`${what}: first seen is not a valid date`);
    }
    const lang =
      normalizeLanguage(row.lang) ?? detectLanguage(`${row.title ?? ""} ${row.summary ?? ""}`);
    const held = newest.get(row.entryKey);
    if (!held || held.itemVersion <= row.itemVersion) newest.set(row.entryKey, { ...row, lang });
  }
  const list = [...newest.values()];
  const col = <T>(f: (r: SearchDocRow) => T) => list.map(f);
  // The configuration is chosen per row by a CASE on the language (to_tsvector's regconfig
  // argument from a column), so one statement stores a batch of mixed languages.
  return db.prisma.$executeRaw`
    INSERT INTO search_docs AS d (entry_key, item_version, source_id, lang, first_seen_at, tsv,
                                  updated_at)
    SELECT k, v, s, l, f,
           setweight(to_tsvector(c::regconfig, coalesce(t, '')), 'A') ||
           setweight(to_tsvector(c::regconfig, coalesce(m, '')), 'B'),
           now()
    FROM unnest(${col((r) => r.entryKey)}::text[], ${col((r) => r.itemVersion)}::int[],
                ${col((r) => r.sourceId)}::text[], ${col((r) => r.lang)}::text[],
                ${col((r) => r.firstSeenAt.toISOString())}::timestamptz[],
                ${col((r) => r.title)}::text[], ${col((r) => r.summary)}::text[],
                ${col((r) => tsConfigFor(r.lang))}::text[])
         AS x(k, v, s, l, f, t, m, c)
    ON CONFLICT (entry_key) DO UPDATE SET
      item_version = excluded.item_version, source_id = excluded.source_id,
      lang = excluded.lang, first_seen_at = excluded.first_seen_at, tsv = excluded.tsv,
      updated_at = now()
    WHERE d.item_version <= excluded.item_version`;
}

/** Removes these items' documents (a survivor linked as a duplicate later, a retraction). */
export async function removeSearchDocs(
  db: Database,
  entryKeys: readonly string[],
): Promise<number> {
  if (entryKeys.length === 0) return 0;
  return db.prisma.$executeRaw`
    DELETE FROM search_docs WHERE entry_key = ANY(${[...entryKeys]}::text[])`;
}
