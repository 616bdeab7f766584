import type { Database } from "@/lib/db";
import { Prisma } from "@/lib/generated/prisma/client";
import { filterSql, hasFilters } from "./filters";
import type { SearchFilters, VectorBackend, VectorHit, VectorRow } from "./types";

/**
 * Vector storage and nearest-neighbour search over item_vectors, on one of two paths chosen per
 * database at start (docs/decisions/026):
 *
 * - pgvector, where `CREATE EXTENSION vector` succeeds (PGlite through its extension; a
 *   PostgreSQL that has it): an HNSW index per model, a partial expression index over the stored
 *   REAL[] cast to vector(dims), so no second copy of the vector is stored. k = 100 in ~25 ms at
 *   100,000 vectors on PGlite; the index took 4 minutes to build there (bench search).
 * - portable, everywhere else (PostgreSQL without the extension, as in CI): every vector's
 *   `code` (one bit a dimension, signCode) is scanned for the nearest PORTABLE_CANDIDATES, then
 *   those rows' exact cosine is computed here from their stored floats. The scan reads every row
 *   of the model: ~40 ms at 100,000 vectors, ~350 ms at 1,000,000 on PostgreSQL 15 with two
 *   parallel workers (bench search). Exact whenever the model (within the filters) has no more
 *   rows than the candidates; recall@10 beyond that is in lib/search/README.md.
 */

/** What detection found, for the dashboard and the search answer. */
export interface VectorBackendStatus {
  backend: VectorBackend;
  /** The extension's version when pgvector is in use. */
  pgvectorVersion: string | null;
  /** Why the portable path is in use (the server's answer), or null. */
  reason: string | null;
}

/** Detection is one round trip or two, made once per database (keyed by its client). */
const detected = new WeakMap<object, Promise<VectorBackendStatus>>();

/**
 * The backend of this database, detected the first time it is asked (at start): pgvector when
 * the extension is installed, or can be (CREATE EXTENSION IF NOT EXISTS vector), else portable.
 * Never throws: any failure is the portable path, with the server's message as the reason.
 */
export function vectorBackendStatus(db: Database): Promise<VectorBackendStatus> {
  let status = detected.get(db.prisma);
  if (!status) {
    status = detect(db);
    detected.set(db.prisma, status);
  }
  return status;
}

export async function detectVectorBackend(db: Database): Promise<VectorBackend> {
  return (await vectorBackendStatus(db)).backend;
}

async function detect(db: Database): Promise<VectorBackendStatus> {
  try {
    const installed = await installedVersion(db);
    if (installed) return { backend: "pgvector", pgvectorVersion: installed, reason: null };
    const [available] = await db.prisma.$queryRaw<{ n: bigint }[]>`
      SELECT count(*) AS n FROM pg_available_extensions WHERE name = 'vector'`;
    // Asking only when the server has the extension keeps a failed CREATE out of its log.
    if (!available || Number(available.n) === 0) {
      return {
        backend: "portable",
        pgvectorVersion: null,
        reason: "pgvector is not installed on this database server",
      };
    }
    try {
      await db.prisma.$executeRawUnsafe("CREATE EXTENSION IF NOT EXISTS vector");
    } catch (err) {
      // Another process may have created it at the same moment (a unique violation here).
      const raced = await installedVersion(db);
      if (raced) return { backend: "pgvector", pgvectorVersion: raced, reason: null };
      return { backend: "portable", pgvectorVersion: null, reason: messageOf(err) };
    }
    return { backend: "pgvector", pgvectorVersion: await installedVersion(db), reason: null };
  } catch (err) {
    return { backend: "portable", pgvectorVersion: null, reason: messageOf(err) };
  }
}

async function installedVersion(db: Database): Promise<string | null> {
  const rows = await db.prisma.$queryRaw<{ v: string }[]>`
    SELECT extversion AS v FROM pg_extension WHERE extname = 'vector'`;
  return rows[0]?.v ?? null;
}

const messageOf = (err: unknown) =>
  (err as { meta?: { message?: string } })?.meta?.message ??
  (err instanceof Error ? err.message : String(err));

// ---------------------------------------------------------------------------------------------
// The per-model index

