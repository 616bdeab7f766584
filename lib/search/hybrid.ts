import { createHash } from "node:crypto";
import { httpLink } from "@/lib/dashboard/links";
import type { Database } from "@/lib/db";
import type { EmbeddingKind, EmbeddingProvider, ModelInfo } from "@/lib/embed/types";
import { filterSql, filtersKey } from "./filters";
import type { SearchFilters } from "./types";
import { nearest } from "./vectors";

/**
 * Hybrid search over canonical items: PostgreSQL full text and vector similarity, each asked for
 * its best CANDIDATES, fused by reciprocal rank (RRF, k = 60: a story's score is the sum over the
 * two lists of 1 / (60 + its rank there)), one hit per story (cluster) with its outlets.
 *
 * Why RRF: the two scores are on scales that do not compare (ts_rank_cd against a cosine), and
 * ranks do; k = 60 is the value of Cormack et al. (2009), under which a story first in one list
 * and absent from the other (1/61) still ranks with one 20th in both (2/80).
 *
 * One hit per story: each list's hits are mapped to their story's canonical item (the cluster's
 * canonical_key; an item in no cluster is its own story) and only the best rank of a story in a
 * list counts, so five outlets' copies of one story do not crowd out four other stories. The
 * hit shows the canonical item, with the member that matched named in its reasons.
 */

/** Each side's candidates: a page of hits can be at most this deep (the README says why). */
export const CANDIDATES = 100;
export const RRF_K = 60;
export const MAX_LIMIT = 100;
export const DEFAULT_LIMIT = 20;
export const MAX_QUERY_CHARS = 500;
/** The summary shown with a hit is cut here (the item's page has all of it). */
const SUMMARY_CHARS = 300;

/** A model search can use: one row of embedding_models and what it is. */
export interface SearchModel {
  /** embedding_models.id. */
  id: number;
  /** The model's id, "shipped:use-lite@0.2.0". */
  model: string;
  info: ModelInfo;
  backfillCompletedAt: Date | null;
  /** Why this model and not the configured one, when one was configured and is not complete. */
  note?: string;
}

interface ModelRow {
  id: number;
  model: string;
  provider: string;
  name: string;
  version: string;
  dims: number;
  kind: string;
  languages: string[];
  cross_lingual: boolean;
  meaning_threshold: number | null;
  distinct_threshold: number | null;
  state: string;
  backfill_completed_at: Date | null;
}

const toSearchModel = (r: ModelRow): SearchModel => ({
  id: r.id,
  model: r.model,
  backfillCompletedAt: r.backfill_completed_at,
  info: {
    model: r.model,
    provider: r.provider as EmbeddingProvider,
    name: r.name,
    version: r.version,
    dims: r.dims,
    kind: r.kind === "meaning" ? "meaning" : "lexical",
    languages: r.languages,
    crossLingual: r.cross_lingual,
    ...(r.meaning_threshold !== null ? { meaningThreshold: r.meaning_threshold } : {}),
    ...(r.distinct_threshold !== null ? { distinctThreshold: r.distinct_threshold } : {}),
  },
});

/**
 * The model search answers with (one complete model at a time, so every vector compared was
 * made by the same model): the configured one when its backfill is complete; else the newest
 * complete one, a meaning model before a lexical one (the lexical fallback measures shared
 * spelling, which full text already covers; it is used only when no meaning model is complete);
 * else null: full text only. `configured` is a model id, or a prefix of one ("shipped",
 * "shipped:use-lite") naming the newest complete model it starts.
 */
export async function activeSearchModel(
  db: Database,
  configured?: string | null,
): Promise<SearchModel | null> {
  const rows = await db.prisma.$queryRaw<ModelRow[]>`
    SELECT id, model, provider, name, version, dims, kind, languages, cross_lingual,
           meaning_threshold, distinct_threshold, state, backfill_completed_at
    FROM embedding_models
    ORDER BY (kind = 'meaning') DESC, backfill_completed_at DESC NULLS LAST, id DESC`;
  const complete = rows.filter((r) => r.state === "complete");
  let note: string | undefined;
  const wanted = configured?.trim();
  if (wanted) {
    const named = rows.filter(
      (r) =>
        r.model === wanted || r.model.startsWith(`${wanted}:`) || r.model.startsWith(`${wanted}@`),
    );
    const ready = named.find((r) => r.state === "complete");
    if (ready) return toSearchModel(ready);
    const first = named[0];
    note = first
      ? `the configured search model ${first.model} is ${first.state}, not complete`
      : `the configured search model ${wanted} has embedded nothing yet`;
  }
  const chosen = complete[0];
  if (!chosen) return null;
  return { ...toSearchModel(chosen), ...(note ? { note } : {}) };
}

