/**
 * Queue benchmark: how many jobs per second the Postgres job queue (workers/queue) runs through
 * worker processes, how long a job waits from enqueue to claim, and how that compares with a
 * minimal SKIP LOCKED loop and, with --peers, with graphile-worker 0.17 and pg-boss 10.
 *
 *   npm run -s bench -- queue [--jobs N] [--json] [--workers 1,2,4] [--concurrency C]
 *                             [--batch B] [--pool P] [--latency-seconds S]
 *   npm run -s bench -- queue --peers [--runs 5] [--jobs 20000] [--json]
 *   (both: [--warmup W], jobs each system runs before it is measured; default 20,000, 0 = cold)
 *
 * PostgreSQL only (DATABASE_URL): the point is processes racing for rows, which the embedded
 * PGlite (one process, one connection) cannot do. Every system runs in a scratch database of its
 * own (ww_bench_<random>, ww_bench_graphile_…, ww_bench_pgboss_…) created on that server and
 * dropped at the end, even when the run fails or is interrupted. Results go to stdout (with
 * --json, one JSON line), progress to stderr.
 *
 * One measurement of one system (the same for all four): its worker processes (workers/queue/
 * testing/workerProcess.ts, no-op handlers, so the queue's own cost is all there is) are started,
 * run W warm-up jobs (--warmup, default 20,000; a worker lives for days, and a fresh process
 * runs its first jobs in V8's interpreter: wirewatch's first 20,000 cost 25 µs of CPU each, the
 * next 20,000 3–4 µs), and are idle (listening) before anything measured is enqueued; then
 *
 *   1. throughput: the parent enqueues N jobs through the system's own batch insert, 1,000 per
 *      statement, as fast as it can, while the workers run (enqueueing outpaces every system, so
 *      jobs/s is the drain rate, not the parent's pace). jobs/s = N / (first claim → empty
 *      table), both on the database clock: the first claim as the worker process saw it (its
 *      clock corrected to the server's, workerProcess.ts dbClockOffset), the first poll (every
 *      20 ms, clock_timestamp()) that finds no job left to run.
 *   2. latency: the parent enqueues at a steady half of the rate just measured, 100 jobs per
 *      statement, for S seconds (default 3): the workers keep up, so the wait is the system's
 *      own reaction. The wait of a job is its claim's timestamp minus its insert's, both the
 *      server's now(), each system's own columns: wirewatch's claim returns now() − run_at;
 *      graphile's locked_at − run_at; pg-boss' startedOn − createdOn; the raw loop's claim
 *      returns now() − run_at.
 *
 * Without --peers: wirewatch with 1, 2 and 4 processes, then the raw loop with the best count.
 * With --peers: one process each, concurrency 2,000, 20,000 jobs, R runs (default 5) in which
 * the four systems take turns, the order rotated each run so none always goes first after a
 * vacuum or last on a warm server; each run, min/median/max per system and the median ratios.
 *
 * How each system is configured, and why that is fair (one process each, concurrency 2,000):
 *   - wirewatch: concurrency 2,000, batchSize 1,000 (two claims in flight), a pool of 4 (+1
 *     LISTEN). Tried 500/1,000 batches and pools of 4/8 on this machine; 1,000 and 4 were best.
 *   - raw SKIP LOCKED loop: 4 connections each looping a claim of 1,000 (UPDATE … WHERE id IN
 *     (SELECT … LIMIT 1000 FOR UPDATE SKIP LOCKED) RETURNING) and a DELETE … = ANY($1), polling
 *     every 5 ms when empty: the floor of a SKIP LOCKED queue (no tokens, attempts, stats,
 *     heartbeats, worker state, sweeper, NOTIFY or bookkeeping).
 *   - graphile-worker 0.17: its performance page's throughput settings (worker.graphile.org/
 *     docs/performance: localQueue, completeJobBatchDelay 0, failJobBatchDelay 0), scaled to the
 *     same 2,000 jobs in flight: concurrentJobs 2,000, localQueue.size 1,000 (the batch we
 *     claim), maxPoolSize 10 (node-postgres' default; 4 ran slower here), its NOTIFY wake-up.
 *   - pg-boss 10: work() with batchSize 1,000 and includeMetadata (for the waits), two workers
 *     so 2,000 jobs can be in flight, pollingIntervalSeconds 0.5 (its floor), a pool of 10. A
 *     pg-boss worker waits out its polling interval after every batch, and nothing wakes it on
 *     insert from another process, so its rate is about workers × batch / 0.5 s and its waits
 *     are its polling; that is its design, measured as it is.
 * The machine is shared (2 cores): figures are noisy (±30 % between runs); ratios of medians of
 * alternating runs are what to read.
 */