/**
 * pgvector's HNSW indexes `vector` up to 2,000 dimensions and `halfvec` (16-bit floats) up to
 * 4,000; a model with more (3,072-d text-embedding-3-large fits halfvec) beyond 4,000 is searched
 * on the portable path even where pgvector exists.
 */
const MAX_VECTOR_DIMS = 2_000;
const MAX_HALFVEC_DIMS = 4_000;
/** Dimensions a stored vector may have at all (the largest models in use have 4,096). */
export const MAX_DIMS = 16_000;

type IndexCast = "vector" | "halfvec";

function indexCast(dims: number): IndexCast | null {
  if (dims <= MAX_VECTOR_DIMS) return "vector";
  if (dims <= MAX_HALFVEC_DIMS) return "halfvec";
  return null;
}

export const modelIndexName = (modelId: number) => `item_vectors_hnsw_m${modelId}`;

export interface ModelIndex {
  backend: VectorBackend;
  /** The index searched by this model's queries; null on the portable path. */
  index: string | null;
  /** True when this call built it. */
  created: boolean;
  ms: number;
}

export interface EnsureIndexOptions {
  /**
   * maintenance_work_mem for the build (e.g. "1GB"): HNSW builds fast while its graph fits
   * (1,000,000 vectors of 512 dims need ~2.5 GB), and on much slower once it does not.
   */
  maintenanceWorkMem?: string;
}

/**
 * The model's HNSW index where pgvector is in use: a partial expression index, only this model's
 * rows, over `embedding::vector(dims)` with cosine distance, which the query in `nearest` names
 * exactly so the planner uses it. Idempotent; a build left invalid by a failed concurrent build
 * is dropped and made again. On PostgreSQL it is built CONCURRENTLY (writes and searches go on
 * meanwhile; meanwhile this model is searched by exact scan). On the portable path there is
 * nothing to build: the sign codes are stored with every vector.
 */
export async function ensureModelIndex(
  db: Database,
  modelId: number,
  dims: number,
  options: EnsureIndexOptions = {},
): Promise<ModelIndex> {
  checkModelId(modelId);
  checkDims(dims);
  const started = performance.now();
  const cast = indexCast(dims);
  if ((await detectVectorBackend(db)) === "portable" || !cast) {
    return { backend: "portable", index: null, created: false, ms: 0 };
  }
  const name = modelIndexName(modelId);
  const existing = await db.prisma.$queryRaw<{ valid: boolean }[]>`
    SELECT i.indisvalid AS valid FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid
    WHERE c.relname = ${name}`;
  if (existing[0]?.valid) return { backend: "pgvector", index: name, created: false, ms: 0 };
  if (existing[0]) await db.prisma.$executeRawUnsafe(`DROP INDEX IF EXISTS ${name}`);
  if (
    options.maintenanceWorkMem !== undefined &&
    !/^\d{1,6}\s*(kB|MB|GB)$/.test(options.maintenanceWorkMem)
  ) {
    throw new Error(
      `maintenanceWorkMem must be like "512MB" or "2GB", not ${JSON.stringify(options.maintenanceWorkMem)}`,
    );
  }
  // DDL takes no parameters: the id and dims are integers checked above.
  const concurrently = db.kind === "postgres" ? "CONCURRENTLY " : "";
  const create =
    `CREATE INDEX ${concurrently}IF NOT EXISTS ${name} ON item_vectors USING hnsw ` +
    `((embedding::${cast}(${dims})) ${cast}_cosine_ops) WHERE model_id = ${modelId}`;
  const memory = options.maintenanceWorkMem
    ? `SET maintenance_work_mem = '${options.maintenanceWorkMem}'`
    : null;
  if (db.pool) {
    // One connection for the setting and the build (CONCURRENTLY cannot run in a transaction).
    const client = await db.pool.connect();
    try {
      if (memory) await client.query(memory);
      await client.query(create);
    } finally {
      if (memory) await client.query("RESET maintenance_work_mem").catch(() => undefined);
      client.release();
    }
  } else {
    if (memory) await db.prisma.$executeRawUnsafe(memory);
    try {
      await db.prisma.$executeRawUnsafe(create);
    } finally {
      if (memory) await db.prisma.$executeRawUnsafe("RESET maintenance_work_mem");
    }
  }
  return { backend: "pgvector", index: name, created: true, ms: performance.now() - started };
}

