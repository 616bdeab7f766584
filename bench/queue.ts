/**
 * Queue benchmark: how many jobs per second the Postgres job queue (workers/queue) runs through
 * worker processes, how long a job waits from enqueue to start, and how far that is from a
 * minimal SKIP LOCKED loop.
 *
 *   npm run -s bench -- queue [--jobs N] [--json] [--workers 1,2,4] [--concurrency C]
 *                             [--batch B] [--pool P] [--latency-seconds S]
 *
 * PostgreSQL only (DATABASE_URL): the point is several processes racing for rows, which the
 * embedded PGlite (one process, one connection) cannot do. Runs in a scratch database
 * (ww_bench_<random>) created on that server and dropped at the end, even when the run fails or
 * is interrupted. Results go to stdout (with --json, one JSON line for the best worker count),
 * progress to stderr.
 *
 * What is measured, for 1, 2 and 4 worker processes (workers/queue/testing/workerProcess.ts, the
 * real startQueueWorker with a handler that does nothing, so the queue's own cost is all there
 * is). The workers are started and idle (LISTENing) before anything is enqueued.
 *
 *   1. throughput: the parent enqueues N jobs (default 100,000) through enqueue(), 1,000 per
 *      statement, as fast as it can, while the workers run. As fast as possible because the
 *      question is the queue's capacity: enqueueing outpaces the workers, so they always find
 *      work and jobs/s is their drain rate, not the parent's pace. jobs/s = N / (first claim →
 *      last completion), both by the database clock (lease_events.at of the first claim; the
 *      first poll that finds the jobs table empty, every 20 ms). The enqueue→start wait of these
 *      jobs is reported too, but under saturation it is mostly the backlog (about half of
 *      N / rate), not the queue's reaction time.
 *   2. latency: the parent enqueues at a steady half of the rate just measured, 100 jobs per
 *      statement, for S seconds (default 3): the workers keep up, so the wait is the queue's
 *      own reaction (NOTIFY → wake → claim). p50/p99 come from lease_events.wait_ms of the
 *      claims (now() − run_at at the claim, database clock; run_at is the enqueue time).
 *
 * The baseline, for the best worker count: the same number of processes, each with the same
 * number of connections (--pool, plain `pg` clients), each connection looping a minimal claim
 * on a minimal table (raw_jobs: id, payload, run_at, leased_until, and a partial index for
 * the claim like jobs_claim_idx) — UPDATE … SET leased_until WHERE id IN (SELECT … WHERE due
 * ORDER BY run_at LIMIT B FOR UPDATE SKIP LOCKED) RETURNING — then DELETE … WHERE id = ANY($1),
 * polling every 5 ms when it finds nothing. The same N jobs with the same payloads, enqueued by
 * the parent the same way (1,000 per INSERT, as fast as it can, while the loops run), and the
 * same batch size B.
 *
 * Why the baseline is fair. Same server, same machine, same number of processes, connections
 * and jobs per claim, the same enqueue running alongside, and the same clock (first claim →
 * empty table). It is the floor of a SKIP LOCKED queue: what the claim and the delete cost
 * when there are no lease tokens, no attempts, no lease events, no heartbeats, no worker state,
 * no sweeper, no NOTIFY and no handler bookkeeping. Everything the real queue pays on top of it
 * (its claim also writes a lease_events row per job; its completion is fenced on id, attempt
 * and token) is what the ratio shows.
 *
 * Worker settings (tuned for throughput with a no-op handler on a 2-core machine; the
 * --concurrency/--batch/--pool defaults): batchSize 1,000 and concurrency 2,000 per process, a
 * pool of 4 connections. A process claims in one loop and writes completions one flush at a
 * time, so large batches are what amortise the round trips (250 or 500 per claim ran at half
 * the rate or less); a concurrency above the batch lets the next claim go out while the
 * previous batch's completion is being written. Tried: 250/500, 500/500, 500/2,000,
 * 1,000/2,000. On a shared 2-core machine the figures are noisy (±30 % between runs).
 */
import { parseArgs } from "node:util";
import pg from "pg";
import { config } from "@/lib/config";
import type { Database } from "@/lib/db";
import { createScratchDatabase } from "@/lib/scratchDatabase";
import { enqueue, type JobInput } from "@/workers/queue/enqueue";
import {
  RAW_JOBS_DDL,
  spawnWorkerProcess,
  type WorkerProcess,
} from "@/workers/queue/testing/workerProcess";

const QUEUE = "bench";
const ENQUEUE_BATCH = 1_000;
const PACED_BATCH = 100;
const POLL_EMPTY_MS = 20;

