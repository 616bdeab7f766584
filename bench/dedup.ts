/**
 * Dedup benchmark: how fast the dedup stage decides a new item with a full window behind it,
 * and whether it keeps up with the writer.
 *
 *   npm run -s bench -- dedup [--items N] [--pglite-items N] [--decisions M] [--runs R]
 *                             [--target pg,pglite] [--concurrency C] [--json]
 *                             (--concurrency: jobs at once in the batched mode)
 *                             [--writer-rate OBS_PER_S]
 *
 * What is measured. The window is filled with N items (default 1,000,000): `news` rows (the
 * text the near stage scores candidates by), their `dedup_items` rows (keys from lib/dedup's
 * itemKeys, as the stage writes them) and `dedup_anchors` rows (stage 3's second lookup), first seen over the last 72 hours (the
 * default window), so every one of them is a candidate. Texts are the simulator's corpus
 * (simulator/corpus.ts: 14 topics, their wordings, subjects and figures, in English and Bangla)
 * with a lead sentence of real news English from the MSRP corpus (../shared/corpora/msrp) or of
 * Bangla words from the corpus, so that, as in a real window, nearly every item differs from
 * every other in more than a figure. Rows are bulk-inserted by arrays (unnest) with the
 * dedup_items and dedup_anchors indexes dropped, the indexes then built and the tables ANALYZEd.
 *
 * Then M new items (default 2,000) are written to `news` and each is decided by the stage's own
 * handler (workers/dedup/stage.ts: its transaction, key locks, the URL, content and banded
 * SimHash lookups, scoring, and the link into a cluster), handed over C at once as the queue
 * would (default 64 on PostgreSQL, 8 on PGlite). The new items are a mix a live line sees: 15 %
 * re-visits of a stored item's URL (tracking parameters, AMP), 25 % wire copies (another
 * outlet's byte-identical text), 15 % headline edits (a figure or a word changed), 45 % new
 * stories. Two modes, alternating run by run, each with its own new items: "batched", the
 * stage's defaults (workers/dedup/batcher.ts: up to 32 items per transaction, two transactions
 * at once; 8 and one on PGlite), and "one at a time", the baseline: every decision its own
 * transaction, 4 at once (1 on PGlite). Each item's latency is taken around the handler (from
 * handing it over to its decision, waiting for its batch included); the stage that settled it
 * (url, exact, near, review, or unique: all stages ran and found nothing) is read back from
 * dedup_items. R runs (default 3) per mode; per run and as min/median/max: decisions/s, the
 * stage's time per item (1 / decisions/s) and per-item latency p50/p99/max, overall and per
 * settling stage; and the ratio of the two modes' decisions/s.
 *
 * The writer's rate to compare with is the writer bench's median (docs/decisions/019:
 * PostgreSQL 6,299 obs/s, PGlite 2,775 obs/s at 20,000 deliveries on this machine), or
 * --writer-rate. The ratio is decisions/s over writer obs/s: above 1 the stage keeps up even if
 * every delivery were a new version (in practice a third of deliveries are repeats).
 *
 * Where (--target, default pg when DATABASE_URL is set, else pglite): a scratch database on the
 * DATABASE_URL server, or PGlite in a temporary directory, removed at the end. PGlite fills with
 * --pglite-items (default 200,000: filling 1,000,000 in WASM takes tens of minutes); the line
 * says what it used.
 */
import { readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { config } from "@/lib/config";
import type { Database } from "@/lib/db";
import {
  analyze,
  anchors,
  DEFAULT_THRESHOLDS,
  type DedupItem,
  itemKeys,
  itemText,
  toSigned64,
} from "@/lib/dedup";
import { createScratchDatabase } from "@/lib/scratchDatabase";
import { type Facts, randomFacts, storySummary, TOPICS, type Topic } from "@/simulator/corpus";
import { Random } from "@/simulator/random";
import { editHeadline, variantLink } from "@/simulator/republish";
import { dedupStage } from "@/workers/dedup/stage";

const SEED = 0xd3d0_2026;
const SOURCES = 20;
const WINDOW_HOURS = 72;
const FILL_CHUNK = 5_000;
/** Writer bench medians quoted from docs/decisions/019 (20,000 deliveries, this machine). */
const WRITER_RATE = { pg: 6_299, pglite: 2_775 } as const;
const MIX = { url: 0.15, exact: 0.25, near: 0.15 } as const;
/** Anchors per item as the stage keeps them (stage 3's second lookup, dedup_anchors). */
const ANCHORS = DEFAULT_THRESHOLDS.retrieval.anchors;

type Target = "pg" | "pglite";
const TARGETS: readonly Target[] = ["pg", "pglite"];
type Settled = "url" | "exact" | "near" | "review" | "unique";
const SETTLED: readonly Settled[] = ["url", "exact", "near", "review", "unique"];

interface Options {
  targets: Target[];
  items: number;
  pgliteItems: number;
  decisions: number;
  runs: number;
  concurrency: number | undefined;
  json: boolean;
  writerRate: number | undefined;
}

interface Latency {
  n: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

interface Run extends Latency {
  decisionsPerSec: number;
  byStage: Partial<Record<Settled, Latency>>;
}

interface Result {
  db: "pglite" | "postgres";
  mode: Mode["name"];
  items: number;
  decisions: number;
  concurrency: number;
  batch: Mode["batch"];
  fillSeconds: number;
  decisionsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  byStage: Partial<Record<Settled, Latency>>;
  writerObsPerSec: number;
  ratio: number;
  runs: Run[];
}

const log = (msg: string) => process.stderr.write(`${msg}\n`);
const fmt = (n: number, digits = 0) =>
  n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });

export async function run(args: string[]): Promise<void> {
  const url = config().DATABASE_URL;
  const opts = parseOptions(args, url);
  for (const target of opts.targets) {
    const items = target === "pg" ? opts.items : Math.min(opts.items, opts.pgliteItems);
    if (target === "pglite" && items < opts.items) {
      log(`PGlite: filling ${fmt(items)} items, not ${fmt(opts.items)} (--pglite-items)`);
    }
    const modes = modesFor(target, opts.concurrency);
    const scratch = await openScratch(
      target === "pg" ? url : undefined,
      Math.max(...modes.map((m) => m.connections)),
    );
    try {
      const fillSeconds = await fill(scratch.db, items);
      const runs = new Map<string, Run[]>(modes.map((m) => [m.name, []]));
      for (let r = 1; r <= opts.runs; r++) {
        // Alternating which mode goes first, so neither always gets the warmer cache.
        const order = r % 2 === 1 ? modes : [...modes].reverse();
        for (const mode of order) {
          const out = await decideRun(scratch.db, items, opts.decisions, mode, r);
          runs.get(mode.name)?.push(out);
          log(
            `  run ${r}/${opts.runs} ${mode.name}: ${fmt(out.decisionsPerSec)} decisions/s, p50 ${fmt(out.p50Ms, 2)} ms, ` +
              `p99 ${fmt(out.p99Ms, 2)} ms, max ${fmt(out.maxMs, 1)} ms; ${SETTLED.map(
                (s) => `${s} ${out.byStage[s]?.n ?? 0}`,
              ).join(", ")}`,
          );
        }
      }
      const writer = opts.writerRate ?? WRITER_RATE[target];
      const results = modes.map((mode) =>
        summarize(
          scratch.db.kind,
          items,
          opts.decisions,
          mode,
          fillSeconds,
          runs.get(mode.name) ?? [],
          writer,
        ),
      );
      if (opts.json) process.stdout.write(`${JSON.stringify(results)}\n`);
      else report(results, scratch.label, opts.writerRate === undefined);
    } finally {
      await scratch.cleanup();
    }
  }
}

