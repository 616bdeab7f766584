/**
 * Search benchmark: how long hybrid search takes over N canonical items, against full text
 * alone, and the vector path by itself (pgvector against portable, and how much of the exact
 * top 10 each finds).
 *
 *   npm run -s bench -- search [--items 100000,1000000] [--target pg,pglite] [--real-vectors]
 *                              [--pglite-items N] [--queries Q] [--runs R]
 *                              [--recall-queries K] [--dims D] [--skip-index] [--keep] [--json]
 *
 * What is measured. For each size N (default 100,000 and 1,000,000) a scratch database is
 * filled with N canonical items as the embed stage leaves them: `news` rows, their
 * `dedup_items` rows, a `search_docs` document each and a vector each (`item_vectors`, one
 * model of D = 512 dimensions, state complete). One item in 20 is the canonical of a story with
 * two more outlets' copies (news and dedup_items rows, no document: duplicates are found through
 * their canonical), so "one hit per story, with its outlets" has stories to fold. Texts are made
 * of real words: English from the MSRP corpus (../shared/corpora/msrp), Bangla from the
 * simulator's corpus, 30 % of the items Bangla. Items belong to N / 100 topics; a topic has its
 * own 12 words (every item takes 4 into its title and 6 into its summary, beside 18 words of
 * the whole vocabulary and 2 of 100 common ones) and its own centroid, and an item's vector is
 * that centroid plus noise (unit length; two items of a topic have cosine ~0.5, of two topics
 * ~0). Vectors are made inside the database (random(), generate_series), texts here and sent
 * 5,000 rows a statement; the secondary indexes are dropped while filling and built after, then
 * the model's HNSW index where pgvector is in use (its build time is reported).
 *
 * Queries, each aimed at one item: four in five are two of its topic's words (a specific
 * search: ~100 full-text matches at any N), one in five is one of the common words (a broad one:
 * ~2 % of the items match, the full-text side's worst case); the query vector is the item's own
 * vector moved by noise (cosine ~0.9 to it). Two modes, alternating which goes first run by run,
 * each run Q queries (default 200) that both modes share: "hybrid", lib/search/hybrid.ts's
 * hybridSearch with the query vector (full text top 100 and vector top 100, fused, a page of 20
 * hits with outlets), and the baseline "fulltext", the same call without a vector. Per run and
 * mode p50 / p95 / max per query; min / median / max over R runs (default 3); and the ratio of
 * the medians of p95.
 *
 * The vector path alone: nearest() with k = 100 (what hybrid asks for) on each path the
 * database has (PGlite: pgvector and portable; PostgreSQL without the extension: portable),
 * p50 / p95 / max over the runs' queries; and recall@10: for K queries (default 30) the share of
 * the exact top 10 (brute force here, over every stored vector) that nearest(k = 10) returns.
 *
 * --real-vectors instead checks the vector paths' recall@10 on real embeddings, MSRP sentences
 * by the shipped model and the lexical fallback (bench/searchRecall.ts), on the first target.
 *
 * Where (--target, default pg when DATABASE_URL is set, else pglite): a scratch database on the
 * DATABASE_URL server, or PGlite in a temporary directory, removed at the end. PGlite fills at
 * most --pglite-items (default 1,000,000); the line says what it used.
 */
import { readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { config } from "@/lib/config";
import type { Database } from "@/lib/db";
import type { ModelInfo } from "@/lib/embed/types";
import { createScratchDatabase } from "@/lib/scratchDatabase";
import { hybridSearch } from "@/lib/search/hybrid";
import { near } from "@/lib/search/testing";
import type { VectorBackend } from "@/lib/search/types";
import {
  dotWithBinaryArray,
  ensureModelIndex,
  nearest,
  vectorBackendStatus,
} from "@/lib/search/vectors";
import { randomFacts, TOPICS } from "@/simulator/corpus";
import { Random } from "@/simulator/random";
import { CANDIDATES, type RealRecall, realRecall } from "./searchRecall";

const SEED = 0x5ea2_2026;
const SOURCES = 20;
const FILL_CHUNK = 5_000;
const ITEMS_PER_TOPIC = 100;
const TOPIC_WORDS = 12;
const COMMON_WORDS = 100;
const BANGLA_SHARE = 0.3;
const CLUSTER_EVERY = 20;
/** Noise of an item around its topic's centroid, and of a query around its item (see above). */
const ITEM_NOISE = 1.0;
const QUERY_NOISE = 0.5;
/** The aim of the issue: p95 of hybrid search under 100 ms at 1,000,000 items. */
const GOAL_P95_MS = 100;
const PAGE = 20;

type Target = "pg" | "pglite";
const TARGETS: readonly Target[] = ["pg", "pglite"];

interface Options {
  targets: Target[];
  sizes: number[];
  pgliteItems: number;
  queries: number;
  runs: number;
  recallQueries: number;
  dims: number;
  realVectors: boolean;
  /** Leave the scratch database for a look at its plans (its URL or directory is printed). */
  keep: boolean;
  /**
   * No HNSW index: search as it answers while a new model's index is still being built (an
   * exact scan), or where the build would not finish (PGlite at 1,000,000: decision 026).
   */
  skipIndex: boolean;
  json: boolean;
}

interface Percentiles {
  p50Ms: number;
  p95Ms: number;
  maxMs: number;
}

interface Timed {
  ms: number;
  kind: QueryKind;
  parts: { lexicalMs: number; vectorMs: number; fuseMs: number };
}

interface ModeSummary extends Percentiles {
  /**
   * Where a query's time went, medians over all runs: the full-text query, the vector query
   * (the two run at once on PostgreSQL, one after the other on PGlite), and fusing (the stories
   * of the candidates, the page's items and outlets).
   */
  parts: { lexicalMs: number; vectorMs: number; fuseMs: number };
  /** min / median / max over the runs of each run's p50 and p95. */
  p50: Spread;
  p95: Spread;
  runs: Percentiles[];
  /** Broad (one common word) and specific (two topic words) queries apart, over all runs. */
  byKind: Record<QueryKind, Percentiles>;
}

interface Spread {
  min: number;
  median: number;
  max: number;
}

interface VectorPath extends Percentiles {
  k: number;
  recallAt10: number;
}

interface Result {
  db: "pglite" | "postgres";
  items: number;
  dims: number;
  backend: VectorBackend;
  pgvectorVersion: string | null;
  fillSeconds: number;
  indexSeconds: number | null;
  queries: number;
  hybrid: ModeSummary;
  fulltext: ModeSummary;
  /** Median p95 of hybrid over that of full text alone. */
  ratio: number;
  goalP95Ms: number;
  vector: Partial<Record<VectorBackend, VectorPath>>;
}

const log = (msg: string) => process.stderr.write(`${msg}\n`);
const fmt = (n: number, digits = 0) =>
  n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });

export async function run(args: string[]): Promise<void> {
  const url = config().DATABASE_URL;
  const opts = parseOptions(args, url);
  if (opts.realVectors) {
    const target = opts.targets[0] as Target;
    const scratch = await openScratch(target === "pg" ? url : undefined);
    try {
      const real = await realRecall(scratch.db, opts.recallQueries, log);
      if (opts.json) process.stdout.write(`${JSON.stringify(real)}\n`);
      else reportReal(scratch.db.kind, real);
    } finally {
      await scratch.cleanup();
    }
    return;
  }
  const results: Result[] = [];
  for (const target of opts.targets) {
    for (const wanted of opts.sizes) {
      const items = target === "pglite" ? Math.min(wanted, opts.pgliteItems) : wanted;
      if (items < wanted) log(`PGlite: ${fmt(items)} items, not ${fmt(wanted)} (--pglite-items)`);
      const scratch = await openScratch(target === "pg" ? url : undefined, opts.keep);
      try {
        log(`${target}: filling ${fmt(items)} items`);
        results.push(await measure(scratch.db, items, opts));
      } finally {
        await scratch.cleanup();
      }
    }
  }
  if (opts.json) process.stdout.write(`${JSON.stringify(results)}\n`);
  else report(results);
}