import { parseArgs } from "node:util";
import pg from "pg";
import { config } from "@/lib/config";
import type { Database } from "@/lib/db";
import { createScratchDatabase, type ScratchDatabase } from "@/lib/scratchDatabase";
import { enqueue, type JobInput } from "@/workers/queue/enqueue";
import {
  RAW_JOBS_DDL,
  spawnWorkerProcess,
  type WorkerProcess,
  type WorkerProcessOptions,
  type WorkerResult,
} from "@/workers/queue/testing/workerProcess";

const QUEUE = "bench";
const ENQUEUE_BATCH = 1_000;
const PACED_BATCH = 100;
const POLL_EMPTY_MS = 20;

type SystemName = "wirewatch" | "raw" | "graphile" | "pg-boss";
const PEER_ORDER: SystemName[] = ["wirewatch", "raw", "graphile", "pg-boss"];

interface Options {
  jobs: number;
  json: boolean;
  peers: boolean;
  runs: number;
  workers: number[];
  concurrency: number;
  batch: number;
  pool: number;
  latencySeconds: number;
  /** Jobs each system runs before it is measured (its processes warmed up). */
  warmup: number;
}

type Payload = { n: number; phase: "w" | "s" | "p" };

/** One system under test: its database, its batch insert, its "nothing left" query. */
interface System {
  name: SystemName;
  url: string;
  process: Omit<WorkerProcessOptions, "url" | "queue">;
  reset(): Promise<void>;
  enqueue(batch: Payload[]): Promise<void>;
  /** Jobs not yet done, and the database clock (epoch ms) when it was counted. */
  left(): Promise<{ left: number; ms: number }>;
  close(): Promise<void>;
}

interface Measurement {
  system: SystemName;
  workers: number;
  jobsPerSec: number;
  enqueuePerSec: number;
  saturatedP50Ms: number;
  saturatedP99Ms: number;
  pacedRate: number;
  pacedJobs: number;
  p50Ms: number;
  p99Ms: number;
  startMs: number;
}

const log = (msg: string) => process.stderr.write(`${msg}\n`);
const fmt = (n: number, digits = 0) =>
  n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });

export async function run(args: string[]): Promise<void> {
  const opts = parseOptions(args);
  const url = config().DATABASE_URL;
  if (!url) {
    throw usageError(
      "the queue bench needs PostgreSQL: set DATABASE_URL (it races worker processes for rows, " +
        "which the embedded PGlite cannot do)",
    );
  }
  const bench = new Bench(url);
  try {
    if (opts.peers) await peersBench(bench, opts);
    else await ownBench(bench, opts);
  } finally {
    await bench.cleanup();
  }
}