/** How the stage is run: batched (its defaults) and, as the baseline, one item per transaction. */
interface Mode {
  name: "batched" | "one at a time";
  /** Jobs handed to the stage at once (its handler slots, as the queue would fill them). */
  concurrency: number;
  batch: { maxBatch: number; maxInFlight: number };
  connections: number;
}

function modesFor(target: Target, concurrency: number | undefined): Mode[] {
  const pglite = target === "pglite";
  const batched: Mode = {
    name: "batched",
    concurrency: concurrency ?? (pglite ? 8 : 64),
    batch: { maxBatch: pglite ? 8 : 32, maxInFlight: pglite ? 1 : 2 },
    connections: 8, // two transactions, two side readers each, the warm-up
  };
  // The stage before batching: each decision its own transaction, 4 at once (1 on PGlite).
  const single: Mode = {
    name: "one at a time",
    concurrency: pglite ? 1 : 4,
    batch: { maxBatch: 1, maxInFlight: pglite ? 1 : 4 },
    connections: 6,
  };
  return [batched, single];
}

// ---------------------------------------------------------------------------------------------
// The corpus: item i of the window is a pure function of (seed, i), so a decision's copy or
// re-visit of item i can be made again without holding a million texts in memory.

const LEADS_EN = loadLeads();
const LEADS_BN = bnLeads();

function loadLeads(): string[] {
  const file = path.resolve(
    import.meta.dirname,
    "../../shared/corpora/msrp/msr_paraphrase_train.txt",
  );
  try {
    const lines = readFileSync(file, "utf8").split("\n").slice(1);
    const out = new Set<string>();
    for (const line of lines) {
      const cols = line.split("\t");
      if (cols[3]) out.add(cols[3].trim());
      if (cols[4]) out.add(cols[4].trim());
    }
    if (out.size > 100) return [...out];
  } catch {
    // Without the corpus, leads are made of the English wordings' own words (below).
  }
  const r = new Random(SEED);
  const vocab = TOPICS.flatMap((t) => (t.headlines.en ?? []).map((h) => h(randomFacts(r))))
    .join(" ")
    .split(/\s+/);
  return Array.from({ length: 5_000 }, () =>
    Array.from({ length: r.int(10, 18) }, () => r.pick(vocab)).join(" "),
  );
}

function bnLeads(): string[] {
  const r = new Random(SEED + 1);
  const vocab = TOPICS.flatMap((t) => [
    ...(t.headlines.bn ?? []).map((h) => h(randomFacts(r))),
    ...(t.summary.bn ? [t.summary.bn(randomFacts(r))] : []),
    ...(t.rewrite.bn ? [t.rewrite.bn(randomFacts(r))] : []),
  ])
    .join(" ")
    .split(/\s+/)
    .filter((w) => w.length > 1);
  return Array.from(
    { length: 5_000 },
    () => `${Array.from({ length: r.int(8, 14) }, () => r.pick(vocab)).join(" ")}।`,
  );
}

interface Text extends DedupItem {
  title: string;
  summary: string;
  link: string;
  sourceId: string;
}

function windowItem(i: number): Text {
  const r = new Random((SEED ^ Math.imul(i + 1, 0x9e37_79b1)) >>> 0);
  const language = r.chance(0.45) ? "bn" : "en";
  const topics = TOPICS.filter((t) => t.headlines[language]);
  const topic = r.pick(topics);
  const facts = randomFacts(r);
  return compose(topic, facts, language, r, `https://www.outlet${i % SOURCES}.example/n/${i}`, i);
}

function compose(
  topic: Topic,
  facts: Facts,
  language: "en" | "bn",
  r: Random,
  link: string,
  i: number,
): Text {
  const headlines = topic.headlines[language] ?? [];
  const title = (headlines[r.int(0, headlines.length - 1)] as (f: Facts) => string)(facts);
  const lead = language === "bn" ? r.pick(LEADS_BN) : r.pick(LEADS_EN);
  const summary = `${storySummary(topic, facts, language)} ${lead}`;
  return { title, summary, link, sourceId: `bench-${i % SOURCES}` };
}