interface Options {
  jobs: number;
  json: boolean;
  workers: number[];
  concurrency: number;
  batch: number;
  pool: number;
  latencySeconds: number;
}

interface QueueResult {
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
      "the queue bench needs PostgreSQL: set DATABASE_URL (it races several worker processes " +
        "for rows, which the embedded PGlite cannot do)",
    );
  }
  const scratch = await openScratch(url);
  const { db, where } = scratch;
  try {
    log(
      `database: ${db.location}; ${fmt(opts.jobs)} jobs; workers ${opts.workers.join(", ")}; ` +
        `per process concurrency ${opts.concurrency}, batch ${opts.batch}, pool ${opts.pool}`,
    );
    for (const ddl of RAW_JOBS_DDL) await db.prisma.$executeRawUnsafe(ddl);
    const payloads = Array.from({ length: opts.jobs }, (_, n) => ({ n }));

    const results: QueueResult[] = [];
    for (const workers of opts.workers) {
      results.push(await queueRun(db, where, workers, payloads, opts, scratch.children));
    }
    const best = results.reduce((a, b) => (b.jobsPerSec > a.jobsPerSec ? b : a));
    const baseline = await baselineRun(db, where, best.workers, payloads, opts, scratch.children);

    if (opts.json) {
      const ratio = best.jobsPerSec / baseline;
      console.log(
        JSON.stringify({
          jobsPerSec: Math.round(best.jobsPerSec),
          baselineJobsPerSec: Math.round(baseline),
          ratio: Math.round(ratio * 1000) / 1000,
          p50Ms: best.p50Ms,
          p99Ms: best.p99Ms,
          workers: best.workers,
        }),
      );
    } else {
      printTable(results, best, baseline, opts);
    }
  } finally {
    await scratch.cleanup();
  }
}

async function queueRun(
  db: Database,
  url: string,
  workers: number,
  payloads: Record<string, unknown>[],
  opts: Options,
  children: Set<WorkerProcess>,
): Promise<QueueResult> {
  await db.prisma.$executeRawUnsafe("TRUNCATE jobs, lease_events, job_failures, queue_workers");
  await vacuum(db, "jobs");
  log(`queue, ${workers} worker process(es): starting`);
  const procs = await startAll(children, workers, () =>
    spawnWorkerProcess({
      url,
      queue: QUEUE,
      mode: "noop",
      concurrency: opts.concurrency,
      batchSize: opts.batch,
      poolSize: opts.pool,
      stopDeadlineMs: 5_000,
    }),
  );
  const startMs = Math.max(...procs.map((p) => p.startMs));
  try {
    // 1. Throughput: everything as fast as possible.
    const batches = chunk(
      payloads.map((payload): JobInput => ({ payload })),
      ENQUEUE_BATCH,
    );
    const t0 = performance.now();
    for (const batch of batches) await enqueue(db, QUEUE, batch);
    const enqueueMs = performance.now() - t0;
    log(`  enqueued ${fmt(payloads.length)} in ${fmt(enqueueMs)} ms; draining`);
    const endMs = await waitEmpty(db, "jobs");
    const firstMs = await dbMs(
      db,
      "SELECT extract(epoch FROM min(at)) * 1000 AS ms FROM lease_events WHERE kind = 'claimed'",
    );
    const claims = await countRows(db, "SELECT count(*) FROM lease_events WHERE kind = 'claimed'");
    if (claims !== payloads.length) {
      throw new Error(`expected ${payloads.length} claims, found ${claims}`);
    }
    const saturated = await waitPercentiles(db);
    const jobsPerSec = payloads.length / ((endMs - firstMs) / 1000);
    log(`  ${fmt(jobsPerSec)} jobs/s; waits p50 ${saturated.p50} ms, p99 ${saturated.p99} ms`);

    // 2. Latency: a steady half of that rate.
    await db.prisma.$executeRawUnsafe("TRUNCATE lease_events");
    const pacedRate = jobsPerSec / 2;
    const pacedJobs = Math.max(
      PACED_BATCH,
      Math.min(payloads.length, Math.round(pacedRate * opts.latencySeconds)),
    );
    const intervalMs = (PACED_BATCH / pacedRate) * 1000;
    log(`  paced: ${fmt(pacedJobs)} jobs at ${fmt(pacedRate)} jobs/s, ${PACED_BATCH} at a time`);
    const pacedStart = performance.now();
    const pacedBatches = chunk(
      payloads.slice(0, pacedJobs).map((payload): JobInput => ({ payload })),
      PACED_BATCH,
    );
    for (const [i, batch] of pacedBatches.entries()) {
      const due = pacedStart + i * intervalMs;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      await enqueue(db, QUEUE, batch);
    }
    await waitEmpty(db, "jobs");
    const paced = await waitPercentiles(db);
    log(`  paced waits p50 ${paced.p50} ms, p99 ${paced.p99} ms`);
    return {
      workers,
      jobsPerSec,
      enqueuePerSec: payloads.length / (enqueueMs / 1000),
      saturatedP50Ms: saturated.p50,
      saturatedP99Ms: saturated.p99,
      pacedRate,
      pacedJobs,
      p50Ms: paced.p50,
      p99Ms: paced.p99,
      startMs,
    };
  } finally {
    await stopAll(children, procs);
  }
}