/** wirewatch with 1, 2, 4 processes, then the raw loop with the best count. */
async function ownBench(bench: Bench, opts: Options): Promise<void> {
  const [wirewatch, raw] = [await bench.system("wirewatch"), await bench.system("raw")];
  log(
    `${fmt(opts.jobs)} jobs; workers ${opts.workers.join(", ")}; per process concurrency ` +
      `${opts.concurrency}, batch ${opts.batch}, pool ${opts.pool}`,
  );
  const results: Measurement[] = [];
  for (const workers of opts.workers) results.push(await bench.measure(wirewatch, workers, opts));
  const best = results.reduce((a, b) => (b.jobsPerSec > a.jobsPerSec ? b : a));
  const baseline = await bench.measure(raw, best.workers, opts);
  if (opts.json) {
    console.log(
      JSON.stringify({
        jobsPerSec: Math.round(best.jobsPerSec),
        baselineJobsPerSec: Math.round(baseline.jobsPerSec),
        ratio: Math.round((best.jobsPerSec / baseline.jobsPerSec) * 1000) / 1000,
        p50Ms: best.p50Ms,
        p99Ms: best.p99Ms,
        workers: best.workers,
      }),
    );
    return;
  }
  console.log(
    [
      `queue bench: ${fmt(opts.jobs)} jobs, no-op handler; per worker process: concurrency ` +
        `${opts.concurrency}, batchSize ${opts.batch}, pool ${opts.pool} (+1 LISTEN)`,
      "",
      ...table(results, (r) => `${r.workers} process(es)`),
      "",
      `raw SKIP LOCKED loop, ${best.workers} process(es) × ${opts.pool} connections, batch ` +
        `${opts.batch}: ${fmt(baseline.jobsPerSec)} jobs/s`,
      `best: ${best.workers} worker(s) at ${fmt(best.jobsPerSec)} jobs/s = ` +
        `${(best.jobsPerSec / baseline.jobsPerSec).toFixed(2)} × raw; enqueue→claim at half load ` +
        `p50 ${fmt(best.p50Ms, 1)} ms, p99 ${fmt(best.p99Ms, 1)} ms`,
      "jobs/s: first claim → empty (database clock). saturated wait: enqueued as fast as " +
        "possible, so mostly backlog. paced wait: enqueued at half the measured rate.",
    ].join("\n"),
  );
}

/** The four systems, one process each, R alternating runs; medians and their ratios. */
async function peersBench(bench: Bench, opts: Options): Promise<void> {
  const systems = [];
  for (const name of PEER_ORDER) systems.push(await bench.system(name));
  log(
    `${fmt(opts.jobs)} jobs, ${opts.runs} runs, one process each, concurrency ${opts.concurrency}`,
  );
  const byName = new Map<SystemName, Measurement[]>(PEER_ORDER.map((n) => [n, []]));
  const lines: string[] = [];
  for (let run = 0; run < opts.runs; run++) {
    const order = [...systems.slice(run % 4), ...systems.slice(0, run % 4)];
    for (const system of order) {
      const m = await bench.measure(system, 1, opts);
      byName.get(system.name)?.push(m);
      lines.push(
        `run ${run + 1}  ${system.name.padEnd(9)}  ${fmt(m.jobsPerSec).padStart(7)} jobs/s  ` +
          `paced p50 ${fmt(m.p50Ms, 1).padStart(6)} ms  p99 ${fmt(m.p99Ms, 1).padStart(6)} ms`,
      );
    }
  }
  const summary = PEER_ORDER.map((name) => {
    const ms = byName.get(name) ?? [];
    return {
      name,
      rate: stats(ms.map((m) => m.jobsPerSec)),
      p50: stats(ms.map((m) => m.p50Ms)),
      p99: stats(ms.map((m) => m.p99Ms)),
    };
  });
  const median = (name: SystemName) => summary.find((s) => s.name === name)?.rate.median ?? NaN;
  const ratios = {
    graphile: median("wirewatch") / median("graphile"),
    raw: median("wirewatch") / median("raw"),
    pgBoss: median("wirewatch") / median("pg-boss"),
  };
  if (opts.json) {
    console.log(
      JSON.stringify({
        runs: opts.runs,
        jobs: opts.jobs,
        systems: Object.fromEntries(summary.map((s) => [s.name, s])),
        ratios,
      }),
    );
    return;
  }
  const mmm = (s: { min: number; median: number; max: number }, d = 0) =>
    `${fmt(s.min, d)} / ${fmt(s.median, d)} / ${fmt(s.max, d)}`;
  console.log(
    [
      `queue bench with peers: ${fmt(opts.jobs)} no-op jobs, one process each, concurrency ` +
        `${opts.concurrency}, ${opts.runs} alternating runs (configuration: bench/queue.ts header)`,
      "",
      ...lines,
      "",
      "system     jobs/s min / median / max     paced p50 ms min/med/max   paced p99 ms min/med/max",
      ...summary.map(
        (s) =>
          `${s.name.padEnd(9)}  ${mmm(s.rate).padEnd(28)}  ${mmm(s.p50, 1).padEnd(25)}  ${mmm(s.p99, 1)}`,
      ),
      "",
      `median ratios: wirewatch/graphile ${ratios.graphile.toFixed(2)}, wirewatch/raw ` +
        `${ratios.raw.toFixed(2)}, wirewatch/pg-boss ${ratios.pgBoss.toFixed(2)}`,
      "jobs/s: first claim → empty (database clock); paced: enqueue → claim at half each " +
        "system's measured rate, each system's own timestamps (database clock)",
    ].join("\n"),
  );
}

