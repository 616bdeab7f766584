/**
 * Writer benchmark: how many observations per second the storage writer takes, and how far that
 * is from the floor.
 *
 *   npm run -s bench -- writer [--target pg,pglite] [--runs R] [--count N] [--json]
 *                              [--concurrency C] [--batch B]
 *
 * What is measured. N deliveries (default 100,000), generated up front from a seeded PRNG so
 * every run writes the same workload: new items (some first seen by the fallback page
 * observer), exact duplicates (the same payload again from another collector), upgrades (the
 * authoritative observation of an item the fallback created, adding category, breaking and
 * instruments) and edits (edit() with a higher revision). References to earlier items are only
 * made once those items have been settled for a while, so concurrent delivery does not reorder
 * an item's own history and each step has one expected result (new → inserted, duplicate →
 * unchanged, upgrade → upgraded, edit → updated), checked against news_events afterwards (a
 * duplicate of a duplicate is a repeat sighting, counted on the event it repeats: decision 011).
 *
 *   1. writer: every delivery goes through the real writer: validation, entry key, the guarded
 *      upsert and its audit row, each delivery with its own decision. By default in batches of
 *      B through writeBatch (rounds of distinct items, each round's statements spread over the
 *      pool as writeBatch does in production); with --batch 1, one observe/edit call per
 *      delivery, C in flight on PostgreSQL (default 8, pool of C) and sequentially on PGlite
 *      (one connection).
 *   2. raw: news and news_events are truncated, then the very rows the writer's audit trail
 *      holds are written again with batched INSERT … ON CONFLICT (B per statement, default
 *      1,000; C statements in flight). One statement per batch appends every audit row and
 *      upserts the batch's news rows, each key once (the batch's last observation of it wins),
 *      and a conflict simply overwrites. No validation, no merge rule, no decision.
 *
 * Each run is a writer phase then a raw phase, each from empty tables, R runs (default 5)
 * alternating writer, raw, writer, raw …, so a slow spell of the shared machine hits both; each
 * run and the min/median/max of both rates and of their ratio are printed. The ratio is
 * writer/raw per run; its median is the figure to compare.
 *
 * Why the baseline is fair. Both phases start from empty tables with the same indexes, in the
 * same database, through the same Prisma client and pool, and write the same rows: the same
 * audit rows with the same payloads (and sighting counts), and the same set of news keys, first
 * inserted and then hit again by later observations of the same items (fewer times in raw,
 * because keys repeated within a batch are folded into one row: that is exactly the saving
 * batching is for). The raw phase is handed its rows ready-made (read back from the writer's
 * audit trail before its clock starts), so it measures database work only. It is the floor:
 * what it would cost to store these rows if the writer needed to make no decisions and paid one
 * round trip per thousand rows.
 *
 * Where (--target, default pg when DATABASE_URL is set, else pglite; "pg,pglite" runs both, one
 * after the other): embedded PGlite in a temporary directory, or a scratch database
 * (ww_bench_<random>) created on the DATABASE_URL server; either is removed at the end, even
 * when the run fails or is interrupted. Results go to stdout (with --json one line per target),
 * progress to stderr.
 */
import os from "node:os";
import { parseArgs } from "node:util";
import { config } from "@/lib/config";
import type { Database } from "@/lib/db";
import { createScratchDatabase } from "@/lib/scratchDatabase";
import {
  edit,
  type ObservationInput,
  observe,
  type WriteResult,
  writeBatch,
} from "@/workers/store";
import { normalize } from "@/workers/store/observation";

const SEED = 0x5eed_2026;
const SOURCES = 20;
/** A step only refers to an item untouched for this many deliveries (≫ concurrency). */
const SETTLE = 256;
/** Duplicates and edits pick among the most recently created items. */
const WINDOW = 5_000;
/** Share of each step; "new" takes the rest (and any step that finds no suitable item). */
const MIX = { duplicate: 0.3, upgrade: 0.15, edit: 0.15 } as const;
/** Share of new items first seen by the fallback page observer. */
const FALLBACK_SHARE = 0.4;