async function measure(db: Database, items: number, opts: Options): Promise<Result> {
  const corpus = new Corpus(items);
  const { modelId, info } = await makeModel(db, opts.dims);
  const fillStarted = performance.now();
  await fill(db, corpus, modelId, opts.dims);
  const fillSeconds = (performance.now() - fillStarted) / 1000;
  const status = await vectorBackendStatus(db);
  let indexSeconds: number | null = null;
  if (status.backend === "pgvector" && opts.skipIndex) {
    log("  no HNSW index (--skip-index): vector search is an exact scan");
  } else if (status.backend === "pgvector") {
    log("  building the model's HNSW index");
    const built = await ensureModelIndex(db, modelId, opts.dims, {
      maintenanceWorkMem: db.kind === "pglite" ? "1GB" : "2GB",
    });
    indexSeconds = round(built.ms / 1000, 1);
    log(`  HNSW index built in ${fmt(indexSeconds, 1)} s`);
    await db.prisma.$executeRawUnsafe("ANALYZE item_vectors");
  }

  const r = new Random(SEED + 7);
  const total = opts.queries * opts.runs;
  const queries = await makeQueries(db, corpus, modelId, total, r);
  const modes = ["hybrid", "fulltext"] as const;
  const times: Record<(typeof modes)[number], Timed[][]> = {
    hybrid: [],
    fulltext: [],
  };
  // One query of each mode first, outside the clock: plans, caches, the pool's connections.
  for (const mode of modes) await searchOnce(db, queries[0] as Query, mode, modelId, info);
  for (let run = 0; run < opts.runs; run++) {
    const slice = queries.slice(run * opts.queries, (run + 1) * opts.queries);
    // Alternating which mode goes first, so neither always gets the warmer cache.
    const order = run % 2 === 0 ? modes : [...modes].reverse();
    for (const mode of order) {
      const list: Timed[] = [];
      for (const q of slice) {
        const t0 = performance.now();
        const answer = await searchOnce(db, q, mode, modelId, info);
        list.push({ ms: performance.now() - t0, kind: q.kind, parts: answer.timings });
      }
      times[mode].push(list);
      const p = percentiles(list.map((x) => x.ms));
      log(
        `  run ${run + 1}/${opts.runs} ${mode}: p50 ${fmt(p.p50Ms, 1)} ms, p95 ${fmt(p.p95Ms, 1)} ms, max ${fmt(p.maxMs, 1)} ms`,
      );
    }
  }
  const hybrid = summarize(times.hybrid);
  const fulltext = summarize(times.fulltext);

  const vector: Partial<Record<VectorBackend, VectorPath>> = {};
  const paths: VectorBackend[] =
    status.backend === "pgvector" ? ["pgvector", "portable"] : ["portable"];
  const recallSet = queries.slice(0, Math.min(opts.recallQueries, queries.length));
  log(`  exact top 10 of ${recallSet.length} queries by brute force over ${fmt(items)} vectors`);
  const exact = await exactTop10(db, modelId, recallSet);
  for (const backend of paths) {
    const ms: number[] = [];
    for (const q of queries.slice(0, opts.queries)) {
      const t0 = performance.now();
      await nearest(db, { modelId, dims: opts.dims, vector: q.vector, k: 100, backend });
      ms.push(performance.now() - t0);
    }
    let found = 0;
    for (const [i, q] of recallSet.entries()) {
      const hits = await nearest(db, {
        modelId,
        dims: opts.dims,
        vector: q.vector,
        k: 10,
        backend,
      });
      const truth = new Set(exact[i]);
      found += hits.filter((h) => truth.has(h.entryKey)).length;
    }
    vector[backend] = {
      k: 100,
      ...percentiles(ms),
      recallAt10: round(found / (10 * recallSet.length), 4),
    };
    log(
      `  vectors alone, ${backend}: k = 100 p50 ${fmt(vector[backend].p50Ms, 1)} ms, p95 ${fmt(vector[backend].p95Ms, 1)} ms; recall@10 ${fmt(vector[backend].recallAt10, 3)}`,
    );
  }
  return {
    db: db.kind,
    items,
    dims: opts.dims,
    backend: status.backend,
    pgvectorVersion: status.pgvectorVersion,
    fillSeconds: round(fillSeconds, 1),
    indexSeconds,
    queries: opts.queries,
    hybrid,
    fulltext,
    ratio: round(hybrid.p95.median / fulltext.p95.median, 3),
    goalP95Ms: GOAL_P95_MS,
    vector,
  };
}

async function searchOnce(
  db: Database,
  q: Query,
  mode: "hybrid" | "fulltext",
  modelId: number,
  info: ModelInfo,
) {
  return hybridSearch(db, {
    q: q.text,
    queryVector: mode === "hybrid" ? { modelId, info, vector: q.vector } : null,
    limit: PAGE,
  });
}

// ---------------------------------------------------------------------------------------------
// The corpus: item i is a pure function of (seed, i), so the queries can be aimed at items
// without holding a million texts in memory.

const ENGLISH = loadEnglishWords();
const BANGLA = loadBanglaWords();
/** Words in many items (2 an item, of 100): the broad queries. */
const COMMON_EN = ENGLISH.slice(0, COMMON_WORDS);
const COMMON_BN = BANGLA.slice(0, COMMON_WORDS);