function table(results: Measurement[], label: (r: Measurement) => string): string[] {
  const header = [
    "",
    "jobs/s",
    "enqueue/s",
    "saturated wait p50/p99 ms",
    "paced rate",
    "paced wait p50/p99 ms",
    "start ms",
  ];
  const rows = results.map((r) => [
    label(r),
    fmt(r.jobsPerSec),
    fmt(r.enqueuePerSec),
    `${fmt(r.saturatedP50Ms)} / ${fmt(r.saturatedP99Ms)}`,
    `${fmt(r.pacedRate)}/s × ${(r.pacedJobs / r.pacedRate).toFixed(1)} s`,
    `${fmt(r.p50Ms, 1)} / ${fmt(r.p99Ms, 1)}`,
    fmt(r.startMs),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0)))
      .join("  ");
  return [line(header), ...rows.map(line)];
}

// ---------------------------------------------------------------------------------------------

/** The scratch databases, the worker processes and the systems, all removed by cleanup(). */
class Bench {
  private readonly scratches: ScratchDatabase[] = [];
  private readonly systems = new Map<SystemName, System>();
  private readonly children = new Set<WorkerProcess>();
  private done: Promise<void> | undefined;
  private readonly onSignal = (signal: NodeJS.Signals) => {
    log(`${signal}: removing scratch databases`);
    this.cleanup().finally(() => process.exit(130));
  };

  constructor(private readonly serverUrl: string) {
    process.on("SIGINT", this.onSignal);
    process.on("SIGTERM", this.onSignal);
  }

  private async scratch(prefix: string): Promise<ScratchDatabase> {
    const s = await createScratchDatabase(prefix, this.serverUrl, { poolSize: 4 });
    this.scratches.push(s);
    return s;
  }

  async system(name: SystemName): Promise<System> {
    const known = this.systems.get(name);
    if (known) return known;
    const made =
      name === "wirewatch" || name === "raw"
        ? await ownSystem(name, await this.scratch("ww_bench"))
        : name === "graphile"
          ? await graphileSystem(await this.scratch("ww_bench_graphile"))
          : await pgBossSystem(await this.scratch("ww_bench_pgboss"));
    this.systems.set(name, made);
    return made;
  }