// ---------------------------------------------------------------------------------------------
// Filling the window

async function fill(db: Database, n: number): Promise<number> {
  const started = performance.now();
  await db.prisma.$executeRawUnsafe(
    `INSERT INTO sources (id, name, kind)
     SELECT 'bench-' || i, 'Bench source ' || i, 'feed' FROM generate_series(0, $1::int - 1) i`,
    SOURCES,
  );
  const indexes = await db.prisma.$queryRaw<{ name: string; def: string }[]>`
    SELECT indexname AS name, indexdef AS def FROM pg_indexes
    WHERE tablename IN ('dedup_items', 'dedup_anchors') AND indexname NOT LIKE '%_pkey'`;
  for (const ix of indexes) await db.prisma.$executeRawUnsafe(`DROP INDEX ${ix.name}`);
  const now = Date.now();
  const span = WINDOW_HOURS * 3_600_000 * 0.95;
  let keyed = 0;
  for (let from = 0; from < n; from += FILL_CHUNK) {
    const to = Math.min(n, from + FILL_CHUNK);
    const t0 = performance.now();
    const rows = [];
    for (let i = from; i < to; i++) {
      const text = windowItem(i);
      // Oldest first, spread evenly over the window, so the window filter keeps them all.
      const seen = new Date(now - span + Math.floor((span * i) / n)).toISOString();
      const analyzed = analyze(itemText(text));
      rows.push({
        key: `w${i}`,
        text,
        seen,
        keys: itemKeys(text, analyzed),
        anchors: ANCHORS > 0 ? anchors(analyzed, ANCHORS) : [],
      });
    }
    keyed += performance.now() - t0;
    await insertRows(db, rows, true);
    if (to % 100_000 < FILL_CHUNK || to === n) log(`  filled ${fmt(to)} / ${fmt(n)}`);
  }
  log(`  keys computed in ${fmt(keyed / 1000, 1)} s; building ${indexes.length} indexes`);
  for (const ix of indexes) await db.prisma.$executeRawUnsafe(ix.def);
  // VACUUM as autovacuum would after a bulk load: it also sets the visibility map, without
  // which the anchor lookup's index-only scans would visit the heap anyway.
  await db.prisma.$executeRawUnsafe("VACUUM ANALYZE news");
  await db.prisma.$executeRawUnsafe("VACUUM ANALYZE dedup_items");
  await db.prisma.$executeRawUnsafe("VACUUM ANALYZE dedup_anchors");
  const seconds = (performance.now() - started) / 1000;
  log(`  window of ${fmt(n)} items ready in ${fmt(seconds, 1)} s`);
  return seconds;
}

interface Row {
  key: string;
  text: Text;
  seen: string;
  keys?: ReturnType<typeof itemKeys>;
  anchors?: number[];
}