function loadEnglishWords(): string[] {
  const file = path.resolve(
    import.meta.dirname,
    "../../shared/corpora/msrp/msr_paraphrase_train.txt",
  );
  const counts = new Map<string, number>();
  try {
    for (const line of readFileSync(file, "utf8").split("\n").slice(1)) {
      const cols = line.split("\t");
      for (const text of [cols[3], cols[4]]) {
        for (const w of (text ?? "").toLowerCase().match(/[a-z]{4,}/g) ?? []) {
          counts.set(w, (counts.get(w) ?? 0) + 1);
        }
      }
    }
  } catch {
    // Without the corpus the English wordings of the simulator's topics stand in (fewer words).
  }
  if (counts.size < 1_000) {
    const r = new Random(SEED);
    for (const t of TOPICS) {
      for (const h of t.headlines.en ?? []) {
        for (const w of h(randomFacts(r))
          .toLowerCase()
          .match(/[a-z]{4,}/g) ?? []) {
          counts.set(w, (counts.get(w) ?? 0) + 1);
        }
      }
    }
  }
  // Most frequent first: the first 100 are the common words.
  return [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([w]) => w);
}

function loadBanglaWords(): string[] {
  const r = new Random(SEED + 1);
  const words = new Set<string>();
  for (let round = 0; round < 20; round++) {
    for (const t of TOPICS) {
      const f = randomFacts(r);
      const texts = [
        ...(t.headlines.bn ?? []).map((h) => h(f)),
        t.summary.bn ? t.summary.bn(f) : "",
        t.rewrite.bn ? t.rewrite.bn(f) : "",
      ];
      for (const text of texts) {
        for (const w of text.split(/[\s,।:;'"()]+/u)) {
          if (/^[\u0980-\u09FF]{2,}$/u.test(w)) words.add(w);
        }
      }
    }
  }
  return [...words];
}

type QueryKind = "specific" | "broad";

interface Item {
  key: string;
  topic: number;
  lang: "en" | "bn";
  source: string;
  title: string;
  summary: string;
  /** Copies by two other outlets (a story of three). */
  clustered: boolean;
}

class Corpus {
  readonly topics: number;

  constructor(readonly size: number) {
    this.topics = Math.max(1, Math.ceil(size / ITEMS_PER_TOPIC));
  }

  /** A topic's language and its own words. */
  topic(t: number): { lang: "en" | "bn"; words: string[] } {
    const r = new Random((SEED ^ Math.imul(t + 1, 0x85eb_ca6b)) >>> 0);
    const lang = r.chance(BANGLA_SHARE) ? "bn" : "en";
    const vocab = lang === "bn" ? BANGLA : ENGLISH;
    // Topic words come from past the common ones, so a specific query is specific.
    const words = Array.from(
      { length: TOPIC_WORDS },
      () => vocab[r.int(COMMON_WORDS, vocab.length - 1)],
    ) as string[];
    return { lang, words };
  }

  item(i: number): Item {
    const r = new Random((SEED ^ Math.imul(i + 1, 0x9e37_79b1)) >>> 0);
    const topic = i % this.topics;
    const { lang, words } = this.topic(topic);
    const vocab = lang === "bn" ? BANGLA : ENGLISH;
    const common = lang === "bn" ? COMMON_BN : COMMON_EN;
    const pick = (n: number, from: readonly string[], lo = 0) =>
      Array.from({ length: n }, () => from[r.int(lo, from.length - 1)] as string);
    const title = [...pick(4, words), ...pick(4, vocab, COMMON_WORDS)];
    const summary = [...pick(6, words), ...pick(14, vocab, COMMON_WORDS), ...pick(2, common)];
    shuffle(r, title);
    shuffle(r, summary);
    return {
      key: `s${i}`,
      topic,
      lang,
      source: `bench-${i % SOURCES}`,
      title: title.join(" "),
      summary: `${summary.join(" ")}${lang === "bn" ? "।" : "."}`,
      clustered: i % CLUSTER_EVERY === 0,
    };
  }
}

function shuffle<T>(r: Random, xs: T[]): void {
  for (let i = xs.length - 1; i > 0; i--) {
    const j = r.int(0, i);
    [xs[i], xs[j]] = [xs[j] as T, xs[i] as T];
  }
}

// ---------------------------------------------------------------------------------------------
// Filling

async function makeModel(
  db: Database,
  dims: number,
): Promise<{ modelId: number; info: ModelInfo }> {
  const info: ModelInfo = {
    model: `http:bench-${dims}@1`,
    provider: "http",
    name: `bench-${dims}`,
    version: "1",
    dims,
    kind: "meaning",
    languages: ["en", "bn"],
    crossLingual: true,
  };
  const [row] = await db.prisma.$queryRaw<{ id: number }[]>`
    INSERT INTO embedding_models (model, provider, name, version, dims, kind, languages,
                                  cross_lingual, state, backfill_started_at, backfill_completed_at)
    VALUES (${info.model}, 'http', ${info.name}, '1', ${dims}, 'meaning', ARRAY['en', 'bn'], true,
            'complete', now(), now())
    RETURNING id`;
  return { modelId: row?.id as number, info };
}

const FILLED_TABLES = ["news", "dedup_items", "search_docs", "item_vectors", "dedup_clusters"];

async function fill(db: Database, corpus: Corpus, modelId: number, dims: number): Promise<void> {
  await db.prisma.$executeRawUnsafe(
    `INSERT INTO sources (id, name, kind)
     SELECT 'bench-' || i, 'Bench source ' || i, 'feed' FROM generate_series(0, $1::int - 1) i`,
    SOURCES,
  );
  // Each topic's centroid: components uniform in [-0.5, 0.5). `WHERE t > 0` ties the inner
  // query to its row, so it is not evaluated once and shared (PostgreSQL may memoise it).
  await db.prisma.$executeRawUnsafe(`SELECT setseed(0.2026)`);
  await db.prisma.$executeRawUnsafe(
    `CREATE TABLE bench_centroids AS
     SELECT t AS topic, (SELECT array_agg((random() - 0.5)::real) FROM generate_series(1, $1::int)
                         WHERE t >= 0) AS e
     FROM generate_series(0, $2::int - 1) t`,
    dims,
    corpus.topics,
  );
  await db.prisma.$executeRawUnsafe(`ALTER TABLE bench_centroids ADD PRIMARY KEY (topic)`);
  const indexes = await db.prisma.$queryRaw<{ name: string; def: string }[]>`
    SELECT indexname AS name, indexdef AS def FROM pg_indexes
    WHERE tablename = ANY(${FILLED_TABLES}::text[]) AND indexname NOT LIKE '%_pkey'
      AND indexdef NOT LIKE 'CREATE UNIQUE%'`;
  for (const ix of indexes) await db.prisma.$executeRawUnsafe(`DROP INDEX ${ix.name}`);

  const now = Date.now();
  const span = 72 * 3_600_000;
  const chunks: [number, number][] = [];
  for (let from = 0; from < corpus.size; from += FILL_CHUNK) {
    chunks.push([from, Math.min(corpus.size, from + FILL_CHUNK)]);
  }
  // PostgreSQL makes vectors on two connections at once (the work is in the server, one core
  // each); PGlite has one.
  const lanes = db.kind === "postgres" ? 2 : 1;
  let done = 0;
  let next = 0;
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      while (next < chunks.length) {
        const [from, to] = chunks[next++] as [number, number];
        await fillChunk(db, corpus, modelId, from, to, now, span);
        done += to - from;
        if (done % 100_000 < FILL_CHUNK || done === corpus.size) {
          log(`  filled ${fmt(done)} / ${fmt(corpus.size)}`);
        }
      }
    }),
  );
  log(`  building ${indexes.length} indexes`);
  for (const ix of indexes) await db.prisma.$executeRawUnsafe(ix.def);
  await db.prisma.$executeRawUnsafe("DROP TABLE bench_centroids");
  for (const t of FILLED_TABLES) await db.prisma.$executeRawUnsafe(`VACUUM ANALYZE ${t}`);
}