  /** Both phases on `workers` fresh processes of `system`. */
  async measure(system: System, workers: number, opts: Options): Promise<Measurement> {
    await system.reset();
    log(`${system.name}, ${workers} process(es): starting`);
    const procs = await this.start(workers, () =>
      spawnWorkerProcess({
        url: system.url,
        queue: QUEUE,
        concurrency: opts.concurrency,
        batchSize: opts.batch,
        poolSize: opts.pool,
        ...system.process,
      }),
    );
    let stopped = false;
    try {
      // Warm-up, the same for every system: a long-running worker runs compiled code, a fresh
      // process runs its first jobs in V8's interpreter. Measured on this machine, wirewatch's
      // first 20,000 jobs in a new process cost 25 µs of CPU each, the next 20,000 3-4 µs; the
      // raw loop's few lines warm up within its first claim. --warmup 0 measures a cold start.
      for (let from = 0; from < opts.warmup; from += ENQUEUE_BATCH) {
        const size = Math.min(ENQUEUE_BATCH, opts.warmup - from);
        await system.enqueue(Array.from({ length: size }, (_, i) => ({ n: from + i, phase: "w" })));
      }
      if (opts.warmup > 0) await waitEmpty(system);
      const n = opts.jobs;
      const t0 = performance.now();
      for (let from = 0; from < n; from += ENQUEUE_BATCH) {
        const size = Math.min(ENQUEUE_BATCH, n - from);
        await system.enqueue(Array.from({ length: size }, (_, i) => ({ n: from + i, phase: "s" })));
      }
      const enqueueMs = performance.now() - t0;
      const endMs = await waitEmpty(system);
      const firsts = procs
        .flatMap((p) => p.lines)
        .flatMap((l) => {
          const m = /^first-claim (\S+)$/.exec(l);
          return m ? [Number(m[1])] : [];
        });
      if (firsts.length === 0) throw new Error(`${system.name}: no process reported a claim`);
      const jobsPerSec = n / ((endMs - Math.min(...firsts)) / 1000);
      log(`  ${fmt(jobsPerSec)} jobs/s (enqueued in ${fmt(enqueueMs)} ms)`);

      const pacedRate = jobsPerSec / 2;
      const pacedJobs = Math.max(
        PACED_BATCH,
        Math.min(n, Math.round(pacedRate * opts.latencySeconds)),
      );
      const intervalMs = (PACED_BATCH / pacedRate) * 1000;
      const pacedStart = performance.now();
      for (let from = 0, i = 0; from < pacedJobs; from += PACED_BATCH, i++) {
        const wait = pacedStart + i * intervalMs - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        const size = Math.min(PACED_BATCH, pacedJobs - from);
        await system.enqueue(Array.from({ length: size }, (_, k) => ({ n: from + k, phase: "p" })));
      }
      await waitEmpty(system);

      stopped = true;
      const results = await this.stop(procs);
      const saturated = percentiles(results.flatMap((r) => r.waits.s));
      const paced = percentiles(results.flatMap((r) => r.waits.p));
      const counted = results.reduce((a, r) => a + r.waits.s.length, 0);
      if (counted !== n) throw new Error(`${system.name}: ${counted} claims seen, ${n} jobs`);
      log(`  paced ${fmt(pacedRate)}/s: p50 ${fmt(paced.p50, 1)} ms, p99 ${fmt(paced.p99, 1)} ms`);
      return {
        system: system.name,
        workers,
        jobsPerSec,
        enqueuePerSec: n / (enqueueMs / 1000),
        saturatedP50Ms: saturated.p50,
        saturatedP99Ms: saturated.p99,
        pacedRate,
        pacedJobs,
        p50Ms: paced.p50,
        p99Ms: paced.p99,
        startMs: Math.max(...procs.map((p) => p.startMs)),
      };
    } finally {
      if (!stopped) await this.stop(procs).catch(() => undefined);
    }
  }

  private async start(n: number, start: () => Promise<WorkerProcess>): Promise<WorkerProcess[]> {
    const settled = await Promise.allSettled(Array.from({ length: n }, start));
    const procs = settled.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
    for (const p of procs) this.children.add(p);
    const failed = settled.find((s) => s.status === "rejected");
    if (failed) {
      await this.stop(procs).catch(() => undefined);
      throw (failed as PromiseRejectedResult).reason;
    }
    return procs;
  }

  /** SIGTERM, then each process's result line. */
  private async stop(procs: WorkerProcess[]): Promise<WorkerResult[]> {
    return Promise.all(
      procs.map(async (p) => {
        const kill = setTimeout(() => p.child.kill("SIGKILL"), 15_000);
        const exit = await p.terminate();
        clearTimeout(kill);
        this.children.delete(p);
        if (exit.code !== 0)
          throw new Error(`worker ${p.id} exited ${exit.code ?? exit.signal}:\n${p.stderr()}`);
        const line = p.lines.find((l) => l.startsWith("result "));
        if (!line) throw new Error(`worker ${p.id} printed no result:\n${p.stderr()}`);
        return JSON.parse(line.slice("result ".length)) as WorkerResult;
      }),
    );
  }