/** news rows, and with `decided` their dedup_items rows as the stage leaves a unique item. */
async function insertRows(db: Database, rows: Row[], decided: boolean): Promise<void> {
  const col = <T>(f: (r: Row) => T) => rows.map(f);
  await db.prisma.$executeRaw`
    INSERT INTO news (entry_key, source_id, canonical_id, quality, title, link, summary, version,
                      first_seen_at, first_source, first_collector, last_result, updated_at)
    SELECT k, s, k, 'authoritative', t, l, m, 1, f, s, 'A', 'inserted', f
    FROM unnest(${col((r) => r.key)}::text[], ${col((r) => r.text.sourceId)}::text[],
                ${col((r) => r.text.title)}::text[], ${col((r) => r.text.link)}::text[],
                ${col((r) => r.text.summary)}::text[], ${col((r) => r.seen)}::timestamptz[])
         AS x(k, s, t, l, m, f)`;
  if (!decided) return;
  const k = (r: Row) => r.keys as ReturnType<typeof itemKeys>;
  const band = (i: number) => col((r) => k(r).bands?.[i] ?? null);
  await db.prisma.$executeRaw`
    INSERT INTO dedup_items (entry_key, version, source_id, first_seen_at, live, url_key,
                             content_key, simhash, band0, band1, band2, band3, outcome,
                             decision_ms)
    SELECT k, 1, s, f, true, u, c, h, b0, b1, b2, b3, 'unique', 0
    FROM unnest(${col((r) => r.key)}::text[], ${col((r) => r.text.sourceId)}::text[],
                ${col((r) => r.seen)}::timestamptz[], ${col((r) => k(r).urlKey)}::text[],
                ${col((r) => k(r).contentKey)}::text[],
                ${col((r) => {
                  const h = k(r).simhash;
                  return h === null ? null : toSigned64(h).toString();
                })}::bigint[],
                ${band(0)}::int[], ${band(1)}::int[], ${band(2)}::int[], ${band(3)}::int[])
         AS x(k, s, f, u, c, h, b0, b1, b2, b3)`;
  const flat = rows.flatMap((r) => (r.anchors ?? []).map((a) => [r.key, a, r.seen] as const));
  if (flat.length === 0) return;
  await db.prisma.$executeRaw`
    INSERT INTO dedup_anchors (entry_key, anchor, first_seen_at)
    SELECT * FROM unnest(${flat.map((f) => f[0])}::text[], ${flat.map((f) => f[1])}::int[],
                         ${flat.map((f) => f[2])}::timestamptz[])
    ON CONFLICT DO NOTHING`;
}

// ---------------------------------------------------------------------------------------------
// Deciding new items

/** The M new items of run `run`: re-visits, copies, edits of window items, and new stories. */
function newItems(windowSize: number, m: number, run: number): Row[] {
  const r = new Random(SEED + 1_000 * run);
  const now = new Date().toISOString();
  return Array.from({ length: m }, (_, j) => {
    const key = `r${run}-${j}`;
    const sourceId = `bench-${j % SOURCES}`;
    const roll = r.next();
    const of = windowItem(r.int(0, windowSize - 1));
    if (roll < MIX.url) {
      const { link } = variantLink(of.link, r.chance(0.5) ? "tracking" : "amp", r);
      return { key, seen: now, text: { ...of, link, sourceId } };
    }
    const link = `https://www.copy${j % SOURCES}.example/r${run}/${j}`;
    if (roll < MIX.url + MIX.exact) return { key, seen: now, text: { ...of, link, sourceId } };
    if (roll < MIX.url + MIX.exact + MIX.near) {
      const language = /[\u0980-\u09FF]/.test(of.title) ? "bn" : "en";
      return {
        key,
        seen: now,
        text: { ...of, title: editHeadline(of.title, language, r), link, sourceId },
      };
    }
    const language = r.chance(0.45) ? "bn" : "en";
    const topic = r.pick(TOPICS.filter((t) => t.headlines[language]));
    return { key, seen: now, text: compose(topic, randomFacts(r), language, r, link, j) };
  });
}