async function baselineRun(
  db: Database,
  url: string,
  workers: number,
  payloads: Record<string, unknown>[],
  opts: Options,
  children: Set<WorkerProcess>,
): Promise<number> {
  await db.prisma.$executeRawUnsafe("TRUNCATE raw_jobs");
  await vacuum(db, "raw_jobs");
  log(`baseline, ${workers} process(es) × ${opts.pool} connections: starting`);
  const procs = await startAll(children, workers, () =>
    spawnWorkerProcess({
      url,
      queue: QUEUE,
      mode: "baseline",
      batchSize: opts.batch,
      poolSize: opts.pool,
      pollMs: 5,
    }),
  );
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const batches = chunk(
      payloads.map((p) => JSON.stringify(p)),
      ENQUEUE_BATCH,
    );
    const t0 = performance.now();
    for (const batch of batches) {
      await client.query(
        "INSERT INTO raw_jobs (payload) SELECT value FROM jsonb_array_elements($1::jsonb)",
        [`[${batch.join(",")}]`],
      );
    }
    log(`  enqueued ${fmt(payloads.length)} in ${fmt(performance.now() - t0)} ms; draining`);
    const endMs = await waitEmpty(db, "raw_jobs");
    const firsts = procs
      .flatMap((p) => p.lines)
      .map((l) => /^first-claim (\S+)$/.exec(l)?.[1])
      .filter((v): v is string => v !== undefined)
      .map(Number);
    if (firsts.length === 0) throw new Error("no baseline process reported its first claim");
    const jobsPerSec = payloads.length / ((endMs - Math.min(...firsts)) / 1000);
    log(`  ${fmt(jobsPerSec)} jobs/s`);
    return jobsPerSec;
  } finally {
    await client.end().catch(() => undefined);
    await stopAll(children, procs);
  }
}

function printTable(results: QueueResult[], best: QueueResult, baseline: number, opts: Options) {
  const header = [
    "workers",
    "jobs/s",
    "per worker",
    "enqueue/s",
    "saturated wait p50/p99 ms",
    "paced rate",
    "paced wait p50/p99 ms",
    "start ms",
  ];
  const rows = results.map((r) => [
    String(r.workers),
    fmt(r.jobsPerSec),
    fmt(r.jobsPerSec / r.workers),
    fmt(r.enqueuePerSec),
    `${fmt(r.saturatedP50Ms)} / ${fmt(r.saturatedP99Ms)}`,
    `${fmt(r.pacedRate)}/s × ${(r.pacedJobs / r.pacedRate).toFixed(1)} s`,
    `${fmt(r.p50Ms)} / ${fmt(r.p99Ms)}`,
    fmt(r.startMs),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0)))
      .join("  ");
  const out = [
    `queue bench: ${fmt(opts.jobs)} jobs, no-op handler; per worker process: concurrency ` +
      `${opts.concurrency}, batchSize ${opts.batch}, pool ${opts.pool} (+1 LISTEN)`,
    "",
    line(header),
    ...rows.map(line),
    "",
    `baseline (raw SKIP LOCKED claim + DELETE, ${best.workers} process(es) × ${opts.pool} ` +
      `connections, batch ${opts.batch}): ${fmt(baseline)} jobs/s`,
    `best: ${best.workers} worker(s) at ${fmt(best.jobsPerSec)} jobs/s = ` +
      `${(best.jobsPerSec / baseline).toFixed(2)} × baseline; enqueue→start at half load ` +
      `p50 ${fmt(best.p50Ms)} ms, p99 ${fmt(best.p99Ms)} ms`,
    "jobs/s: first claim → last completion (database clock). saturated wait: enqueued as fast " +
      "as possible, so mostly backlog. paced wait: enqueued at half the measured rate.",
  ];
  console.log(out.join("\n"));
}

// ---------------------------------------------------------------------------------------------