// ---------------------------------------------------------------------------------------------
// The search

export interface QueryVector {
  /** embedding_models.id of the model that made it. */
  modelId: number;
  info: ModelInfo;
  /** The query embedded by that model (purpose "query"), unit length. */
  vector: Float32Array;
}

export interface HybridQuery {
  q: string;
  /** Absent: full text only. */
  queryVector?: QueryVector | null;
  filters?: SearchFilters;
  limit?: number;
  /** From a previous answer's nextCursor, for the same q, filters and model. */
  cursor?: string | null;
  /** Each side's candidates (default CANDIDATES). */
  candidates?: number;
}

/** Why a hit matched by its words: its place among the full-text matches and ts_rank_cd. */
export interface LexicalReason {
  /** 1 = the best full-text match (stories counted once). */
  rank: number;
  /** ts_rank_cd with normalisation 32: rank / (rank + 1), 0..1. */
  score: number;
  /** The story's member that matched (the canonical or one of its copies). */
  entryKey: string;
}

/** Why a hit matched by its vector: similarity to the query by the model that made both. */
export interface VectorReason {
  rank: number;
  /** Cosine similarity, -1..1. */
  similarity: number;
  model: string;
  kind: EmbeddingKind;
  /**
   * How it is shown: "meaning" for a sentence model, "lexical-vector" for the lexical fallback
   * (shared character n-grams), which is never presented as meaning.
   */
  label: "meaning" | "lexical-vector";
  entryKey: string;
}

export interface Outlet {
  sourceId: string;
  name: string | null;
}

export interface SearchHit {
  /** The story's canonical item, shown for it. */
  entryKey: string;
  clusterId: string | null;
  /** Items in the story (1 for an item alone). */
  members: number;
  /** The sources that carried the story, the shown item's first. */
  outlets: Outlet[];
  title: string | null;
  summary: string | null;
  /** Only an http(s) link. */
  link: string | null;
  sourceId: string;
  sourceName: string | null;
  lang: string | null;
  publishedAt: string | null;
  firstSeenAt: string;
  /** The fused score: sum of 1 / (60 + rank) over the lists it is in. */
  score: number;
  reasons: { lexical: LexicalReason | null; vector: VectorReason | null };
}

export interface HybridAnswer {
  /** hybrid: both sides ran; fulltext: no query vector, words only. */
  mode: "hybrid" | "fulltext";
  hits: SearchHit[];
  /** The next page, or null when this was the last. */
  nextCursor: string | null;
  /** Candidates each side returned (before one per story). */
  candidates: { lexical: number; vector: number };
  timings: { lexicalMs: number; vectorMs: number; fuseMs: number; totalMs: number };
}

export class SearchInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SearchInputError";
  }
}

export class BadSearchCursorError extends SearchInputError {
  constructor(why: string) {
    super(`cursor: ${why}`);
    this.name = "BadSearchCursorError";
  }
}

/**
 * One page of hybrid search. The fused list is computed afresh for every page and the cursor
 * holds the last hit's (score, key), so a page starts after it in the same order: stable while
 * the data stands still, and never repeating a story on later pages even when it moves.
 */