async function decideRun(
  db: Database,
  windowSize: number,
  m: number,
  mode: Mode,
  run: number,
): Promise<Run> {
  // Each mode its own new items (the run number keeps them apart from the other mode's).
  const rows = newItems(windowSize, m, run * 2 + (mode.name === "batched" ? 0 : 1));
  for (let i = 0; i < rows.length; i += FILL_CHUNK) {
    await insertRows(db, rows.slice(i, i + FILL_CHUNK), false);
  }
  const stage = dedupStage(db, { concurrency: mode.concurrency, batch: mode.batch });
  const concurrency = mode.concurrency;
  const signal = new AbortController().signal;
  const ms = new Map<string, number>();
  // One decision first, outside the clock: the settings row and the pool's connections.
  const [first, ...rest] = rows;
  if (first) await stage.handle({ entryKey: first.key, version: 1 }, { db, signal, attempt: 1 });
  const started = performance.now();
  await forEachLimited(rest, concurrency, async (row) => {
    const t0 = performance.now();
    await stage.handle({ entryKey: row.key, version: 1 }, { db, signal, attempt: 1 });
    ms.set(row.key, performance.now() - t0);
  });
  const seconds = (performance.now() - started) / 1000;
  const settled = await db.prisma.$queryRaw<
    { entry_key: string; outcome: string; stage: string | null }[]
  >`
    SELECT entry_key, outcome, stage FROM dedup_items
    WHERE entry_key = ANY(${rest.map((r) => r.key)}::text[])`;
  if (settled.length !== rest.length) {
    throw new Error(`run ${run}: ${settled.length} of ${rest.length} items decided`);
  }
  const byStage = new Map<Settled, number[]>();
  for (const s of settled) {
    const stageName: Settled =
      s.outcome === "review"
        ? "review"
        : s.outcome === "duplicate"
          ? (s.stage as Settled)
          : "unique";
    const list = byStage.get(stageName) ?? [];
    list.push(ms.get(s.entry_key) ?? 0);
    byStage.set(stageName, list);
  }
  return {
    decisionsPerSec: rest.length / seconds,
    ...latency([...ms.values()]),
    byStage: Object.fromEntries([...byStage].map(([k, v]) => [k, latency(v)])),
  };
}

function latency(values: number[]): Latency {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  return {
    n: sorted.length,
    p50Ms: round(at(0.5), 3),
    p99Ms: round(at(0.99), 3),
    maxMs: round(sorted.at(-1) ?? 0, 3),
  };
}

// ---------------------------------------------------------------------------------------------
// Reporting

function summarize(
  db: Result["db"],
  items: number,
  decisions: number,
  mode: Mode,
  fillSeconds: number,
  runs: Run[],
  writer: number,
): Result {
  const med = (f: (r: Run) => number) => round(median(runs.map(f)), 3);
  const byStage: Partial<Record<Settled, Latency>> = {};
  for (const s of SETTLED) {
    const rows = runs.map((r) => r.byStage[s]).filter((x): x is Latency => x !== undefined);
    if (rows.length === 0) continue;
    byStage[s] = {
      n: rows.reduce((t, x) => t + x.n, 0),
      p50Ms: round(median(rows.map((x) => x.p50Ms)), 3),
      p99Ms: round(median(rows.map((x) => x.p99Ms)), 3),
      maxMs: round(Math.max(...rows.map((x) => x.maxMs)), 3),
    };
  }
  const decisionsPerSec = med((r) => r.decisionsPerSec);
  return {
    db,
    mode: mode.name,
    items,
    decisions,
    concurrency: mode.concurrency,
    batch: mode.batch,
    fillSeconds: round(fillSeconds, 1),
    decisionsPerSec,
    p50Ms: med((r) => r.p50Ms),
    p99Ms: med((r) => r.p99Ms),
    maxMs: round(Math.max(...runs.map((r) => r.maxMs)), 3),
    byStage,
    writerObsPerSec: writer,
    ratio: round(decisionsPerSec / writer, 3),
    runs: runs.map((r) => ({ ...r, decisionsPerSec: round(r.decisionsPerSec, 1) })),
  };
}

