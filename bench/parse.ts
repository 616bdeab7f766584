/**
 * Parse benchmark: how fast parseFeed turns feed bytes into entries, next to two peers.
 *
 *   npm run -s bench -- parse [--runs N] [--seconds S] [--json]
 *
 * What is measured, in one process, every input read into memory before any clock starts:
 *
 *   1. corpora: every feed file (.xml .rss .atom) under ../shared/corpora/{rss-parser,gofeed,
 *      miniflux}, the corpora our tests compare against. A file that any parser throws on is left
 *      out for all of them (and counted), so everyone reads the same set;
 *   2. rss5000: one generated RSS 2.0 document of 5,000 items (title, link, guid, pubDate, an
 *      escaped-HTML or CDATA description with entities, dc:creator, categories), the same bytes
 *      on every run (seeded).
 *
 * The parsers: wirewatch's parseFeed (given the bytes: it decodes them itself), rss-parser
 * (parseString, given `bytes.toString()` inside the timed section) and @rowanmanning/feed-parser
 * (parseFeed, likewise). feed-parser reads fields lazily, when asked, so it is timed twice: once
 * asked for the fields of our own contract (feed title, url, updated; each item's id, title, url,
 * published, updated, description, authors and categories), the output parseFeed and rss-parser
 * build eagerly, and once for parseFeed alone (its XML parse, no field read): the stricter bar.
 *
 * Each parser reads each workload once to warm up; that also sets how many whole passes over the
 * workload it makes per run, enough for at least a second of reading (the slowest peer makes
 * one). Then N runs (default 5): within a run the parsers take turns file by file, the order
 * rotating with every file, pass and run, so all of them read under the same load, which on a
 * shared machine moves by the second. MB/s per run is bytes read (the files' sizes times the
 * passes) over the time spent in that parser's calls; the ratios are of medians. Results go to stdout
 * (one JSON line with --json), progress to stderr.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { parseFeed as rowanParse } from "@rowanmanning/feed-parser";
import RssParser from "rss-parser";
import { parseFeed } from "@/workers/parser/parseFeed";
import { CORPORA, corpusDir, walk } from "@/workers/parser/testing/corpora";

const CORPUS_NAMES = ["rss-parser", "gofeed", "miniflux"];
const FEED_FILE = /\.(xml|rss|atom)$/;
const SEED = 0x0f_ee_d5;
const ITEMS = 5_000;
/**
 * Each parser reads a workload for at least this long per run (whole passes), so one busy moment
 * on a shared machine weighs less (--seconds; 0 makes one pass, for the bench's own test).
 */
const RUN_SECONDS = 1;

interface Peer {
  name: string;
  parse(bytes: Buffer): Promise<unknown> | unknown;
  /** After a throw: rss-parser's xml2js instance is left in its failed state, refusing all after. */
  reset?(): void;
}

let rssParser = new RssParser();

const PARSERS: Peer[] = [
  { name: "wirewatch", parse: (bytes) => parseFeed(bytes) },
  {
    name: "rss-parser",
    parse: (bytes) => rssParser.parseString(bytes.toString()),
    reset: () => {
      rssParser = new RssParser();
    },
  },
  {
    name: "feed-parser (fields read)",
    parse: (bytes) => {
      const feed = rowanParse(bytes.toString());
      const fields: unknown[] = [feed.title, feed.url, feed.updated];
      for (const item of feed.items) {
        fields.push(
          item.id,
          item.title,
          item.url,
          item.published,
          item.updated,
          item.description,
          item.authors,
          item.categories,
        );
      }
      return fields;
    },
  },
  { name: "feed-parser (parse only)", parse: (bytes) => rowanParse(bytes.toString()) },
];

interface Workload {
  name: string;
  files: Buffer[];
  bytes: number;
  /** Files left out because a parser threw on them, by parser. */
  excluded: Record<string, number>;
  excludedFiles: number;
}

interface Spread {
  min: number;
  median: number;
  max: number;
}

const log = (msg: string) => process.stderr.write(`${msg}\n`);

function usageError(message: string): Error {
  const err = new Error(message);
  err.name = "UsageError";
  return err;
}

async function parses(peer: Peer, bytes: Buffer): Promise<boolean> {
  try {
    await peer.parse(bytes);
    return true;
  } catch {
    peer.reset?.();
    return false;
  }
}