type Step = "new" | "duplicate" | "upgrade" | "edit";
const STEPS: Step[] = ["new", "duplicate", "upgrade", "edit"];
const EXPECTED: Record<Step, WriteResult> = {
  new: "inserted",
  duplicate: "unchanged",
  upgrade: "upgraded",
  edit: "updated",
};

interface Delivery {
  step: Step;
  call: "observe" | "edit";
  input: ObservationInput;
}

type Target = "pg" | "pglite";
const TARGETS: readonly Target[] = ["pg", "pglite"];

interface Options {
  targets: Target[];
  runs: number;
  count: number;
  json: boolean;
  concurrency: number;
  batch: number;
}

interface Run {
  writerSeconds: number;
  rawSeconds: number;
  writerObsPerSec: number;
  rawObsPerSec: number;
  /** writer/raw throughput: raw seconds over writer seconds. */
  ratio: number;
}

/** The --json line of one target: medians of its runs (the ratio is the median run ratio). */
interface Result {
  db: "pglite" | "postgres";
  count: number;
  writerObsPerSec: number;
  rawObsPerSec: number;
  ratio: number;
  runs: { writerObsPerSec: number; rawObsPerSec: number; ratio: number }[];
}

const log = (msg: string) => process.stderr.write(`${msg}\n`);
const fmt = (n: number, digits = 0) =>
  n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });

export async function run(args: string[]): Promise<void> {
  const url = config().DATABASE_URL;
  const opts = parseOptions(args, url);

  log(`generating ${fmt(opts.count)} deliveries (seed ${SEED.toString(16)})`);
  const deliveries = makeWorkload(opts.count, SEED);
  const planned = tally(deliveries.map((d) => EXPECTED[d.step]));
  const validationSeconds = timeValidation(deliveries);

  for (const target of opts.targets) {
    const concurrency = target === "pg" ? opts.concurrency : 1;
    if (target === "pglite" && opts.concurrency !== 1) {
      log("PGlite has one connection: running sequentially");
    }
    const scratch = await openScratch(target === "pg" ? url : undefined, concurrency);
    try {
      const measured = await runTarget(scratch.db, deliveries, planned, opts, concurrency);
      const result = summarize(scratch.db.kind, opts.count, measured.runs);
      if (opts.json) process.stdout.write(`${JSON.stringify(result)}\n`);
      else report({ result, scratch, concurrency, opts, validationSeconds, planned, ...measured });
    } finally {
      await scratch.cleanup();
    }
  }
}