async function fillChunk(
  db: Database,
  corpus: Corpus,
  modelId: number,
  from: number,
  to: number,
  now: number,
  span: number,
): Promise<void> {
  const items: (Item & { seen: string })[] = [];
  for (let i = from; i < to; i++) {
    // Oldest first, spread over the last 72 hours.
    const seen = new Date(now - span + Math.floor((span * i) / corpus.size)).toISOString();
    items.push({ ...corpus.item(i), seen });
  }
  const col = <T>(f: (x: (typeof items)[number]) => T) => items.map(f);
  const copies = items
    .filter((x) => x.clustered)
    .flatMap((x, j) =>
      [1, 2].map((c) => ({
        key: `${x.key}-c${c}`,
        of: x.key,
        source: `bench-${(Number(x.key.slice(1)) + c * 7 + j) % SOURCES}`,
        title: x.title,
        summary: x.summary,
        lang: x.lang,
        seen: x.seen,
      })),
    );
  const ccol = <T>(f: (x: (typeof copies)[number]) => T) => copies.map(f);
  await db.prisma.$executeRaw`
    WITH x AS (
      SELECT * FROM unnest(${col((r) => r.key)}::text[], ${col((r) => r.source)}::text[],
                           ${col((r) => r.title)}::text[], ${col((r) => r.summary)}::text[],
                           ${col((r) => r.lang)}::text[], ${col((r) => r.topic)}::int[],
                           ${col((r) => r.seen)}::timestamptz[], ${col((r) => r.clustered)}::bool[])
             AS x(k, s, t, m, l, topic, f, clustered)
    ), c AS (
      SELECT * FROM unnest(${ccol((r) => r.key)}::text[], ${ccol((r) => r.of)}::text[],
                           ${ccol((r) => r.source)}::text[], ${ccol((r) => r.title)}::text[],
                           ${ccol((r) => r.summary)}::text[], ${ccol((r) => r.lang)}::text[],
                           ${ccol((r) => r.seen)}::timestamptz[])
             AS c(k, of, s, t, m, l, f)
    ), news_rows AS (
      INSERT INTO news (entry_key, source_id, canonical_id, quality, title, summary, link,
                        language, version, first_seen_at, first_source, first_collector,
                        last_result, duplicate_of, updated_at)
      SELECT k, s, k, 'authoritative', t, m, 'https://' || s || '.example/' || k, l, 1, f, s, 'A',
             'inserted', NULL, f FROM x
      UNION ALL
      SELECT k, s, k, 'authoritative', t, m, 'https://' || s || '.example/' || k, l, 1, f, s, 'A',
             'inserted', of, f FROM c
    ), clusters AS (
      INSERT INTO dedup_clusters (canonical_key, members, outlets, first_seen_at)
      SELECT k, 3, 3, f FROM x WHERE clustered
      RETURNING id, canonical_key
    ), decided AS (
      INSERT INTO dedup_items (entry_key, version, source_id, first_seen_at, live, outcome, stage,
                               cluster_id, decision_ms)
      SELECT x.k, 1, x.s, x.f, true, 'unique', NULL, clusters.id, 0
      FROM x LEFT JOIN clusters ON clusters.canonical_key = x.k
      UNION ALL
      SELECT c.k, 1, c.s, c.f, true, 'duplicate', 'exact', clusters.id, 0
      FROM c JOIN clusters ON clusters.canonical_key = c.of
    ), docs AS (
      INSERT INTO search_docs (entry_key, item_version, source_id, lang, first_seen_at, tsv)
      SELECT k, 1, s, l, f,
             setweight(to_tsvector(CASE WHEN l = 'en' THEN 'english' ELSE 'simple' END::regconfig, t), 'A') ||
             setweight(to_tsvector(CASE WHEN l = 'en' THEN 'english' ELSE 'simple' END::regconfig, m), 'B')
      FROM x
    )
    INSERT INTO item_vectors (model_id, entry_key, item_version, embedding, code, lang, source_id,
                              first_seen_at)
    SELECT ${modelId}, x.k, 1, v.e, r.code, x.l, x.s, x.f
    FROM x
    JOIN bench_centroids cen ON cen.topic = x.topic
    CROSS JOIN LATERAL (
      SELECT array_agg(y) AS raw, sqrt(sum(y * y)) AS n,
             -- As lib/search/vectors.ts signCode for a vector with negative coordinates.
             string_agg(CASE WHEN y >= 0 THEN '1' ELSE '0' END, '')::varbit AS code
      FROM (SELECT e + ${ITEM_NOISE} * (random() - 0.5) AS y FROM unnest(cen.e) AS e
            WHERE x.k <> '') AS noisy
    ) r
    CROSS JOIN LATERAL (SELECT array_agg((y / r.n)::real) AS e FROM unnest(r.raw) AS y) v`;
}

