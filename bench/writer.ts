/**
 * Writer benchmark: how many observations per second the storage writer takes, and how far that
 * is from the floor.
 *
 *   npm run -s bench -- writer [--count N] [--json] [--concurrency C] [--batch B]
 *
 * What is measured. N deliveries (default 100,000), generated up front from a seeded PRNG so
 * every run writes the same workload: new items (some first seen by the fallback page
 * observer), exact duplicates (the same payload again from another collector), upgrades (the
 * authoritative observation of an item the fallback created, adding category, breaking and
 * instruments) and edits (edit() with a higher revision). References to earlier items are only
 * made once those items have been settled for a while, so concurrent delivery does not reorder
 * an item's own history and each step has one expected result (new → inserted, duplicate →
 * unchanged, upgrade → upgraded, edit → updated), checked against news_events afterwards.
 *
 *   1. writer: every delivery goes through the real writer: validation, entry key, the guarded
 *      upsert and its audit row, each delivery with its own decision. By default in batches of
 *      B through writeBatch (one statement per round of distinct items, one commit per batch);
 *      with --batch 1, one observe/edit call per delivery, C in flight on PostgreSQL (default
 *      8, pool of C) and sequentially on PGlite (one connection).
 *   2. raw: news and news_events are truncated, then the very rows the writer's audit trail
 *      holds are written again with batched INSERT … ON CONFLICT (B per statement, default
 *      1,000; the same concurrency). One statement per batch appends every audit row and upserts
 *      the batch's news rows, each key once (the batch's last observation of it wins), and a
 *      conflict simply overwrites. No validation, no merge rule, no decision.
 *
 * Why the baseline is fair. Both phases start from empty tables with the same indexes, in the
 * same database, through the same Prisma client and pool, and write the same rows: N audit rows
 * with the same payloads, and the same set of news keys, first inserted and then hit again by
 * later observations of the same items (fewer times in raw, because keys repeated within a
 * batch are folded into one row: that is exactly the saving batching is for). The raw phase is
 * handed its rows ready-made (read back from the writer's audit trail before its clock starts),
 * so it measures database work only. It is the floor: what it would cost to store these rows
 * if the writer needed to make no decisions and paid one round trip per thousand rows.
 *
 * Where: embedded PGlite in a temporary directory when DATABASE_URL is unset, else a scratch
 * database (ww_bench_<random>) created on the DATABASE_URL server and dropped at the end, even
 * when the run fails or is interrupted. Results go to stdout (one JSON line with --json),
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

interface Options {
  count: number;
  json: boolean;
  concurrency: number;
  batch: number;
}

interface Result {
  db: "pglite" | "postgres";
  count: number;
  writerObsPerSec: number;
  rawObsPerSec: number;
  ratio: number;
}

const log = (msg: string) => process.stderr.write(`${msg}\n`);
const fmt = (n: number, digits = 0) =>
  n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });

export async function run(args: string[]): Promise<void> {
  const opts = parseOptions(args);
  const url = config().DATABASE_URL;
  const concurrency = url ? opts.concurrency : 1;
  if (!url && opts.concurrency !== 1) log("PGlite has one connection: running sequentially");

  log(`generating ${fmt(opts.count)} deliveries (seed ${SEED.toString(16)})`);
  const deliveries = makeWorkload(opts.count, SEED);
  const planned = tally(deliveries.map((d) => EXPECTED[d.step]));

  const scratch = await openScratch(url, concurrency);
  try {
    const { db } = scratch;
    log(`database: ${db.kind} ${scratch.label}; concurrency ${concurrency}, batch ${opts.batch}`);
    await db.prisma.$executeRawUnsafe(
      `INSERT INTO sources (id, name, kind)
       SELECT 'bench-' || i, 'Bench source ' || i, 'stream' FROM generate_series(0, $1::int - 1) i`,
      SOURCES,
    );

    // Phase 1: the real writer.
    await checkpoint(db);
    const writerSeconds = await runWriter(db, deliveries, concurrency, opts.batch);
    const recorded = await resultsInEvents(db);
    const writerEvents = sum(recorded);
    const writerNews = await countRows(db, "news");
    if (writerEvents !== opts.count) {
      throw new Error(`writer phase: ${writerEvents} news_events rows, expected ${opts.count}`);
    }

    // Phase 2: the same rows, raw.
    const rows = await readAuditTrail(db);
    await db.prisma.$executeRawUnsafe("TRUNCATE news, news_events RESTART IDENTITY");
    await checkpoint(db);
    const raw = await runRaw(db, rows, opts.batch, concurrency);
    const rawEvents = await countRows(db, "news_events");
    const rawNews = await countRows(db, "news");
    if (rawEvents !== opts.count || rawNews !== writerNews) {
      throw new Error(
        `raw phase: ${rawEvents} news_events and ${rawNews} news rows, ` +
          `expected ${opts.count} and ${writerNews}`,
      );
    }

    const result: Result = {
      db: db.kind,
      count: opts.count,
      writerObsPerSec: round(opts.count / writerSeconds, 1),
      rawObsPerSec: round(opts.count / raw.seconds, 1),
      ratio: round(raw.seconds / writerSeconds, 4),
    };
    if (opts.json) {
      process.stdout.write(`${JSON.stringify(result)}\n`);
    } else {
      report({
        result,
        scratch,
        concurrency,
        opts,
        writerSeconds,
        validationSeconds: timeValidation(deliveries),
        raw,
        planned,
        recorded,
        rawNews,
      });
    }
  } finally {
    await scratch.cleanup();
  }
}

// ---------------------------------------------------------------------------------------------
// The two phases

async function runWriter(db: Database, deliveries: Delivery[], concurrency: number, batch: number) {
  const progress = progressLog("writer", deliveries.length);
  const started = performance.now();
  const check = (out: { result: WriteResult; reason?: string }) => {
    if (out.result === "rejected") throw new Error(`writer rejected a delivery: ${out.reason}`);
  };
  if (batch === 1) {
    await forEachLimited(deliveries, concurrency, async (d) => {
      check(d.call === "edit" ? await edit(db, d.input) : await observe(db, d.input));
      progress();
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
      progress(b.length);
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
                             payload, result, version)
    SELECT entry_key, source_id, collector, origin, kind, observed_at, revision,
           payload, result, version
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
  const progress = progressLog("raw", rows.length);
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
    progress(batch.length);
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

/** Starts each phase without the other's dirty pages pending (best effort: needs superuser). */
async function checkpoint(db: Database): Promise<void> {
  await db.prisma.$executeRawUnsafe("CHECKPOINT").catch(() => undefined);
}