/** The feed files every parser reads without throwing; the others counted per parser. */
async function corporaWorkload(): Promise<Workload> {
  const candidates: Buffer[] = [];
  for (const name of CORPUS_NAMES) {
    const dir = corpusDir(name);
    if (!dir) throw usageError(`the parse bench needs the corpora at ${CORPORA}`);
    for (const file of walk(dir)) if (FEED_FILE.test(file)) candidates.push(readFileSync(file));
  }
  const excluded: Record<string, number> = Object.fromEntries(PARSERS.map((p) => [p.name, 0]));
  const files: Buffer[] = [];
  for (const bytes of candidates) {
    let ok = true;
    for (const peer of PARSERS) {
      if (!(await parses(peer, bytes))) {
        excluded[peer.name] = (excluded[peer.name] ?? 0) + 1;
        ok = false;
      }
    }
    if (ok) files.push(bytes);
  }
  return {
    name: "corpora",
    files,
    bytes: files.reduce((n, f) => n + f.length, 0),
    excluded,
    excludedFiles: candidates.length - files.length,
  };
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

const WORDS =
  "minister council budget river storm election market court energy police harbour school strike talks vote rail trade health city coast"
    .split(" ")
    .concat(["café", "naïve", "Zürich", "São Paulo", "Kraków"]);
const DAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
const MONTHS = "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split(" ");
const TOPICS = ["Politics", "World", "Business", "Science", "Sport", "Culture", "Local"];

/** A 5,000-item RSS 2.0 document shaped like a busy news site's, the same bytes for a seed. */
export function generatedRss(items = ITEMS, seed = SEED): Buffer {
  const rand = mulberry32(seed);
  const pick = <T>(list: readonly T[]) => list[Math.floor(rand() * list.length)] as T;
  const words = (n: number) => Array.from({ length: n }, () => pick(WORDS)).join(" ");
  const out: string[] = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:atom="http://www.w3.org/2005/Atom">',
    "<channel><title>The Daily Wire &amp; Record</title><link>https://news.example.com/</link>",
    '<atom:link href="https://news.example.com/feed.xml" rel="self" type="application/rss+xml"/>',
    "<description>Latest headlines</description><language>en-gb</language><ttl>15</ttl>",
    "<lastBuildDate>Tue, 01 Dec 2026 10:00:00 +0000</lastBuildDate>",
  ];
  const start = Date.UTC(2026, 11, 1, 10);
  for (let i = 0; i < items; i++) {
    const when = new Date(start - i * 97_000);
    const pubDate = `${DAYS[(when.getUTCDay() + 6) % 7]}, ${String(when.getUTCDate()).padStart(2, "0")} ${MONTHS[when.getUTCMonth()]} ${when.getUTCFullYear()} ${when.toISOString().slice(11, 19)} +0000`;
    const slug = `${words(3).replaceAll(" ", "-")}-${i}`;
    const link = `https://news.example.com/${pick(TOPICS).toLowerCase()}/${slug}?ref=rss&amp;id=${i}`;
    const title = `${words(4 + Math.floor(rand() * 6))} &#8217;${pick(WORDS)}&#8217; &amp; ${words(2)}`;
    const body = Array.from(
      { length: 1 + Math.floor(rand() * 3) },
      () =>
        `<p>${words(20 + Math.floor(rand() * 30))} <a href="https://news.example.com/x?a=1&b=2">${words(2)}</a> &copy; &#x2014; &quot;${words(3)}&quot;</p>`,
    ).join("");
    const description =
      rand() < 0.5
        ? `<![CDATA[${body}<img src="https://img.example.com/${i}.jpg" alt=""/>]]>`
        : body.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
    const guid =
      rand() < 0.7
        ? `<guid isPermaLink="false">urn:uuid:${(i * 2_654_435_761) >>> 0}-${i}</guid>`
        : `<guid>https://news.example.com/a/${i}</guid>`;
    const categories = Array.from(
      { length: 1 + Math.floor(rand() * 3) },
      () => `<category>${pick(TOPICS)}</category>`,
    ).join("");
    out.push(
      `<item><title>${title}</title><link>${link}</link>${guid}<pubDate>${pubDate}</pubDate>`,
      `<dc:creator>${words(2)}</dc:creator>${categories}<description>${description}</description></item>`,
    );
  }
  out.push("</channel></rss>");
  return Buffer.from(out.join("\n"));
}

async function readAll(peer: Peer, work: Workload): Promise<number> {
  const started = performance.now();
  for (const bytes of work.files) await peer.parse(bytes);
  return (performance.now() - started) / 1000;
}

/** Seconds one parser spends on one file. */
async function timeOne(peer: Peer, bytes: Buffer): Promise<number> {
  const started = performance.now();
  await peer.parse(bytes);
  return (performance.now() - started) / 1000;
}

function spread(values: number[]): Spread {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median =
    sorted.length % 2
      ? (sorted[mid] as number)
      : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
  return { min: sorted[0] as number, median, max: sorted[sorted.length - 1] as number };
}