/** R runs of writer then raw on one database, each phase from empty tables. */
async function runTarget(
  db: Database,
  deliveries: Delivery[],
  planned: Map<string, number>,
  opts: Options,
  concurrency: number,
) {
  log(`database: ${db.kind}; concurrency ${concurrency}, batch ${opts.batch}, ${opts.runs} runs`);
  await db.prisma.$executeRawUnsafe(
    `INSERT INTO sources (id, name, kind)
     SELECT 'bench-' || i, 'Bench source ' || i, 'stream' FROM generate_series(0, $1::int - 1) i`,
    SOURCES,
  );
  const runs: Run[] = [];
  let trail: AuditRow[] | undefined;
  let recorded = new Map<string, number>();
  let writerNews = 0;
  let raw = { batches: 0, newsRows: 0, retries: 0 };
  for (let i = 1; i <= opts.runs; i++) {
    await emptyTables(db);
    const writerSeconds = await runWriter(db, deliveries, concurrency, opts.batch);
    const events = await eventsByResult(db);
    const delivered = sum(events.sightings);
    if (delivered !== opts.count) {
      throw new Error(
        `writer phase: ${delivered} deliveries in news_events, expected ${opts.count}`,
      );
    }
    const mismatch = [...new Set([...planned.keys(), ...events.sightings.keys()])].filter(
      (k) => (planned.get(k) ?? 0) !== (events.sightings.get(k) ?? 0),
    );
    if (mismatch.length > 0) {
      throw new Error(
        `writer phase: results differ from the plan (${mismatch
          .map((k) => `${k} ${events.sightings.get(k) ?? 0}, planned ${planned.get(k) ?? 0}`)
          .join("; ")})`,
      );
    }
    recorded = events.sightings;
    writerNews = await countRows(db, "news");
    const eventRows = sum(events.rows);
    // The workload is the same every run, so the first run's audit trail stands for all.
    trail ??= await readAuditTrail(db);

    await emptyTables(db);
    const r = await runRaw(db, trail, opts.batch, concurrency);
    raw = r;
    const rawEvents = await eventsByResult(db);
    const rawNews = await countRows(db, "news");
    if (sum(rawEvents.rows) !== eventRows || sum(rawEvents.sightings) !== opts.count) {
      throw new Error(
        `raw phase: ${sum(rawEvents.rows)} news_events rows for ${sum(rawEvents.sightings)} ` +
          `deliveries, expected ${eventRows} for ${opts.count}`,
      );
    }
    if (rawNews !== writerNews) {
      throw new Error(`raw phase: ${rawNews} news rows, expected ${writerNews}`);
    }

    const run: Run = {
      writerSeconds,
      rawSeconds: r.seconds,
      writerObsPerSec: opts.count / writerSeconds,
      rawObsPerSec: opts.count / r.seconds,
      ratio: r.seconds / writerSeconds,
    };
    runs.push(run);
    log(
      `  run ${i}/${opts.runs}: writer ${fmt(writerSeconds, 2)} s (${fmt(run.writerObsPerSec)}/s), ` +
        `raw ${fmt(r.seconds, 2)} s (${fmt(run.rawObsPerSec)}/s), ratio ${fmt(run.ratio, 3)}`,
    );
  }
  return { runs, recorded, writerNews, raw };
}

function summarize(db: Result["db"], count: number, runs: Run[]): Result {
  return {
    db,
    count,
    writerObsPerSec: round(median(runs.map((r) => r.writerObsPerSec)), 1),
    rawObsPerSec: round(median(runs.map((r) => r.rawObsPerSec)), 1),
    ratio: round(median(runs.map((r) => r.ratio)), 4),
    runs: runs.map((r) => ({
      writerObsPerSec: round(r.writerObsPerSec, 1),
      rawObsPerSec: round(r.rawObsPerSec, 1),
      ratio: round(r.ratio, 4),
    })),
  };
}

// ---------------------------------------------------------------------------------------------
// The two phases

async function runWriter(db: Database, deliveries: Delivery[], concurrency: number, batch: number) {
  const started = performance.now();
  const check = (out: { result: WriteResult; reason?: string }) => {
    if (out.result === "rejected") throw new Error(`writer rejected a delivery: ${out.reason}`);
  };
  if (batch === 1) {
    await forEachLimited(deliveries, concurrency, async (d) => {
      check(d.call === "edit" ? await edit(db, d.input) : await observe(db, d.input));
    });
  } else {
    // writeBatch keeps each item's deliveries in order within a batch; batches in flight at once
    // must not share an item, so at most SETTLE deliveries may be in flight together.
    const batches: Delivery[][] = [];
    for (let i = 0; i < deliveries.length; i += batch) batches.push(deliveries.slice(i, i + batch));
    const lanes = writerLanes(concurrency, batch);
    await forEachLimited(batches, lanes, async (b) => {
      const outs = await writeBatch(
        db,
        b.map((d) => ({ kind: d.call, input: d.input })),
      );
      outs.forEach(check);
    });
  }
  return (performance.now() - started) / 1000;
}

function writerLanes(concurrency: number, batch: number): number {
  return Math.max(1, Math.min(concurrency, Math.floor(SETTLE / batch)));
}

/** For the report: the writer's validation and keying alone (normalize, no database). */
function timeValidation(deliveries: Delivery[]): number {
  const started = performance.now();
  for (const d of deliveries) normalize(d.input, d.call);
  return (performance.now() - started) / 1000;
}