async function startAll(
  children: Set<WorkerProcess>,
  n: number,
  start: () => Promise<WorkerProcess>,
): Promise<WorkerProcess[]> {
  const settled = await Promise.allSettled(Array.from({ length: n }, start));
  const procs = settled.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
  for (const p of procs) children.add(p);
  const failed = settled.find((s) => s.status === "rejected");
  if (failed) {
    await stopAll(children, procs);
    throw (failed as PromiseRejectedResult).reason;
  }
  return procs;
}

async function stopAll(children: Set<WorkerProcess>, procs: WorkerProcess[]): Promise<void> {
  await Promise.all(
    procs.map(async (p) => {
      const kill = setTimeout(() => p.child.kill("SIGKILL"), 10_000);
      const exit = await p.terminate();
      clearTimeout(kill);
      children.delete(p);
      if (exit.code !== 0) log(`worker ${p.id} exited ${exit.code ?? exit.signal}:\n${p.stderr()}`);
    }),
  );
}

/** Polls until the table is empty; returns that moment by the database clock (epoch ms). */
async function waitEmpty(db: Database, table: "jobs" | "raw_jobs"): Promise<number> {
  for (;;) {
    const rows = await db.prisma.$queryRawUnsafe<{ empty: boolean; ms: number }[]>(
      `SELECT NOT EXISTS (SELECT 1 FROM ${table}) AS empty,
              (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS ms`,
    );
    const row = rows[0];
    if (row?.empty) return row.ms;
    await new Promise((r) => setTimeout(r, POLL_EMPTY_MS));
  }
}

async function dbMs(db: Database, sql: string): Promise<number> {
  const rows = await db.prisma.$queryRawUnsafe<{ ms: number | string | null }[]>(sql);
  const ms = Number(rows[0]?.ms);
  if (!Number.isFinite(ms)) throw new Error(`no value from: ${sql}`);
  return ms;
}

async function countRows(db: Database, sql: string): Promise<number> {
  const rows = await db.prisma.$queryRawUnsafe<{ count: bigint }[]>(sql);
  return Number(rows[0]?.count ?? 0);
}

async function waitPercentiles(db: Database): Promise<{ p50: number; p99: number }> {
  const rows = await db.prisma.$queryRawUnsafe<{ p50: number; p99: number }[]>(
    `SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY wait_ms)::float8 AS p50,
            percentile_cont(0.99) WITHIN GROUP (ORDER BY wait_ms)::float8 AS p99
     FROM lease_events WHERE kind = 'claimed'`,
  );
  const round = (v: number | undefined) => Math.round((v ?? Number.NaN) * 10) / 10;
  return { p50: round(rows[0]?.p50), p99: round(rows[0]?.p99) };
}

/** Each run starts without the previous run's dead rows (best effort). */
async function vacuum(db: Database, table: string): Promise<void> {
  await db.prisma.$executeRawUnsafe(`VACUUM ANALYZE ${table}`).catch(() => undefined);
}

function chunk<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

interface Scratch {
  db: Database;
  where: string;
  children: Set<WorkerProcess>;
  cleanup(): Promise<void>;
}

/**
 * A fresh, migrated database that cleanup() removes, after killing any worker process still
 * running on it; also on SIGINT/SIGTERM.
 */
async function openScratch(serverUrl: string): Promise<Scratch> {
  const scratch = await createScratchDatabase("ww_bench", serverUrl, { poolSize: 4 });
  const label = scratch.db.location;
  const children = new Set<WorkerProcess>();
  let done: Promise<void> | undefined;
  const cleanup = () => {
    done ??= (async () => {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
      for (const c of children) c.child.kill("SIGKILL");
      await Promise.all([...children].map((c) => c.exited));
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
  return { db: scratch.db, where: scratch.where, children, cleanup };
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
      jobs: { type: "string", default: "100000" },
      json: { type: "boolean", default: false },
      workers: { type: "string", default: "1,2,4" },
      concurrency: { type: "string", default: "2000" },
      batch: { type: "string", default: "1000" },
      pool: { type: "string", default: "4" },
      "latency-seconds": { type: "string", default: "3" },
    },
    strict: true,
  });
  const positive = (name: string, v: string) => {
    const n = Number(v.replaceAll("_", ""));
    if (!Number.isInteger(n) || n < 1) throw usageError(`--${name} must be a positive integer`);
    return n;
  };
  const latencySeconds = Number(values["latency-seconds"]);
  if (!(latencySeconds > 0)) throw usageError("--latency-seconds must be a positive number");
  return {
    jobs: positive("jobs", values.jobs),
    json: values.json,
    workers: values.workers.split(",").map((w) => positive("workers", w.trim())),
    concurrency: positive("concurrency", values.concurrency),
    batch: positive("batch", values.batch),
    pool: positive("pool", values.pool),
    latencySeconds,
  };
}