// ---------------------------------------------------------------------------------------------
// Queries

interface Query {
  kind: QueryKind;
  text: string;
  target: string;
  vector: Float32Array;
}

async function makeQueries(
  db: Database,
  corpus: Corpus,
  modelId: number,
  n: number,
  r: Random,
): Promise<Query[]> {
  const targets = Array.from({ length: n }, () => corpus.item(r.int(0, corpus.size - 1)));
  const rows = await db.prisma.$queryRaw<{ entry_key: string; bytes: string }[]>`
    SELECT entry_key, encode(array_send(embedding), 'base64') AS bytes FROM item_vectors
    WHERE model_id = ${modelId} AND entry_key = ANY(${targets.map((t) => t.key)}::text[])`;
  const vectors = new Map(
    rows.map((row) => [row.entry_key, fromBinaryArray(Buffer.from(row.bytes, "base64"))]),
  );
  return targets.map((item) => {
    const broad = r.chance(0.2);
    const { words } = corpus.topic(item.topic);
    const common = item.lang === "bn" ? COMMON_BN : COMMON_EN;
    const text = broad
      ? (r.pick(common) as string)
      : `${r.pick(words.slice(0, 6))} ${r.pick(words.slice(6))}`;
    const own = vectors.get(item.key);
    if (!own) throw new Error(`bench: no vector stored for ${item.key}`);
    return {
      kind: broad ? "broad" : "specific",
      text,
      target: item.key,
      vector: near(r, own, QUERY_NOISE),
    };
  });
}