  cleanup(): Promise<void> {
    this.done ??= (async () => {
      process.off("SIGINT", this.onSignal);
      process.off("SIGTERM", this.onSignal);
      for (const c of this.children) c.child.kill("SIGKILL");
      await Promise.all([...this.children].map((c) => c.exited));
      for (const s of this.systems.values()) await s.close().catch(() => undefined);
      for (const s of this.scratches) {
        await s.dispose();
        log(`removed scratch database ${s.db.location}`);
      }
    })();
    return this.done;
  }
}

async function sqlClient(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return client;
}

const LEFT_SQL = (from: string) =>
  `SELECT (SELECT count(*) FROM ${from})::int AS left,
          (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS ms`;

/** wirewatch's queue, or the raw loop on raw_jobs, in the same migrated scratch database. */
async function ownSystem(name: "wirewatch" | "raw", scratch: ScratchDatabase): Promise<System> {
  const client = await sqlClient(scratch.where);
  const db: Database = scratch.db;
  for (const ddl of RAW_JOBS_DDL) await client.query(ddl);
  const table = name === "wirewatch" ? "jobs" : "raw_jobs";
  return {
    name,
    url: scratch.where,
    process:
      name === "wirewatch"
        ? { mode: "noop", stopDeadlineMs: 5_000 }
        : { mode: "baseline", pollMs: 5 },
    reset: async () => {
      await client.query(
        name === "wirewatch"
          ? "TRUNCATE jobs, lease_events, queue_claim_stats, job_failures, queue_workers"
          : "TRUNCATE raw_jobs",
      );
      await client.query(`VACUUM ANALYZE ${table}`);
    },
    enqueue: async (batch) => {
      if (name === "wirewatch") {
        await enqueue(
          db,
          QUEUE,
          batch.map((payload): JobInput => ({ payload })),
        );
        return;
      }
      await client.query(
        "INSERT INTO raw_jobs (payload) SELECT value FROM jsonb_array_elements($1::jsonb)",
        [JSON.stringify(batch)],
      );
    },
    left: async () => (await client.query(LEFT_SQL(table))).rows[0],
    close: () => client.end(),
  };
}

/** graphile-worker 0.17 in its own database; its schema installed up front. */
async function graphileSystem(scratch: ScratchDatabase): Promise<System> {
  const { makeWorkerUtils } = await import("graphile-worker");
  const utils = await makeWorkerUtils({ connectionString: scratch.where });
  await utils.migrate();
  const client = await sqlClient(scratch.where);
  return {
    name: "graphile",
    url: scratch.where,
    process: { mode: "graphile", poolSize: 10 },
    reset: async () => {
      await client.query("DELETE FROM graphile_worker._private_jobs");
      await client.query("VACUUM ANALYZE graphile_worker._private_jobs");
    },
    enqueue: async (batch) => {
      await utils.addJobs(batch.map((payload) => ({ identifier: QUEUE, payload })));
    },
    left: async () => (await client.query(LEFT_SQL("graphile_worker._private_jobs"))).rows[0],
    close: async () => {
      await utils.release();
      await client.end();
    },
  };
}