/** One audit row as the writer stored it, ready to be written again. */
interface AuditRow {
  entryKey: string;
  /** The news_events row (without id and received_at) as JSON text. */
  event: string;
  /** The observation in news's column names (news_events.payload) as JSON text. */
  payload: string;
}

async function readAuditTrail(db: Database): Promise<AuditRow[]> {
  const rows: AuditRow[] = [];
  let after = 0n;
  for (;;) {
    const page = await db.prisma.$queryRaw<
      { id: bigint; entry_key: string; event: string; payload: string }[]
    >`
      SELECT e.id, e.entry_key, (to_jsonb(e) - 'id' - 'received_at')::text AS event,
             e.payload::text AS payload
      FROM news_events e WHERE e.id > ${after} ORDER BY e.id LIMIT 10000`;
    if (page.length === 0) return rows;
    for (const r of page) rows.push({ entryKey: r.entry_key, event: r.event, payload: r.payload });
    after = BigInt(page[page.length - 1]?.id ?? after);
  }
}

// One statement per batch: append the audit rows, upsert the news rows. News rows are sorted by
// key so concurrent batches lock rows in the same order (no deadlocks).
const RAW_BATCH_SQL = `
  WITH events AS (
    INSERT INTO news_events (entry_key, source_id, collector, origin, kind, observed_at, revision,
                             payload, result, version, sightings, last_seen_at)
    SELECT entry_key, source_id, collector, origin, kind, observed_at, revision,
           payload, result, version, sightings, last_seen_at
    FROM jsonb_populate_recordset(NULL::news_events, $1::jsonb)
  )
  INSERT INTO news AS n (
    entry_key, source_id, canonical_id, quality,
    title, title_stamp, link, link_stamp, summary, summary_stamp, category, category_stamp,
    language, published_at, breaking, instruments, revision,
    version, content_hash, first_seen_at, first_source, first_collector, last_result
  )
  SELECT r.entry_key, r.source_id, r.canonical_id, r.quality,
         r.title, r.title_stamp, r.link, r.link_stamp, r.summary, r.summary_stamp,
         r.category, r.category_stamp, r.language, r.published_at, r.breaking, r.instruments,
         r.revision, 1, news_content_hash(r), r.first_seen_at, r.first_source, r.first_collector,
         'inserted'
  FROM jsonb_populate_recordset(NULL::news, $2::jsonb) AS r
  ORDER BY r.entry_key
  ON CONFLICT (entry_key) DO UPDATE SET
    (quality, title, title_stamp, link, link_stamp, summary, summary_stamp, category,
     category_stamp, language, published_at, breaking, instruments, revision, content_hash) =
    (excluded.quality, excluded.title, excluded.title_stamp, excluded.link, excluded.link_stamp,
     excluded.summary, excluded.summary_stamp, excluded.category, excluded.category_stamp,
     excluded.language, excluded.published_at, excluded.breaking, excluded.instruments,
     excluded.revision, excluded.content_hash),
    version = n.version + 1,
    last_result = 'updated',
    updated_at = now()`;

async function runRaw(db: Database, rows: AuditRow[], batchSize: number, concurrency: number) {
  const batches: AuditRow[][] = [];
  for (let i = 0; i < rows.length; i += batchSize) batches.push(rows.slice(i, i + batchSize));
  let newsRows = 0;
  let retries = 0;
  const started = performance.now();
  await forEachLimited(batches, concurrency, async (batch) => {
    const news = new Map<string, string>(); // within a batch each key once: the last one wins
    for (const r of batch) news.set(r.entryKey, r.payload);
    newsRows += news.size;
    const events = `[${batch.map((r) => r.event).join(",")}]`;
    const upserts = `[${[...news.values()].join(",")}]`;
    for (let attempt = 1; ; attempt++) {
      try {
        await db.prisma.$executeRawUnsafe(RAW_BATCH_SQL, events, upserts);
        break;
      } catch (err) {
        // A single statement rolls back whole, so a deadlock victim can simply go again.
        if (attempt >= 5 || !/deadlock|40P01/i.test(String(err))) throw err;
        retries++;
      }
    }
  });
  return {
    seconds: (performance.now() - started) / 1000,
    batches: batches.length,
    newsRows,
    retries,
  };
}