function fromBinaryArray(bytes: Uint8Array): Float32Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const length = view.getInt32(12);
  const v = new Float32Array(length);
  for (let i = 0; i < length; i++) v[i] = view.getFloat32(20 + i * 8 + 4);
  return v;
}

/**
 * The exact top 10 of each query, by reading every stored vector once in key order (binary, a
 * page at a time) and keeping each query's best 10 here.
 */
async function exactTop10(db: Database, modelId: number, queries: Query[]): Promise<string[][]> {
  const best = queries.map(() => [] as { entryKey: string; similarity: number }[]);
  let after = "";
  for (;;) {
    const rows = await db.prisma.$queryRaw<{ entry_key: string; bytes: string }[]>`
      SELECT entry_key, encode(array_send(embedding), 'base64') AS bytes FROM item_vectors
      WHERE model_id = ${modelId} AND entry_key > ${after}
      ORDER BY entry_key LIMIT 5000`;
    if (rows.length === 0) break;
    after = rows[rows.length - 1]?.entry_key as string;
    for (const row of rows) {
      const bytes = Buffer.from(row.bytes, "base64");
      for (const [i, q] of queries.entries()) {
        const similarity = dotWithBinaryArray(q.vector, bytes);
        const list = best[i] as { entryKey: string; similarity: number }[];
        if (list.length < 10 || similarity > (list[list.length - 1]?.similarity ?? -2)) {
          list.push({ entryKey: row.entry_key, similarity });
          list.sort((a, b) => b.similarity - a.similarity);
          if (list.length > 10) list.pop();
        }
      }
    }
  }
  return best.map((list) => list.map((h) => h.entryKey));
}

// ---------------------------------------------------------------------------------------------
// Reporting

function percentiles(values: number[]): Percentiles {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  return {
    p50Ms: round(at(0.5), 2),
    p95Ms: round(at(0.95), 2),
    maxMs: round(sorted.at(-1) ?? 0, 2),
  };
}

function spread(xs: number[]): Spread {
  return {
    min: round(Math.min(...xs), 2),
    median: round(median(xs), 2),
    max: round(Math.max(...xs), 2),
  };
}

function summarize(runs: Timed[][]): ModeSummary {
  const per = runs.map((list) => percentiles(list.map((x) => x.ms)));
  const all = runs.flat();
  const part = (f: (t: Timed) => number) => round(median(all.map(f)), 2);
  const kind = (k: QueryKind) => percentiles(all.filter((x) => x.kind === k).map((x) => x.ms));
  return {
    p50Ms: round(median(per.map((p) => p.p50Ms)), 2),
    p95Ms: round(median(per.map((p) => p.p95Ms)), 2),
    maxMs: round(Math.max(...per.map((p) => p.maxMs)), 2),
    p50: spread(per.map((p) => p.p50Ms)),
    p95: spread(per.map((p) => p.p95Ms)),
    runs: per,
    byKind: { specific: kind("specific"), broad: kind("broad") },
    parts: {
      lexicalMs: part((t) => t.parts.lexicalMs),
      vectorMs: part((t) => t.parts.vectorMs),
      fuseMs: part((t) => t.parts.fuseMs),
    },
  };
}

function reportReal(db: string, real: RealRecall[]): void {
  const lines = [`vector recall@10 on real embeddings (MSRP sentences), ${db}`];
  for (const r of real) {
    lines.push(
      `  ${r.model}: ${fmt(r.stored)} stored, ${r.queries} queries (embedded in ${fmt(r.embedSeconds, 1)} s)`,
      `    portable by Hamming candidates kept: ${CANDIDATES.map((c) => `${c} → ${fmt(r.portable[c] ?? 0, 3)}`).join(", ")}`,
      `    pgvector HNSW: ${r.pgvector === null ? "not in this database" : fmt(r.pgvector, 3)}`,
    );
  }
  console.log(lines.join("\n"));
}