export async function hybridSearch(db: Database, query: HybridQuery): Promise<HybridAnswer> {
  const started = performance.now();
  const q = query.q.trim();
  if (q === "") throw new SearchInputError("q: the query is empty");
  if (q.length > MAX_QUERY_CHARS) {
    throw new SearchInputError(`q: at most ${MAX_QUERY_CHARS} characters`);
  }
  const limit = query.limit ?? DEFAULT_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw new SearchInputError(`limit: an integer from 1 to ${MAX_LIMIT}`);
  }
  const candidates = query.candidates ?? CANDIDATES;
  const filters = query.filters ?? {};
  const qv = query.queryVector ?? null;
  const fingerprint = cursorFingerprint(q, filters, qv?.modelId ?? null);
  const after = query.cursor ? decodeCursor(query.cursor, fingerprint) : null;

  const timed = async <T>(work: () => Promise<T>): Promise<[T, number]> => {
    const t0 = performance.now();
    const out = await work();
    return [out, performance.now() - t0];
  };
  const [[lexical, lexicalMs], [vector, vectorMs]] = await Promise.all([
    timed(() => fullTextCandidates(db, q, filters, candidates)),
    timed(async () =>
      qv
        ? nearest(db, {
            modelId: qv.modelId,
            dims: qv.info.dims,
            vector: qv.vector,
            k: candidates,
            filters,
            // Items in a language the model does not read have vectors that mean nothing.
            languages: qv.info.languages.length > 0 ? qv.info.languages : undefined,
          })
        : [],
    ),
  ]);

  const fuseStarted = performance.now();
  const stories = await storiesOf(db, [
    ...new Set([...lexical.map((h) => h.entryKey), ...vector.map((h) => h.entryKey)]),
  ]);
  const fused = new Map<string, Fused>();
  // Keyed by the story's canonical item; a candidate whose row went meanwhile is left out.
  const fusedOf = (key: string): Fused | null => {
    const story = stories.get(key);
    if (!story) return null;
    let f = fused.get(story.canonical);
    if (!f) {
      f = { canonical: story.canonical, story: story.shown, score: 0, lexical: null, vector: null };
      fused.set(story.canonical, f);
    }
    return f;
  };
  let rank = 0;
  for (const hit of lexical) {
    const f = fusedOf(hit.entryKey);
    if (!f || f.lexical) continue;
    rank++;
    f.lexical = { rank, score: round(hit.score, 4), entryKey: hit.entryKey };
    f.score += 1 / (RRF_K + rank);
  }
  rank = 0;
  for (const hit of vector) {
    const f = fusedOf(hit.entryKey);
    if (!f || f.vector || !qv) continue;
    rank++;
    f.vector = {
      rank,
      similarity: round(hit.similarity, 4),
      model: qv.info.model,
      kind: qv.info.kind,
      label: qv.info.kind === "meaning" ? "meaning" : "lexical-vector",
      entryKey: hit.entryKey,
    };
    f.score += 1 / (RRF_K + rank);
  }
  const ordered = [...fused.values()].sort(byFused);
  const rest = after ? ordered.filter((f) => byFused(f, after) > 0) : ordered;
  const page = rest.slice(0, limit);
  const last = page.at(-1);
  const nextCursor =
    rest.length > limit && last ? encodeCursor(fingerprint, last.score, last.canonical) : null;
  const hits: SearchHit[] = page.map((f) => ({
    ...f.story,
    score: round(f.score, 6),
    reasons: { lexical: f.lexical, vector: f.vector },
  }));
  const fuseMs = performance.now() - fuseStarted;
  return {
    mode: qv ? "hybrid" : "fulltext",
    hits,
    nextCursor,
    candidates: { lexical: lexical.length, vector: vector.length },
    timings: {
      lexicalMs: round(lexicalMs, 2),
      vectorMs: round(vectorMs, 2),
      fuseMs: round(fuseMs, 2),
      totalMs: round(performance.now() - started, 2),
    },
  };
}

interface Fused {
  canonical: string;
  story: Shown;
  score: number;
  lexical: LexicalReason | null;
  vector: VectorReason | null;
}

/** Best score first; equal scores by key, so the order is total and a cursor can name a place. */
function byFused(a: { score: number; canonical: string }, b: { score: number; canonical: string }) {
  if (a.score !== b.score) return b.score - a.score;
  return a.canonical < b.canonical ? -1 : a.canonical > b.canonical ? 1 : 0;
}

const round = (x: number, digits: number) => Math.round(x * 10 ** digits) / 10 ** digits;