// ---------------------------------------------------------------------------------------------
// The workload

interface Item {
  sourceId: string;
  link: string;
  title: string;
  authoritative: boolean;
  revision: number;
  /** The item's latest non-duplicate observation: what a duplicate repeats. */
  last: ObservationInput;
  /** Index of the last delivery that referred to it. */
  touched: number;
}

const WORDS = [
  ...["market", "rates", "central", "bank", "inflation", "election", "minister", "shares"],
  ...["oil", "gas", "storm", "flood", "court", "ruling", "talks", "strike", "border", "trade"],
  ...["exports", "energy", "budget", "vote", "port", "rail", "factory", "harvest"],
];
const CATEGORIES = ["markets", "politics", "world", "business", "energy", "weather", "sport"];
const TICKERS = ["AAPL", "MSFT", "TSLA", "BRENT", "EURUSD", "GOLD", "SPX", "NVDA", "GP", "BATBC"];

/** The deliveries of one run: deterministic for a given count and seed. */
export function makeWorkload(count: number, seed: number): Delivery[] {
  const rand = mulberry32(seed);
  const int = (n: number) => Math.floor(rand() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)] as T;
  const words = (n: number) => Array.from({ length: n }, () => pick(WORDS)).join(" ");

  const items: Item[] = [];
  const awaitingUpgrade: Item[] = []; // fallback-only items, oldest first
  const out: Delivery[] = [];
  const epoch = Date.UTC(2026, 0, 1);

  for (let i = 0; i < count; i++) {
    const observedAt = new Date(epoch + i * 50);
    const settled = (it: Item | undefined): it is Item => !!it && it.touched <= i - SETTLE;
    const recentSettled = (): Item | undefined => {
      for (let tries = 0; tries < 3; tries++) {
        const it = items[items.length - 1 - int(Math.min(WINDOW, items.length))];
        if (settled(it)) return it;
      }
      return undefined;
    };
    const authoritative = (it: Item, revision: number, title: string): ObservationInput => ({
      sourceId: it.sourceId,
      collector: "A",
      origin: rand() < 0.7 ? "primary" : "poll",
      link: it.link,
      title,
      summary: `${title}. ${words(30)}.`,
      category: pick(CATEGORIES),
      breaking: rand() < 0.1,
      instruments: Array.from({ length: int(4) }, () => pick(TICKERS)),
      language: rand() < 0.8 ? "en" : "bn",
      publishedAt: new Date(observedAt.getTime() - int(60_000)),
      revision,
      observedAt,
    });

    let delivery: Delivery | undefined;
    const r = rand();
    if (r < MIX.duplicate) {
      const it = recentSettled();
      if (it) {
        const other = it.last.origin === "fallback" ? "page-2" : "B";
        delivery = {
          step: "duplicate",
          call: "observe",
          input: { ...it.last, collector: other, observedAt },
        };
        it.touched = i;
      }
    } else if (r < MIX.duplicate + MIX.upgrade) {
      const it = awaitingUpgrade[0];
      if (settled(it)) {
        awaitingUpgrade.shift();
        it.last = authoritative(it, 1, it.title);
        it.authoritative = true;
        it.revision = 1;
        it.touched = i;
        delivery = { step: "upgrade", call: "observe", input: it.last };
      }
    } else if (r < MIX.duplicate + MIX.upgrade + MIX.edit) {
      const it = recentSettled();
      if (it?.authoritative) {
        it.revision += 1;
        it.last = authoritative(it, it.revision, `${it.title} (update ${it.revision})`);
        it.touched = i;
        delivery = { step: "edit", call: "edit", input: it.last };
      }
    }
    if (!delivery) {
      const n = items.length;
      const sourceId = `bench-${int(SOURCES)}`;
      const link = `https://news.example/${sourceId}/${n}`;
      const title = `${words(6)} ${n}`;
      const fallback: ObservationInput = {
        sourceId,
        collector: "page",
        origin: "fallback",
        link,
        title,
        observedAt,
      };
      const it: Item = {
        sourceId,
        link,
        title,
        authoritative: false,
        revision: 1,
        last: fallback,
        touched: i,
      };
      if (rand() >= FALLBACK_SHARE) {
        it.authoritative = true;
        it.last = authoritative(it, 1, title);
      }
      if (!it.authoritative) awaitingUpgrade.push(it);
      items.push(it);
      delivery = { step: "new", call: "observe", input: it.last };
    }
    out.push(delivery);
  }
  return out;
}

