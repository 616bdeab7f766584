/**
 * Benchmarks, by name: `npm run -s bench -- <name> [options]`.
 * Each benchmark is a module exporting `run(args)`; results go to stdout, progress to stderr.
 */

type Benchmark = { describe: string; load: () => Promise<{ run(args: string[]): Promise<void> }> };

const BENCHMARKS: Record<string, Benchmark> = {
  writer: {
    describe: "the storage writer (observe/edit) against a raw batched INSERT … ON CONFLICT",
    load: () => import("./writer"),
  },
  backpressure: {
    describe: "fetchers and memory with the writer 100× slower, against the unthrottled run",
    load: () => import("./backpressure"),
  },
  scale: {
    describe:
      "N sources (default 100,000) on one PostgreSQL polled by 1, 2, 4 worker processes: " +
      "lateness p50/p99, polls/s, per-host peak vs budget, CPU and RSS per process, rows a day",
    load: () => import("./scale"),
  },
  dashboard: {
    describe: "every dashboard API's p50/p95 over HTTP on 1M news and 5M audit rows",
    load: () => import("./dashboard"),
  },
  websub: {
    describe: "publication → store latency, WebSub pushes against polling, side by side",
    load: () => import("./websub"),
  },
  stories: {
    describe:
      "story webhooks received and applied, against a bare idempotent insert and direct writes",
    load: () => import("./stories"),
  },
  queue: {
    describe:
      "the Postgres job queue's worker processes against a raw SKIP LOCKED loop (--peers: and " +
      "graphile-worker, pg-boss)",
    load: () => import("./queue"),
  },
  dedup: {
    describe:
      "the dedup stage's decisions/s and per-item p50/p99 with 1M items in the window, against " +
      "the writer's rate",
    load: () => import("./dedup"),
  },
  parse: {
    describe: "feed parsing (the corpora and a 5,000-item RSS) against rss-parser and feed-parser",
    load: () => import("./parse"),
  },
  embed: {
    describe:
      "embedding throughput per provider (lexical, shipped USE-lite, HTTP to the simulator): " +
      "texts/s in batches of 32 and one at a time, load time, RSS",
    load: () => import("./embed"),
  },
  search: {
    describe:
      "hybrid search p50/p95 at 100k and 1M canonical items against full text alone; the " +
      "vector path alone (pgvector, portable) with recall@10",
    load: () => import("./search"),
  },
  msrp: {
    describe:
      "dedup-pairs on MSRP: k-fold cross-validated accuracy / P / R / F1 per retrieval radius",
    load: () => import("./msrp"),
  },
  extract: {
    describe:
      "language accuracy per group (short, long, mixed, other) by detector against the script " +
      "majority; the local extraction provider's items/s",
    load: () => import("./extract"),
  },
  spike: {
    describe:
      "seed 003's spike (open model, 5 → 400 req/s) on /api/news at cold cache with ingestion at " +
      "full speed, a source blackholed and one failing; a bare node:http server as the baseline",
    load: () => import("./spike"),
  },
  meaning: {
    describe:
      "stage 4 per model: retrieval recall@1/@10 (MSRP, Bangla, Bangla-English), MSRP pair AUC, " +
      "the grey band's calibration cross-validated",
    load: () => import("./meaning"),
  },
};

function usage(): string {
  const lines = Object.entries(BENCHMARKS).map(([name, b]) => `  ${name.padEnd(10)} ${b.describe}`);
  return ["usage: npm run -s bench -- <name> [options]", "", "benchmarks:", ...lines].join("\n");
}

async function main(): Promise<void> {
  const [name, ...args] = process.argv.slice(2);
  if (!name || name === "--help" || name === "-h") {
    console.error(usage());
    process.exitCode = name ? 0 : 2;
    return;
  }
  const bench = BENCHMARKS[name];
  if (!bench) {
    console.error(`unknown benchmark "${name}"\n\n${usage()}`);
    process.exitCode = 2;
    return;
  }
  await (await bench.load()).run(args);
}

main().catch((err) => {
  // A bad option is the caller's mistake: say what it was, without a stack trace.
  const code = String((err as { code?: unknown }).code ?? "");
  if (err instanceof Error && (err.name === "UsageError" || code.startsWith("ERR_PARSE_ARGS"))) {
    console.error(err.message);
    process.exitCode = 2;
    return;
  }
  console.error(err);
  process.exitCode = 1;
});