/**
 * Detects the backend and makes the index of every model search or the embed stage may use
 * (all but retired ones): what start-up calls, so the dashboard shows the backend from the
 * first page.
 */
export async function prepareVectorSearch(
  db: Database,
  options: EnsureIndexOptions = {},
): Promise<{ status: VectorBackendStatus; indexes: (ModelIndex & { modelId: number })[] }> {
  const status = await vectorBackendStatus(db);
  const models = await db.prisma.$queryRaw<{ id: number; dims: number }[]>`
    SELECT id, dims FROM embedding_models WHERE state <> 'retired' ORDER BY id`;
  const indexes = [];
  for (const m of models) {
    indexes.push({ modelId: m.id, ...(await ensureModelIndex(db, m.id, m.dims, options)) });
  }
  return { status, indexes };
}

// ---------------------------------------------------------------------------------------------
// Storing

/** A vector's norm may be off unit length by this much (float32 rounding is ~1e-7). */
const UNIT_TOLERANCE = 1e-3;

export class VectorInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "VectorInputError";
  }
}

function checkModelId(modelId: number): void {
  if (!Number.isInteger(modelId) || modelId < 1 || modelId > 2_147_483_647) {
    throw new VectorInputError(`model id must be a positive integer, not ${modelId}`);
  }
}

function checkDims(dims: number): void {
  if (!Number.isInteger(dims) || dims < 1 || dims > MAX_DIMS) {
    throw new VectorInputError(`dims must be an integer from 1 to ${MAX_DIMS}, not ${dims}`);
  }
}

/**
 * Checks a vector and returns it at unit length: finite, `dims` long, not all zeros. A norm off 1
 * by float rounding is scaled back; one off by more is refused, since a provider answering
 * unnormalised vectors is a bug the caller should hear of, not a vector to fix silently.
 */
function unitVector(v: Float32Array, dims: number, what: string): Float32Array {
  if (!(v instanceof Float32Array)) throw new VectorInputError(`${what}: not a Float32Array`);
  if (v.length !== dims) {
    throw new VectorInputError(`${what}: ${v.length} dimensions, the model has ${dims}`);
  }
  let sum = 0;
  for (let i = 0; i < v.length; i++) sum += (v[i] as number) * (v[i] as number);
  if (!Number.isFinite(sum)) throw new VectorInputError(`${what}: not all numbers are finite`);
  const norm = Math.sqrt(sum);
  if (Math.abs(norm - 1) > UNIT_TOLERANCE) {
    throw new VectorInputError(`${what}: length ${norm.toFixed(4)}, not unit length`);
  }
  return norm === 1 ? v : v.map((x) => x / norm);
}

/** A float32 in the fewest digits that read back as the same float32 (9 significant). */
const vectorLiteral = (v: Float32Array, open: string, close: string) =>
  `${open}${Array.from(v, (x) => (x === 0 ? "0" : x.toPrecision(9))).join(",")}${close}`;

/**
 * The portable path's first pass, one bit a dimension. For a vector with a negative coordinate
 * (a sentence model's, centred near 0) the sign: 1 where the coordinate is ≥ 0, and rows rank by
 * Hamming distance, which orders them as the cosine of their ±1 sign vectors does. For a vector
 * with none (the lexical fallback's n-gram counts) signs would all be 1 and rank nothing
 * (recall@10 0.08 with 200 candidates on MSRP sentences): its bits mark the coordinates above 0
 * (the n-grams the text has), and rows rank by the cosine of those 0/1 vectors, |A ∩ B| / √|A|
 * for the query's fixed |B| (recall@10 0.86 there; random-hyperplane bits did worse, 0.81, as
 * every such vector lies in one narrow cone of the positive orthant).
 */
export function signCode(v: Float32Array): string {
  const presence = !hasNegative(v);
  let bits = "";
  for (let i = 0; i < v.length; i++) {
    const x = v[i] as number;
    bits += (presence ? x > 0 : x >= 0) ? "1" : "0";
  }
  return bits;
}

/** True when the vector has a coordinate below 0: its code is signs, ranked by Hamming. */
export function hasNegative(v: Float32Array): boolean {
  for (let i = 0; i < v.length; i++) if ((v[i] as number) < 0) return true;
  return false;
}