/** mulberry32: a small, fast, seedable PRNG (deterministic across runs and platforms). */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

// ---------------------------------------------------------------------------------------------
// The scratch database

interface Scratch {
  db: Database;
  label: string;
  cleanup(): Promise<void>;
}

/** A fresh, migrated database that cleanup() removes; also removed on SIGINT/SIGTERM. */
async function openScratch(serverUrl: string | undefined, poolSize: number): Promise<Scratch> {
  const scratch = await createScratchDatabase("ww_bench", serverUrl, { poolSize });
  const label = scratch.db.location;
  let done: Promise<void> | undefined;
  const cleanup = () => {
    done ??= (async () => {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
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
  return { db: scratch.db, label, cleanup };
}

/** Empty tables for the next phase, without the previous phase's dirty pages pending. */
async function emptyTables(db: Database): Promise<void> {
  await db.prisma.$executeRawUnsafe("TRUNCATE news, news_events RESTART IDENTITY");
  // Best effort: CHECKPOINT needs superuser (or pg_checkpoint).
  await db.prisma.$executeRawUnsafe("CHECKPOINT").catch(() => undefined);
}

/** news_events by result: rows, and the deliveries they stand for (sightings). */
async function eventsByResult(db: Database) {
  const rows = await db.prisma.$queryRaw<{ result: string; n: number; sightings: number }[]>`
    SELECT result, count(*)::int AS n, sum(sightings)::int AS sightings
    FROM news_events GROUP BY result`;
  return {
    rows: new Map(rows.map((r) => [r.result, Number(r.n)])),
    sightings: new Map(rows.map((r) => [r.result, Number(r.sightings)])),
  };
}

async function countRows(db: Database, table: "news" | "news_events"): Promise<number> {
  const rows = await db.prisma.$queryRawUnsafe<{ n: number }[]>(
    `SELECT count(*)::int AS n FROM ${table}`,
  );
  return Number(rows[0]?.n ?? 0);
}

// ---------------------------------------------------------------------------------------------
// Small helpers

/** Runs fn over items with at most `limit` in flight, in order of start (a tiny p-limit). */
async function forEachLimited<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  let failed = false;
  const lane = async () => {
    while (!failed && next < items.length) {
      const item = items[next++] as T;
      try {
        await fn(item);
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, limit) }, lane));
}

function tally(results: string[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const r of results) m.set(r, (m.get(r) ?? 0) + 1);
  return m;
}

const sum = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
const round = (x: number, digits: number) => Math.round(x * 10 ** digits) / 10 ** digits;

function median(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

function usageError(message: string): Error {
  const err = new Error(message);
  err.name = "UsageError";
  return err;
}

function parseOptions(args: string[], url: string | undefined): Options {
  const { values } = parseArgs({
    args,
    options: {
      target: { type: "string" },
      runs: { type: "string", default: "5" },
      count: { type: "string", default: "100000" },
      json: { type: "boolean", default: false },
      concurrency: { type: "string", default: "8" },
      batch: { type: "string", default: "1000" },
    },
    strict: true,
  });
  const positive = (name: string, v: string) => {
    const n = Number(v.replaceAll("_", ""));
    if (!Number.isInteger(n) || n < 1) throw usageError(`--${name} must be a positive integer`);
    return n;
  };
  const targets = (values.target ?? (url ? "pg" : "pglite")).split(",").map((t) => t.trim());
  for (const t of targets) {
    if (!TARGETS.includes(t as Target)) {
      throw usageError(`--target takes ${TARGETS.join(", ")} or both ("pg,pglite"), not "${t}"`);
    }
  }
  if (targets.includes("pg") && !url) {
    throw usageError(
      "--target pg needs DATABASE_URL: the PostgreSQL server to make a scratch database on",
    );
  }
  return {
    targets: [...new Set(targets)] as Target[],
    runs: positive("runs", values.runs),
    count: positive("count", values.count),
    json: values.json,
    concurrency: positive("concurrency", values.concurrency),
    batch: positive("batch", values.batch),
  };
}

function report(r: {
  result: Result;
  scratch: Scratch;
  concurrency: number;
  opts: Options;
  validationSeconds: number;
  runs: Run[];
  raw: { batches: number; newsRows: number; retries: number };
  planned: Map<string, number>;
  recorded: Map<string, number>;
  writerNews: number;
}): void {
  const { result, opts } = r;
  const load = () =>
    os
      .loadavg()
      .map((x) => x.toFixed(1))
      .join(" ");
  const spread = (xs: number[], digits: number) => {
    const sorted = [...xs].sort((a, b) => a - b);
    return [sorted[0] as number, median(xs), sorted[sorted.length - 1] as number]
      .map((x) => fmt(x, digits).padStart(9))
      .join("  ");
  };
  const lines = [
    `writer benchmark on ${result.db} (${r.scratch.label})`,
    `  ${fmt(result.count)} observations, ${opts.batch === 1 ? `one call each, ${r.concurrency} in flight` : `writeBatch of ${fmt(opts.batch)}, ${writerLanes(r.concurrency, opts.batch)} batch(es) in flight`}, ` +
      `pool ${r.concurrency}, seed ${SEED.toString(16)}, ${opts.runs} runs alternating writer and raw`,
    `  raw: ${fmt(r.raw.batches)} batch(es) of ≤${fmt(opts.batch)}, ${fmt(r.raw.newsRows)} news upserts, ` +
      `${r.concurrency} in flight${r.raw.retries ? `, ${r.raw.retries} deadlock retries in the last run` : ""}`,
    `  load average at the end: ${load()} (${os.cpus().length} cores)`,
    "",
    "  run    writer s   writer obs/s     raw s    raw obs/s   writer/raw",
    ...r.runs.map(
      (run, i) =>
        `  ${String(i + 1).padStart(3)}  ${fmt(run.writerSeconds, 2).padStart(9)}  ${fmt(run.writerObsPerSec).padStart(12)}  ` +
        `${fmt(run.rawSeconds, 2).padStart(9)}  ${fmt(run.rawObsPerSec).padStart(11)}  ${fmt(run.ratio, 3).padStart(11)}`,
    ),
    "",
    "                      min     median        max",
    `  writer obs/s  ${spread(
      r.runs.map((x) => x.writerObsPerSec),
      0,
    )}`,
    `  raw obs/s     ${spread(
      r.runs.map((x) => x.rawObsPerSec),
      0,
    )}`,
    `  writer/raw    ${spread(
      r.runs.map((x) => x.ratio),
      3,
    )}   (raw is ${fmt(1 / result.ratio, 1)}× faster at the median)`,
    "",
    `  validation and keying alone (normalize, no database): ${fmt(r.validationSeconds, 2)} s ` +
      `(${fmt(result.count / r.validationSeconds)} obs/s)`,
    `  deliveries by result (each run as planned; ${fmt(r.writerNews)} news rows):`,
    ...[...new Set([...STEPS.map((s) => EXPECTED[s]), ...r.recorded.keys()])].map(
      (k) => `    ${k.padEnd(10)} ${fmt(r.recorded.get(k) ?? 0).padStart(9)}`,
    ),
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
}