function report(results: Result[], label: string, quoted: boolean): void {
  const mm = (xs: number[], d = 0) =>
    `${fmt(Math.min(...xs), d)} / ${fmt(median(xs), d)} / ${fmt(Math.max(...xs), d)}`;
  const first = results[0];
  if (!first) return;
  const lines = [
    `dedup stage on ${first.db} (${label}), ${os.cpus().length} cores, load ${os
      .loadavg()
      .map((x) => x.toFixed(1))
      .join(" ")}`,
    `  window: ${fmt(first.items)} items in ${WINDOW_HOURS} h, filled and indexed in ${fmt(first.fillSeconds, 1)} s`,
    `  ${fmt(first.decisions)} new items per run and mode, ${first.runs.length} runs, modes alternating`,
  ];
  for (const r of results) {
    lines.push(
      `  ${r.mode}: ${r.concurrency} jobs at once, up to ${r.batch.maxBatch} per transaction, ${r.batch.maxInFlight} transactions at once`,
      `    decisions/s (min / median / max): ${mm(r.runs.map((x) => x.decisionsPerSec))}; per item ${fmt(1000 / r.decisionsPerSec, 2)} ms of the stage's time`,
      `    latency per item (handed over → decided) p50 ${fmt(r.p50Ms, 2)} ms, p99 ${fmt(r.p99Ms, 2)} ms, max ${fmt(r.maxMs, 1)} ms (medians of runs; max of all)`,
      "    by the stage that settled it (items over all runs; p50 / p99 medians of runs; max):",
      ...SETTLED.filter((s) => r.byStage[s]).map((s) => {
        const x = r.byStage[s] as Latency;
        return `      ${s.padEnd(7)} ${fmt(x.n).padStart(6)}  p50 ${fmt(x.p50Ms, 2)} ms  p99 ${fmt(x.p99Ms, 2)} ms  max ${fmt(x.maxMs, 1)} ms`;
      }),
      `    stage/writer ${fmt(r.ratio, 2)} (writer ${fmt(r.writerObsPerSec)} obs/s, ${quoted ? "writer bench median, docs/decisions/019" : "--writer-rate"})`,
    );
  }
  const [batched, single] = results;
  if (batched && single) {
    lines.push(
      `  batched / one at a time: ${fmt(batched.decisionsPerSec / single.decisionsPerSec, 2)}× decisions/s`,
    );
  }
  console.log(lines.join("\n"));
}

// ---------------------------------------------------------------------------------------------
// Plumbing

function parseOptions(args: string[], url: string | undefined): Options {
  const { values } = parseArgs({
    args,
    options: {
      items: { type: "string", default: "1000000" },
      "pglite-items": { type: "string", default: "200000" },
      decisions: { type: "string", default: "2000" },
      runs: { type: "string", default: "3" },
      target: { type: "string" },
      concurrency: { type: "string" },
      "writer-rate": { type: "string" },
      json: { type: "boolean", default: false },
    },
  });
  const int = (name: string, raw: string, min: number) => {
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min) throw usageError(`--${name} must be an integer ≥ ${min}`);
    return n;
  };
  const targets = (values.target ?? (url ? "pg" : "pglite")).split(",").map((t) => t.trim());
  for (const t of targets) {
    if (!TARGETS.includes(t as Target))
      throw usageError(`--target takes pg, pglite or both, not "${t}"`);
  }
  if (targets.includes("pg") && !url) throw usageError("--target pg needs DATABASE_URL");
  return {
    targets: targets as Target[],
    items: int("items", values.items, 1),
    pgliteItems: int("pglite-items", values["pglite-items"], 1),
    decisions: int("decisions", values.decisions, 2),
    runs: int("runs", values.runs, 1),
    concurrency:
      values.concurrency === undefined ? undefined : int("concurrency", values.concurrency, 1),
    writerRate:
      values["writer-rate"] === undefined
        ? undefined
        : int("writer-rate", values["writer-rate"], 1),
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
  label: string;
  cleanup(): Promise<void>;
}

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

async function forEachLimited<T>(items: T[], limit: number, fn: (item: T) => Promise<void>) {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await fn(items[next++] as T);
  });
  await Promise.all(lanes);
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

const round = (x: number, digits: number) => Math.round(x * 10 ** digits) / 10 ** digits;