async function modelDims(db: Database, ids: number[]): Promise<Map<number, number>> {
  const rows = await db.prisma.$queryRaw<{ id: number; dims: number }[]>`
    SELECT id, dims FROM embedding_models WHERE id = ANY(${ids}::int[])`;
  return new Map(rows.map((r) => [r.id, r.dims]));
}

/**
 * Stores vectors, one row per (model, item): inserted, or replacing the stored one when its
 * item_version is not newer than the row's (an older version arriving late changes nothing).
 * Every vector is checked against its model's dims (embedding_models) before anything is
 * written: a wrong-length vector would fail the pgvector index's cast on insert, and on the
 * portable path corrupt every distance it took part in. Of several rows for one (model, item) in
 * a call the newest version is kept. Returns the rows written.
 */
export async function storeVectors(db: Database, rows: readonly VectorRow[]): Promise<number> {
  if (rows.length === 0) return 0;
  const ids = [...new Set(rows.map((r) => r.modelId))];
  for (const id of ids) checkModelId(id);
  const dims = await modelDims(db, ids);
  const newest = new Map<string, VectorRow>();
  for (const row of rows) {
    const what = `vector of ${JSON.stringify(row.entryKey)} (model ${row.modelId})`;
    const d = dims.get(row.modelId);
    if (d === undefined) throw new VectorInputError(`${what}: no such model in embedding_models`);
    if (typeof row.entryKey !== "string" || row.entryKey === "") {
      throw new VectorInputError(`${what}: the entry key is empty`);
    }
    if (!Number.isInteger(row.itemVersion) || row.itemVersion < 0) {
      throw new VectorInputError(`${what}: item version ${row.itemVersion} is not an integer ≥ 0`);
    }
    if (!(row.firstSeenAt instanceof Date) || Number.isNaN(row.firstSeenAt.getTime())) {
      throw new VectorInputError(`${what}: first seen is not a valid date`);
    }
    const checked = { ...row, vector: unitVector(row.vector, d, what) };
    const key = `${row.modelId}\u0000${row.entryKey}`;
    const held = newest.get(key);
    if (!held || held.itemVersion <= row.itemVersion) newest.set(key, checked);
  }
  const list = [...newest.values()];
  const col = <T>(f: (r: VectorRow) => T) => list.map(f);
  return db.prisma.$executeRaw`
    INSERT INTO item_vectors AS iv (model_id, entry_key, item_version, embedding, code, lang,
                                    source_id, first_seen_at)
    SELECT m, k, v, e::real[], c::varbit, l, s, f
    FROM unnest(${col((r) => r.modelId)}::int[], ${col((r) => r.entryKey)}::text[],
                ${col((r) => r.itemVersion)}::int[],
                ${col((r) => vectorLiteral(r.vector, "{", "}"))}::text[],
                ${col((r) => signCode(r.vector))}::text[], ${col((r) => r.lang)}::text[],
                ${col((r) => r.sourceId)}::text[],
                ${col((r) => r.firstSeenAt.toISOString())}::timestamptz[])
         AS x(m, k, v, e, c, l, s, f)
    ON CONFLICT (model_id, entry_key) DO UPDATE SET
      item_version = excluded.item_version, embedding = excluded.embedding,
      code = excluded.code, lang = excluded.lang, source_id = excluded.source_id,
      first_seen_at = excluded.first_seen_at, created_at = now()
    WHERE iv.item_version <= excluded.item_version`;
}

/** Deletes the vectors of these items, of every model or of one. Returns the rows deleted. */
export async function deleteVectors(
  db: Database,
  entryKeys: readonly string[],
  modelId?: number,
): Promise<number> {
  if (entryKeys.length === 0) return 0;
  if (modelId !== undefined) checkModelId(modelId);
  return db.prisma.$executeRaw`
    DELETE FROM item_vectors
    WHERE entry_key = ANY(${[...entryKeys]}::text[])
      AND (${modelId ?? null}::int IS NULL OR model_id = ${modelId ?? null}::int)`;
}

// ---------------------------------------------------------------------------------------------
// Searching

/**
 * Rows the portable path's Hamming pass keeps for the exact cosine (at least; 2k when more are
 * asked for). On 100,000 clustered 512-d vectors the exact top 10 was always among the nearest
 * 100 by Hamming distance, and 86 % of it among the nearest 50 (recall@10 in the README); each
 * candidate costs ~0.1 ms to read (its embedding is detoasted) and score, so 200 is ~20 ms.
 */