async function resultsInEvents(db: Database): Promise<Map<string, number>> {
  const rows = await db.prisma.$queryRaw<{ result: string; n: number }[]>`
    SELECT result, count(*)::int AS n FROM news_events GROUP BY result`;
  return new Map(rows.map((r) => [r.result, Number(r.n)]));
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

function progressLog(phase: string, total: number): (n?: number) => void {
  const step = Math.max(1, Math.ceil(total / 10));
  const started = performance.now();
  let done = 0;
  let nextReport = step;
  return (n = 1) => {
    done += n;
    if (done < nextReport && done < total) return;
    nextReport += step;
    const seconds = (performance.now() - started) / 1000;
    log(
      `  ${phase}: ${fmt(done)}/${fmt(total)} in ${fmt(seconds, 1)} s (${fmt(done / seconds)}/s)`,
    );
  };
}

function tally(results: string[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const r of results) m.set(r, (m.get(r) ?? 0) + 1);
  return m;
}

const sum = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
const round = (x: number, digits: number) => Math.round(x * 10 ** digits) / 10 ** digits;

function usageError(message: string): Error {
  const err = new Error(message);
  err.name = "UsageError";
  return err;
}

function parseOptions(args: string[]): Options {
  const { values } = parseArgs({
    args,
    options: {
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
  return {
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
  writerSeconds: number;
  validationSeconds: number;
  raw: { seconds: number; batches: number; newsRows: number; retries: number };
  planned: Map<string, number>;
  recorded: Map<string, number>;
  rawNews: number;
}): void {
  const { result } = r;
  const lines = [
    `writer benchmark on ${result.db} (${r.scratch.label})`,
    `  ${fmt(result.count)} observations, ${r.opts.batch === 1 ? `one call each, ${r.concurrency} in flight` : `writeBatch of ${fmt(r.opts.batch)}, ${writerLanes(r.concurrency, r.opts.batch)} in flight`}, seed ${SEED.toString(16)}, ` +
      `load average ${os
        .loadavg()
        .map((x) => x.toFixed(1))
        .join(" ")}`,
    "",
    `  writer  ${fmt(r.writerSeconds, 2).padStart(9)} s  ${fmt(result.writerObsPerSec).padStart(9)} obs/s`,
    `          of which validation and keying (normalize, timed alone, no database): ` +
      `${fmt(r.validationSeconds, 2)} s (${fmt(result.count / r.validationSeconds)} obs/s)`,
    `  raw     ${fmt(r.raw.seconds, 2).padStart(9)} s  ${fmt(result.rawObsPerSec).padStart(9)} obs/s` +
      `   (${fmt(r.raw.batches)} batch(es) of ≤${fmt(r.opts.batch)}, ${fmt(r.raw.newsRows)} news upserts` +
      `${r.raw.retries ? `, ${r.raw.retries} deadlock retries` : ""})`,
    `  ratio writer/raw  ${fmt(result.ratio, 4)}  (raw is ${fmt(1 / result.ratio, 1)}× faster)`,
    "",
    `  news_events by result (writer phase; ${fmt(r.rawNews)} news rows):`,
    ...[...new Set([...STEPS.map((s) => EXPECTED[s]), ...r.recorded.keys()])].map((k) => {
      const got = r.recorded.get(k) ?? 0;
      const want = r.planned.get(k) ?? 0;
      return `    ${k.padEnd(10)} ${fmt(got).padStart(9)}  ${got === want ? "(as planned)" : `(planned ${fmt(want)})`}`;
    }),
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
}