/**
 * Full-text matches ranked at most, the newest first seen: a broad query (one common word, 14,000
 * matches at 1,000,000 items) spent 50 of its 67 ms in ts_rank_cd over every match; ranking the
 * newest 2,000 took 38 ms (PostgreSQL 15, warm). A query with fewer matches ranks them all.
 */
export const RANKED_MATCHES = 2_000;

/**
 * The best full-text matches. The query is parsed twice, by 'english' (stemmed, for English
 * documents) and by 'simple' (words whole, for Bangla and unknown-language ones), and either
 * matching counts: a document only ever holds the lexemes of its own configuration, so the two
 * never mix within one. websearch_to_tsquery takes what people type ("quoted phrases", -not,
 * or) and never fails on syntax. Of more than RANKED_MATCHES matches, the newest are ranked.
 */
async function fullTextCandidates(
  db: Database,
  q: string,
  filters: SearchFilters,
  n: number,
): Promise<{ entryKey: string; score: number }[]> {
  const rows = await db.prisma.$queryRaw<{ entry_key: string; score: number }[]>`
    WITH query AS (
      SELECT websearch_to_tsquery('english', ${q}) || websearch_to_tsquery('simple', ${q}) AS tsq
    ), matches AS MATERIALIZED (
      SELECT entry_key FROM search_docs, query
      WHERE tsv @@ query.tsq ${filterSql(filters)}
      ORDER BY first_seen_at DESC
      LIMIT ${RANKED_MATCHES}
    )
    SELECT d.entry_key, ts_rank_cd(d.tsv, query.tsq, 32) AS score
    FROM matches m JOIN search_docs d ON d.entry_key = m.entry_key, query
    ORDER BY score DESC, d.first_seen_at DESC, d.entry_key
    LIMIT ${n}`;
  return rows.map((r) => ({ entryKey: r.entry_key, score: Number(r.score) }));
}

/** A story as a hit shows it, before it has a score and reasons. */
type Shown = Omit<SearchHit, "score" | "reasons">;

interface StoryRow {
  key: string;
  canonical: string;
  cluster_id: string | null;
  members: number | null;
  outlets: Outlet[] | null;
  /** The canonical item's row (c_*) and the candidate's own (o_*), for when the first is gone. */
  c_title: string | null;
  c_summary: string | null;
  c_link: string | null;
  c_source_id: string | null;
  c_source_name: string | null;
  c_language: string | null;
  c_published_at: Date | null;
  c_first_seen_at: Date | null;
  c_live: boolean | null;
  o_title: string | null;
  o_summary: string | null;
  o_link: string | null;
  o_source_id: string | null;
  o_source_name: string | null;
  o_language: string | null;
  o_published_at: Date | null;
  o_first_seen_at: Date | null;
}

/**
 * Each candidate's story, in one round trip for all of them (up to 200; ~1 ms a statement saved
 * is a fifth of the fusing on PGlite): the canonical item of its live cluster, else itself (an
 * item alone is its own story; a survivor indexed before it was linked is found here under its
 * canonical), with what a hit shows of the story: the canonical item, or the candidate itself
 * when the canonical is retracted or gone, and the sources of the cluster's live members.
 */