export const PORTABLE_CANDIDATES = 200;
/** At most this many neighbours a query (the hybrid search asks for 100). */
export const MAX_K = 1_000;

export interface NearestQuery {
  modelId: number;
  dims: number;
  /** Unit length, `dims` long. */
  vector: Float32Array;
  k: number;
  filters?: SearchFilters;
  /**
   * Only items in these languages (or of no known language): a model that reads English only
   * gives a Bangla text a vector that means nothing (every word its one unknown piece), close
   * to other such vectors by chance; those are left out rather than offered as meaning.
   */
  languages?: readonly string[];
  /** Force a path (the benchmark compares them); default: the database's. */
  backend?: VectorBackend;
  /**
   * pgvector's hnsw.ef_search, the candidates its graph walk keeps (default max(100, k)): more is
   * slower and finds more. At 100 the exact top 10 was found 0.999 of the time on MSRP sentences
   * by the shipped model (0.982 by the lexical fallback); hybrid search asks k = 100, whose top
   * 10 is then that same walk's.
   */
  efSearch?: number;
  /** The portable path's Hamming candidates (default max(PORTABLE_CANDIDATES, 2k)). */
  candidates?: number;
}

/**
 * The k stored vectors of the model nearest to `vector` by cosine, within the filters, nearest
 * first. pgvector: the model's HNSW index (an iterative scan when filtered, so a filter that
 * leaves few rows still fills k; if it cannot, an exact scan of the filtered rows); portable:
 * Hamming pass then exact cosine. Either way the similarities returned are exact cosines.
 */
export async function nearest(db: Database, query: NearestQuery): Promise<VectorHit[]> {
  checkModelId(query.modelId);
  checkDims(query.dims);
  if (!Number.isInteger(query.k) || query.k < 1 || query.k > MAX_K) {
    throw new VectorInputError(`k must be an integer from 1 to ${MAX_K}, not ${query.k}`);
  }
  const vector = unitVector(query.vector, query.dims, "query vector");
  const backend = query.backend ?? (await detectVectorBackend(db));
  const cast = indexCast(query.dims);
  if (backend === "pgvector" && cast) return nearestPgvector(db, query, vector, cast);
  return nearestPortable(db, query, vector);
}

async function nearestPgvector(
  db: Database,
  query: NearestQuery,
  vector: Float32Array,
  cast: IndexCast,
): Promise<VectorHit[]> {
  // The index's own expression, with the model id as a literal: a partial index is used only
  // when the planner can prove `model_id = <id>` from the query, which a parameter does not let
  // it do in a generic plan. Both are integers checked by `nearest`.
  const type = Prisma.raw(`${cast}(${query.dims})`);
  const model = Prisma.raw(String(query.modelId));
  const q = vectorLiteral(vector, "[", "]");
  const filters = filterSql(query.filters, query.languages);
  const efSearch = query.efSearch ?? Math.max(100, query.k);
  if (!Number.isInteger(efSearch) || efSearch < 1 || efSearch > 1_000) {
    throw new VectorInputError(`efSearch must be an integer from 1 to 1000, not ${efSearch}`);
  }
  const filtered = hasFilters(query.filters, query.languages);
  // relaxed_order: pgvector 0.8's iterative scan goes on past ef_search until k rows pass the
  // filters (or hnsw.max_scan_tuples, 20,000, were visited); rows come back nearly in order, so
  // they are sorted again by their exact distance.
  //
  // enable_sort off: the index is the only ordered path to the k nearest, and with it the
  // planner never sorts the model's rows instead. Without it, a table whose statistics are old
  // or missing (PGlite has no autovacuum; 3 rows estimated for 100,000) was planned as a scan
  // of every row and a sort: exact, and a hundred times slower. Where the index is not built yet
  // the sort is still the only plan, and it runs.
  const [, rows] = await db.prisma.$transaction([
    db.prisma.$queryRaw`
      SELECT set_config('hnsw.ef_search', ${String(efSearch)}, true),
             set_config('hnsw.iterative_scan', ${filtered ? "relaxed_order" : "off"}, true),
             set_config('enable_sort', 'off', true)`,
    db.prisma.$queryRaw<{ entry_key: string; distance: number }[]>`
      WITH hits AS MATERIALIZED (
        SELECT entry_key, embedding::${type} <=> ${q}::${type} AS distance
        FROM item_vectors
        WHERE model_id = ${model} ${filters}
        ORDER BY embedding::${type} <=> ${q}::${type}
        LIMIT ${query.k}
      )
      SELECT entry_key, distance FROM hits ORDER BY distance, entry_key`,
  ]);
  if (rows.length < query.k && filtered) {
    // The iterative scan gave up before k rows passed the filters: few rows pass them, so an
    // exact scan of those is the right plan (and still correct if not).
    const exact = await db.prisma.$transaction([
      db.prisma.$queryRaw`SELECT set_config('enable_indexscan', 'off', true)`,
      db.prisma.$queryRaw<{ entry_key: string; distance: number }[]>`
        SELECT entry_key, embedding::${type} <=> ${q}::${type} AS distance
        FROM item_vectors
        WHERE model_id = ${model} ${filters}
        ORDER BY distance, entry_key
        LIMIT ${query.k}`,
    ]);
    return exact[1].map(toHit);
  }
  return rows.map(toHit);
}