function report(results: Result[]): void {
  const lines = [
    `search on ${os.cpus().length} cores, load ${os
      .loadavg()
      .map((x) => x.toFixed(1))
      .join(" ")}`,
  ];
  const mm = (s: Spread) => `${fmt(s.min, 1)} / ${fmt(s.median, 1)} / ${fmt(s.max, 1)}`;
  for (const r of results) {
    lines.push(
      "",
      `${r.db}, ${fmt(r.items)} canonical items, ${r.dims} dims, vectors on ${r.backend}${
        r.pgvectorVersion ? ` ${r.pgvectorVersion}` : ""
      }: filled in ${fmt(r.fillSeconds, 1)} s${
        r.indexSeconds !== null ? `, HNSW index built in ${fmt(r.indexSeconds, 1)} s` : ""
      }`,
      `  ${fmt(r.queries)} queries per run and mode, ${r.hybrid.runs.length} runs, modes alternating (min / median / max over runs)`,
    );
    for (const [name, m] of [
      ["hybrid", r.hybrid],
      ["fulltext", r.fulltext],
    ] as const) {
      lines.push(
        `  ${name.padEnd(8)} p50 ${mm(m.p50)} ms, p95 ${mm(m.p95)} ms, max ${fmt(m.maxMs, 1)} ms; ` +
          `specific p95 ${fmt(m.byKind.specific.p95Ms, 1)} ms, broad p95 ${fmt(m.byKind.broad.p95Ms, 1)} ms; ` +
          `parts (medians): full text ${fmt(m.parts.lexicalMs, 1)} ms, vectors ${fmt(m.parts.vectorMs, 1)} ms, fusing ${fmt(m.parts.fuseMs, 1)} ms`,
      );
    }
    const aim =
      r.items >= 1_000_000
        ? `aim p95 < ${r.goalP95Ms} ms at 1,000,000: ${r.hybrid.p95Ms < r.goalP95Ms ? "met" : "not met"} here`
        : `(the aim, p95 < ${r.goalP95Ms} ms, is for 1,000,000 items)`;
    lines.push(`  hybrid / fulltext p95: ${fmt(r.ratio, 2)}×; ${aim}`);
    for (const [backend, v] of Object.entries(r.vector)) {
      lines.push(
        `  vectors alone, ${backend.padEnd(8)} k = ${v.k}: p50 ${fmt(v.p50Ms, 1)} ms, p95 ${fmt(v.p95Ms, 1)} ms, max ${fmt(v.maxMs, 1)} ms; recall@10 ${fmt(v.recallAt10, 3)}`,
      );
    }
  }
  console.log(lines.join("\n"));
}

// ---------------------------------------------------------------------------------------------
// Plumbing

function parseOptions(args: string[], url: string | undefined): Options {
  const { values } = parseArgs({
    args,
    options: {
      items: { type: "string", default: "100000,1000000" },
      target: { type: "string" },
      "pglite-items": { type: "string", default: "1000000" },
      queries: { type: "string", default: "200" },
      runs: { type: "string", default: "3" },
      "recall-queries": { type: "string", default: "30" },
      dims: { type: "string", default: "512" },
      "real-vectors": { type: "boolean", default: false },
      keep: { type: "boolean", default: false },
      "skip-index": { type: "boolean", default: false },
      json: { type: "boolean", default: false },
    },
  });
  const int = (name: string, raw: string, min: number, max = Number.MAX_SAFE_INTEGER) => {
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) {
      throw usageError(`--${name} must be an integer from ${min} to ${max}`);
    }
    return n;
  };
  const targets = (values.target ?? (url ? "pg" : "pglite")).split(",").map((t) => t.trim());
  for (const t of targets) {
    if (!TARGETS.includes(t as Target)) {
      throw usageError(`--target takes pg, pglite or both, not "${t}"`);
    }
  }
  if (targets.includes("pg") && !url) throw usageError("--target pg needs DATABASE_URL");
  return {
    targets: targets as Target[],
    sizes: values.items.split(",").map((s) => int("items", s.trim(), 1_000, 100_000_000)),
    pgliteItems: int("pglite-items", values["pglite-items"], 1_000),
    queries: int("queries", values.queries, 2),
    runs: int("runs", values.runs, 1),
    recallQueries: int("recall-queries", values["recall-queries"], 1),
    dims: int("dims", values.dims, 8, 2_000),
    realVectors: values["real-vectors"],
    keep: values.keep,
    skipIndex: values["skip-index"],
    json: values.json,
  };
}

function usageError(message: string): Error {
  const err = new Error(message);
  err.name = "UsageError";
  return err;
}

interface Scratch {
  db: Database;
  cleanup(): Promise<void>;
}

async function openScratch(serverUrl: string | undefined, keep = false): Promise<Scratch> {
  const scratch = await createScratchDatabase("ww_bench_search", serverUrl, { poolSize: 4 });
  const label = scratch.db.location;
  let done: Promise<void> | undefined;
  const cleanup = () => {
    done ??= (async () => {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
      if (keep) {
        await scratch.db.close();
        log(`kept the scratch database (--keep): ${scratch.where}`);
        return;
      }
      await scratch.dispose();
      log(`removed scratch database ${label}`);
    })();
    return done;
  };
  const onSignal = (signal: NodeJS.Signals) => {
    log(`${signal}: removing scratch database ${label}`);
    cleanup().finally(() => process.exit(130));
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  return { db: scratch.db, cleanup };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

const round = (x: number, digits: number) => Math.round(x * 10 ** digits) / 10 ** digits;