async function measure(
  work: Workload,
  runs: number,
  runSeconds: number,
): Promise<Record<string, Spread>> {
  const rates: Record<string, number[]> = Object.fromEntries(PARSERS.map((p) => [p.name, []]));
  // Warm-up, which also sizes each parser's passes per run (at least runSeconds of reading).
  const passes = new Map<Peer, number>();
  for (const peer of PARSERS) {
    passes.set(peer, Math.max(1, Math.ceil(runSeconds / (await readAll(peer, work)))));
  }
  const most = Math.max(...passes.values());
  for (let run = 0; run < runs; run++) {
    const seconds = new Map<Peer, number>(PARSERS.map((p) => [p, 0]));
    for (let pass = 0; pass < most; pass++) {
      for (const [f, bytes] of work.files.entries()) {
        for (let k = 0; k < PARSERS.length; k++) {
          const peer = PARSERS[(run + pass + f + k) % PARSERS.length] as Peer;
          if (pass >= (passes.get(peer) ?? 1)) continue;
          seconds.set(peer, (seconds.get(peer) ?? 0) + (await timeOne(peer, bytes)));
        }
      }
    }
    for (const peer of PARSERS) {
      const mbPerSec = ((passes.get(peer) ?? 1) * work.bytes) / 1e6 / (seconds.get(peer) ?? 1);
      rates[peer.name]?.push(mbPerSec);
      log(`${work.name} run ${run + 1}/${runs}: ${peer.name} ${mbPerSec.toFixed(1)} MB/s`);
    }
  }
  return Object.fromEntries(Object.entries(rates).map(([name, r]) => [name, spread(r)]));
}

function parseOptions(args: string[]): { runs: number; seconds: number; json: boolean } {
  const { values } = parseArgs({
    args,
    options: {
      runs: { type: "string", default: "5" },
      seconds: { type: "string", default: String(RUN_SECONDS) },
      json: { type: "boolean", default: false },
    },
    strict: true,
  });
  const runs = Number(values.runs);
  if (!Number.isInteger(runs) || runs < 1) throw usageError("--runs must be a positive integer");
  const seconds = Number(values.seconds);
  if (!Number.isFinite(seconds) || seconds < 0)
    throw usageError("--seconds must be a number of seconds, 0 or more");
  return { runs, seconds, json: values.json };
}

export async function run(args: string[]): Promise<void> {
  const { runs, seconds, json } = parseOptions(args);
  log(`reading the corpora under ${path.relative(process.cwd(), CORPORA) || CORPORA} …`);
  const corpora = await corporaWorkload();
  const big = generatedRss();
  const workloads: Workload[] = [
    corpora,
    { name: "rss5000", files: [big], bytes: big.length, excluded: {}, excludedFiles: 0 },
  ];
  const results = [];
  for (const work of workloads) {
    const mbPerSec = await measure(work, runs, seconds);
    const ours = mbPerSec.wirewatch?.median ?? 0;
    const ratios = Object.fromEntries(
      PARSERS.slice(1).map((p) => [p.name, ours / (mbPerSec[p.name]?.median ?? Number.NaN)]),
    );
    results.push({
      workload: work.name,
      files: work.files.length,
      bytes: work.bytes,
      excludedFiles: work.excludedFiles,
      excludedBy: work.excluded,
      mbPerSec,
      ratios,
    });
  }
  if (json) {
    process.stdout.write(`${JSON.stringify({ runs, workloads: results })}\n`);
    return;
  }
  const lines = [
    `parse: ${runs} runs per workload, parsers alternating, MB/s (min / median / max)`,
  ];
  for (const r of results) {
    const left = Object.entries(r.excludedBy)
      .filter(([, n]) => n > 0)
      .map(([name, n]) => `${name} threw on ${n}`)
      .join(", ");
    lines.push(
      "",
      `${r.workload}: ${r.files} files, ${(r.bytes / 1e6).toFixed(2)} MB` +
        (r.excludedFiles ? ` (${r.excludedFiles} left out for all: ${left})` : ""),
    );
    for (const [name, s] of Object.entries(r.mbPerSec)) {
      lines.push(
        `  ${name.padEnd(26)} ${s.min.toFixed(1).padStart(7)} ${s.median.toFixed(1).padStart(7)} ${s.max.toFixed(1).padStart(7)}`,
      );
    }
    for (const [name, ratio] of Object.entries(r.ratios)) {
      lines.push(`  wirewatch / ${name.padEnd(26)} ${ratio.toFixed(2)}x (medians)`);
    }
  }
  process.stdout.write(`${lines.join("\n")}\n`);
}