const toHit = (r: { entry_key: string; distance: number }): VectorHit => ({
  entryKey: r.entry_key,
  similarity: 1 - Number(r.distance),
});

async function nearestPortable(
  db: Database,
  query: NearestQuery,
  vector: Float32Array,
): Promise<VectorHit[]> {
  const candidates = query.candidates ?? Math.max(PORTABLE_CANDIDATES, 2 * query.k);
  if (!Number.isInteger(candidates) || candidates < query.k || candidates > 20_000) {
    throw new VectorInputError(
      `candidates must be an integer from k (${query.k}) to 20000, not ${candidates}`,
    );
  }
  // The embeddings are read in binary (array_send) only for the candidates, after the LIMIT:
  // in the select list of the scan itself, every row's would be detoasted before the sort.
  // Base64 text rather than bytea: PGlite's Prisma adapter takes 5× longer over a bytea
  // (400 rows of 4 kB: 400 ms against 70 ms); on PostgreSQL the two cost the same.
  const code = signCode(vector);
  const order = hasNegative(vector)
    ? Prisma.sql`bit_count(code # ${code}::varbit)`
    : Prisma.sql`bit_count(code & ${code}::varbit)::float8 / sqrt(greatest(bit_count(code), 1)) DESC`;
  const rows = await db.prisma.$queryRaw<{ entry_key: string; bytes: string }[]>`
    WITH near AS MATERIALIZED (
      SELECT entry_key, embedding
      FROM item_vectors
      WHERE model_id = ${query.modelId} ${filterSql(query.filters, query.languages)}
      ORDER BY ${order}
      LIMIT ${candidates}
    )
    SELECT entry_key, encode(array_send(embedding), 'base64') AS bytes FROM near`;
  const hits = rows.map((r) => ({
    entryKey: r.entry_key,
    similarity: dotWithBinaryArray(vector, Buffer.from(r.bytes, "base64")),
  }));
  hits.sort(
    (a, b) =>
      b.similarity - a.similarity ||
      (a.entryKey < b.entryKey ? -1 : a.entryKey > b.entryKey ? 1 : 0),
  );
  return hits.slice(0, query.k);
}

/**
 * The dot product of `q` with a real[] in PostgreSQL's binary array format (array_send): a
 * header of ndim, has-nulls flag and element type, then per dimension its size and lower bound,
 * then per element a 4-byte length and a big-endian float4.
 */
export function dotWithBinaryArray(q: Float32Array, bytes: Uint8Array): number {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const ndim = view.getInt32(0);
  if (ndim !== 1) throw new Error(`stored embedding has ${ndim} dimensions of array, not 1`);
  const length = view.getInt32(12);
  if (length !== q.length) {
    throw new Error(`stored embedding has ${length} numbers, the query ${q.length}`);
  }
  let offset = 20;
  let dot = 0;
  for (let i = 0; i < length; i++) {
    dot += view.getFloat32(offset + 4) * (q[i] as number);
    offset += 8;
  }
  return dot;
}