/** pg-boss 10 in its own database; its schema and queue made up front. */
async function pgBossSystem(scratch: ScratchDatabase): Promise<System> {
  const { default: PgBoss } = await import("pg-boss");
  const boss = new PgBoss({
    connectionString: scratch.where,
    max: 4,
    schedule: false,
    supervise: false,
  });
  boss.on("error", (err) => log(`pg-boss (parent): ${err.message}`));
  await boss.start();
  await boss.createQueue(QUEUE);
  const client = await sqlClient(scratch.where);
  return {
    name: "pg-boss",
    url: scratch.where,
    process: { mode: "pgboss", poolSize: 10, pollMs: 500 },
    reset: async () => {
      // Completed jobs stay in pgboss.job until their retention ends: earlier runs' are removed.
      await client.query("DELETE FROM pgboss.job WHERE name = $1", [QUEUE]);
      await client.query("VACUUM ANALYZE pgboss.job");
    },
    enqueue: async (batch) => {
      await boss.insert(batch.map((data) => ({ name: QUEUE, data })));
    },
    left: async () =>
      (
        await client.query(
          `SELECT (SELECT count(*) FROM pgboss.job
                   WHERE name = $1 AND state IN ('created', 'retry', 'active'))::int AS left,
                  (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS ms`,
          [QUEUE],
        )
      ).rows[0],
    close: async () => {
      await boss.stop({ graceful: false, wait: true });
      await client.end();
    },
  };
}

/** Polls until no job is left; returns that moment by the database clock (epoch ms). */
async function waitEmpty(system: System): Promise<number> {
  for (;;) {
    const { left, ms } = await system.left();
    if (left === 0) return ms;
    await new Promise((r) => setTimeout(r, POLL_EMPTY_MS));
  }
}

/** p50 and p99, interpolated between ranks (as percentile_cont). */
function percentiles(values: number[]): { p50: number; p99: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => {
    if (sorted.length === 0) return NaN;
    const rank = q * (sorted.length - 1);
    const lo = Math.floor(rank);
    const hi = Math.ceil(rank);
    const v = (sorted[lo] ?? 0) + ((sorted[hi] ?? 0) - (sorted[lo] ?? 0)) * (rank - lo);
    return Math.round(v * 10) / 10;
  };
  return { p50: at(0.5), p99: at(0.99) };
}

function stats(values: number[]): { min: number; median: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length / 2;
  const median =
    sorted.length % 2 === 1
      ? (sorted[Math.floor(mid)] ?? NaN)
      : ((sorted[mid - 1] ?? NaN) + (sorted[mid] ?? NaN)) / 2;
  return { min: sorted[0] ?? NaN, median, max: sorted.at(-1) ?? NaN };
}

function usageError(message: string): Error {
  const err = new Error(message);
  err.name = "UsageError";
  return err;
}

function parseOptions(args: string[]): Options {
  const { values } = parseArgs({
    args,
    options: {
      jobs: { type: "string" },
      json: { type: "boolean", default: false },
      peers: { type: "boolean", default: false },
      runs: { type: "string" },
      workers: { type: "string", default: "1,2,4" },
      concurrency: { type: "string", default: "2000" },
      batch: { type: "string", default: "1000" },
      pool: { type: "string", default: "4" },
      "latency-seconds": { type: "string", default: "3" },
      warmup: { type: "string", default: "20000" },
    },
    strict: true,
  });
  const positive = (name: string, v: string) => {
    const n = Number(v.replaceAll("_", ""));
    if (!Number.isInteger(n) || n < 1) throw usageError(`--${name} must be a positive integer`);
    return n;
  };
  const wholeNumber = (name: string, v: string) => {
    const n = Number(v.replaceAll("_", ""));
    if (!Number.isInteger(n) || n < 0) throw usageError(`--${name} must be a whole number ≥ 0`);
    return n;
  };
  const latencySeconds = Number(values["latency-seconds"]);
  if (!(latencySeconds > 0)) throw usageError("--latency-seconds must be a positive number");
  const peers = values.peers;
  if (values.runs !== undefined && !peers) throw usageError("--runs needs --peers");
  return {
    jobs: positive("jobs", values.jobs ?? (peers ? "20000" : "100000")),
    json: values.json,
    peers,
    runs: positive("runs", values.runs ?? (peers ? "5" : "1")),
    workers: values.workers.split(",").map((w) => positive("workers", w.trim())),
    concurrency: positive("concurrency", values.concurrency),
    batch: positive("batch", values.batch),
    pool: positive("pool", values.pool),
    latencySeconds,
    warmup: wholeNumber("warmup", values.warmup),
  };
}