async function storiesOf(
  db: Database,
  keys: string[],
): Promise<Map<string, { canonical: string; shown: Shown }>> {
  if (keys.length === 0) return new Map();
  const rows = await db.prisma.$queryRaw<StoryRow[]>`
    WITH m AS (
      SELECT k.key, coalesce(c.canonical_key, k.key) AS canonical, c.id AS cluster_id, c.members
      FROM unnest(${keys}::text[]) AS k(key)
      LEFT JOIN dedup_items d ON d.entry_key = k.key
      LEFT JOIN dedup_clusters c ON c.id = d.cluster_id AND c.dissolved_at IS NULL
    )
    SELECT m.key, m.canonical, m.cluster_id::text AS cluster_id, m.members,
           (SELECT json_agg(json_build_object('sourceId', o.source_id, 'name', o.name)
                            ORDER BY o.source_id)
            FROM (SELECT DISTINCT d.source_id, s.name
                  FROM dedup_items d LEFT JOIN sources s ON s.id = d.source_id
                  WHERE d.cluster_id = m.cluster_id AND d.live) o) AS outlets,
           cn.title AS c_title, cn.summary AS c_summary, cn.link AS c_link,
           cn.source_id AS c_source_id, cs.name AS c_source_name, cn.language AS c_language,
           cn.published_at AS c_published_at, cn.first_seen_at AS c_first_seen_at,
           cn.deleted_at IS NULL AS c_live,
           own.title AS o_title, own.summary AS o_summary, own.link AS o_link,
           own.source_id AS o_source_id, os.name AS o_source_name, own.language AS o_language,
           own.published_at AS o_published_at, own.first_seen_at AS o_first_seen_at
    FROM m
    LEFT JOIN news cn ON cn.entry_key = m.canonical
    LEFT JOIN sources cs ON cs.id = cn.source_id
    LEFT JOIN news own ON own.entry_key = m.key AND m.canonical <> m.key
    LEFT JOIN sources os ON os.id = own.source_id`;
  const stories = new Map<string, { canonical: string; shown: Shown }>();
  for (const r of rows) {
    const canonicalShown = r.c_source_id !== null && (r.c_live || r.o_source_id === null);
    const p = canonicalShown ? "c" : "o";
    const sourceId = (canonicalShown ? r.c_source_id : r.o_source_id) ?? null;
    const firstSeen = canonicalShown ? r.c_first_seen_at : r.o_first_seen_at;
    if (sourceId === null || firstSeen === null) continue; // gone since it was a candidate
    const field = <K extends "title" | "summary" | "link" | "source_name" | "language">(k: K) =>
      r[`${p}_${k}` as `c_${K}`];
    const published = canonicalShown ? r.c_published_at : r.o_published_at;
    const own: Outlet = { sourceId, name: field("source_name") };
    const shown: Shown = {
      entryKey: canonicalShown ? r.canonical : r.key,
      clusterId: r.cluster_id,
      members: r.members ?? 1,
      outlets: [own, ...(r.outlets ?? []).filter((o) => o.sourceId !== sourceId)],
      title: field("title"),
      summary: cut(field("summary"), SUMMARY_CHARS),
      link: httpLink(field("link")),
      sourceId,
      sourceName: field("source_name"),
      lang: field("language"),
      publishedAt: published?.toISOString() ?? null,
      firstSeenAt: firstSeen.toISOString(),
    };
    stories.set(r.key, { canonical: r.canonical, shown });
  }
  return stories;
}

function cut(text: string | null, max: number): string | null {
  if (text === null || text.length <= max) return text;
  const head = text.slice(0, max);
  const space = head.lastIndexOf(" ");
  return `${(space > max * 0.6 ? head.slice(0, space) : head).trimEnd()}…`;
}

// ---------------------------------------------------------------------------------------------
// The cursor: base64url of [version, fingerprint, score, canonical key]. The fingerprint ties it
// to the query, filters and model it was made for: handed to another search, it is refused
// rather than silently skipping that search's best hits.

function cursorFingerprint(q: string, filters: SearchFilters, modelId: number | null): string {
  return createHash("sha256")
    .update(JSON.stringify([q, filtersKey(filters), modelId]))
    .digest("base64url")
    .slice(0, 12);
}

function encodeCursor(fingerprint: string, score: number, key: string): string {
  return Buffer.from(JSON.stringify([1, fingerprint, score, key])).toString("base64url");
}

function decodeCursor(cursor: string, fingerprint: string): { score: number; canonical: string } {
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw new BadSearchCursorError("not valid");
  }
  if (
    !Array.isArray(v) ||
    v.length !== 4 ||
    v[0] !== 1 ||
    typeof v[1] !== "string" ||
    typeof v[2] !== "number" ||
    !Number.isFinite(v[2]) ||
    typeof v[3] !== "string"
  ) {
    throw new BadSearchCursorError("not valid");
  }
  if (v[1] !== fingerprint) {
    throw new BadSearchCursorError("made for another query, filters or model");
  }
  return { score: v[2], canonical: v[3] };
}
