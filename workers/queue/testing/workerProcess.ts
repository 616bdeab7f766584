/**
 * A queue worker in a process of its own, for tests that kill real processes and for the queue
 * benchmark. Run it from the project root (migrations are read from the working directory):
 *
 *   node --import tsx workers/queue/testing/workerProcess.ts --url postgres://… --queue q \
 *     --mode noop|ledger|baseline|graphile|pgboss [--concurrency C] [--batch B] [--lease S] [--sweep-ms M]
 *     [--poll-ms M] [--sleep-ms M] [--pool P] [--stop-deadline-ms M] [--worker-id ID]
 *
 * `node --import tsx` starts in about half a second here; the `tsx` binary is slower (it starts a
 * second node process). spawnWorkerProcess() below does this and waits for the ready line.
 *
 * Modes:
 *   noop      the handler does nothing (benchmark).
 *   ledger    the handler sleeps --sleep-ms (or the job's payload.sleepMs), giving up if its
 *             lease is lost, then in one statement records the job's effect in `effects`
 *             (INSERT … ON CONFLICT DO NOTHING: a re-run adds nothing) and appends the run to
 *             `runs` (every run, so re-runs are visible). createLedgerTables() makes both.
 *   baseline  no queue code at all: --pool plain pg connections, each looping a minimal
 *             SKIP LOCKED claim (UPDATE … WHERE id IN (SELECT … FOR UPDATE SKIP LOCKED LIMIT B)
 *             RETURNING) and a DELETE … WHERE id = ANY($1) on `raw_jobs` (createRawJobsTable()),
 *             polling every --poll-ms when empty.
 *   graphile  graphile-worker 0.17 with a no-op task (the queue bench's peer): --concurrency
 *             concurrent jobs, a local queue of --batch jobs, batched completion (see bench/queue.ts).
 *   pgboss    pg-boss 10 with a no-op handler: --concurrency / --batch workers, each fetching
 *             --batch jobs, polling every --poll-ms (pg-boss' floor is 500 ms).
 *
 * noop, baseline, graphile and pgboss record, for the bench, when the first job was claimed and
 * each job's wait from enqueue to claim, both by the database clock (each system's own claim
 * and insert timestamps where it has them; the process's clock corrected to the server's
 * otherwise), by payload phase ("s" saturated, "p" paced): `first-claim <epoch ms>` when it
 * happens, and the waits as one `result <json>` line before `stopped`. Jobs of phase "w" (the
 * bench's warm-up) are run and not recorded.
 *
 * Prints `ready <workerId>` on stdout once running. SIGTERM (or SIGINT) calls
 * worker.stop(--stop-deadline-ms), closes the database, prints `stopped <workerId> <counters>`
 * and exits 0.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import pg from "pg";
import { type Database, openDatabase } from "@/lib/db";
import { sleep } from "@/lib/sleep";
import { type JobHandler, startQueueWorker } from "../queueWorker";

export type WorkerMode = "noop" | "ledger" | "baseline" | "graphile" | "pgboss";
const MODES: readonly WorkerMode[] = ["noop", "ledger", "baseline", "graphile", "pgboss"];

/** What a bench worker process measured (its `result` line). */
export interface WorkerResult {
  /** Epoch ms, database clock; null when it claimed nothing. */
  firstClaimMs: number | null;
  /** Enqueue → claim, ms, by the payload's phase ("s" saturated, "p" paced). */
  waits: { s: number[]; p: number[] };
}

export interface WorkerProcessOptions {
  url: string;
  queue: string;
  mode: WorkerMode;
  concurrency?: number;
  batchSize?: number;
  leaseSeconds?: number;
  sweepMs?: number;
  pollMs?: number;
  /** ledger: how long each handler sleeps before its effect (payload.sleepMs overrides). */
  sleepMs?: number;
  poolSize?: number;
  /** What SIGTERM gives jobs in flight before their leases are released. */
  stopDeadlineMs?: number;
  reportMs?: number;
  workerId?: string;
}

const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const THIS_FILE = fileURLToPath(import.meta.url);

/** The effects ledger the `ledger` mode writes: one row per job ever done, one per run. */
export async function createLedgerTables(db: Database): Promise<void> {
  await db.prisma.$executeRawUnsafe(`
    CREATE TABLE IF NOT EXISTS effects (
      job_key text PRIMARY KEY,
      value bigint,
      worker text NOT NULL,
      attempt int NOT NULL,
      at timestamptz NOT NULL DEFAULT clock_timestamp()
    )`);
  await db.prisma.$executeRawUnsafe(`
    CREATE TABLE IF NOT EXISTS runs (
      id bigserial PRIMARY KEY,
      job_key text NOT NULL,
      attempt int NOT NULL,
      worker text NOT NULL,
      at timestamptz NOT NULL DEFAULT clock_timestamp()
    )`);
}

/** The baseline's minimal job table: a due time, a lease end, a payload; nothing else. */
export const RAW_JOBS_DDL = [
  `CREATE TABLE IF NOT EXISTS raw_jobs (
     id bigserial PRIMARY KEY,
     payload jsonb NOT NULL DEFAULT '{}',
     run_at timestamptz NOT NULL DEFAULT now(),
     leased_until timestamptz
   )`,
  "CREATE INDEX IF NOT EXISTS raw_jobs_claim_idx ON raw_jobs (run_at) WHERE leased_until IS NULL",
];

function toArgs(o: WorkerProcessOptions): string[] {
  const args = ["--url", o.url, "--queue", o.queue, "--mode", o.mode];
  const add = (name: string, v: number | string | undefined) => {
    if (v !== undefined) args.push(`--${name}`, String(v));
  };
  add("concurrency", o.concurrency);
  add("batch", o.batchSize);
  add("lease", o.leaseSeconds);
  add("sweep-ms", o.sweepMs);
  add("poll-ms", o.pollMs);
  add("sleep-ms", o.sleepMs);
  add("pool", o.poolSize);
  add("stop-deadline-ms", o.stopDeadlineMs);
  add("report-ms", o.reportMs);
  add("worker-id", o.workerId);
  return args;
}

function fromArgs(argv: string[]): WorkerProcessOptions {
  const { values: v } = parseArgs({
    args: argv,
    options: {
      url: { type: "string" },
      queue: { type: "string", default: "bench" },
      mode: { type: "string", default: "noop" },
      concurrency: { type: "string" },
      batch: { type: "string" },
      lease: { type: "string" },
      "sweep-ms": { type: "string" },
      "poll-ms": { type: "string" },
      "sleep-ms": { type: "string" },
      pool: { type: "string" },
      "stop-deadline-ms": { type: "string" },
      "report-ms": { type: "string" },
      "worker-id": { type: "string" },
    },
    strict: true,
  });
  const num = (name: string, s: string | undefined) => {
    if (s === undefined) return undefined;
    const n = Number(s);
    if (!Number.isFinite(n) || n < 0) throw new Error(`--${name} must be a number ≥ 0`);
    return n;
  };
  if (!v.url) throw new Error("--url is required");
  const mode = MODES.find((m) => m === v.mode);
  if (!mode) throw new Error(`--mode must be one of ${MODES.join(", ")}`);
  return {
    url: v.url,
    queue: v.queue,
    mode,
    concurrency: num("concurrency", v.concurrency),
    batchSize: num("batch", v.batch),
    leaseSeconds: num("lease", v.lease),
    sweepMs: num("sweep-ms", v["sweep-ms"]),
    pollMs: num("poll-ms", v["poll-ms"]),
    sleepMs: num("sleep-ms", v["sleep-ms"]),
    poolSize: num("pool", v.pool),
    stopDeadlineMs: num("stop-deadline-ms", v["stop-deadline-ms"]),
    reportMs: num("report-ms", v["report-ms"]),
    workerId: v["worker-id"],
  };
}

/**
 * Writes the last lines and exits 0 once they are out: stdout to a pipe is asynchronous, and an
 * exit right after a write cuts a long line (a result of 50,000 waits) short.
 */
function exitAfter(text: string): void {
  process.stdout.write(text, () => process.exit(0));
}

const preciseNow = () => performance.timeOrigin + performance.now();

/**
 * This process's clock corrected to the database server's: the offset measured on the fastest of
 * five round trips (clock_timestamp() against the round trip's midpoint). On one machine it is a
 * fraction of a millisecond; it keeps "first claim" on the same clock as the bench's "empty".
 */
async function dbClockOffset(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    let best = { rtt: Infinity, offset: 0 };
    for (let i = 0; i < 5; i++) {
      const t0 = preciseNow();
      const { rows } = await client.query<{ ms: number }>(
        "SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS ms",
      );
      const t1 = preciseNow();
      if (t1 - t0 < best.rtt) best = { rtt: t1 - t0, offset: Number(rows[0]?.ms) - (t0 + t1) / 2 };
    }
    return best.offset;
  } finally {
    await client.end();
  }
}

class Recorder {
  private readonly result: WorkerResult = { firstClaimMs: null, waits: { s: [], p: [] } };
  constructor(private readonly offsetMs: number) {}

  claimed(payload: unknown, waitMs: number): void {
    // The bench's warm-up jobs run before the measurement and are not part of it.
    if ((payload as { phase?: unknown } | null)?.phase === "w") return;
    if (this.result.firstClaimMs === null) {
      this.result.firstClaimMs = preciseNow() + this.offsetMs;
      // At once: the bench paces its second phase by the rate the first one measured.
      process.stdout.write(`first-claim ${this.result.firstClaimMs}\n`);
    }
    const phase = (payload as { phase?: unknown } | null)?.phase === "p" ? "p" : "s";
    this.result.waits[phase].push(waitMs);
  }

  line(): string {
    return `result ${JSON.stringify(this.result)}`;
  }
}

function ledgerHandler(db: Database, workerId: string, defaultSleepMs: number): JobHandler {
  return async (job, { signal }) => {
    const ms = typeof job.payload.sleepMs === "number" ? job.payload.sleepMs : defaultSleepMs;
    if (ms > 0) await sleep(ms, signal);
    if (signal.aborted) throw new Error("lease lost or worker stopping: no effect");
    const key = job.key ?? job.lease.id;
    const value = typeof job.payload.n === "number" ? job.payload.n : null;
    await db.prisma.$executeRaw`
      WITH effect AS (
        INSERT INTO effects (job_key, value, worker, attempt)
        VALUES (${key}, ${value}::bigint, ${workerId}, ${job.lease.attempt})
        ON CONFLICT (job_key) DO NOTHING
      )
      INSERT INTO runs (job_key, attempt, worker) VALUES (${key}, ${job.lease.attempt}, ${workerId})`;
  };
}

async function runQueueWorker(o: WorkerProcessOptions): Promise<void> {
  const db = await openDatabase({ url: o.url, poolSize: o.poolSize ?? 4 });
  const workerId = o.workerId ?? `${hostname()}:${process.pid}:${randomBytes(3).toString("hex")}`;
  const recorder = o.mode === "noop" ? new Recorder(await dbClockOffset(o.url)) : null;
  const handler: JobHandler =
    o.mode === "ledger"
      ? ledgerHandler(db, workerId, o.sleepMs ?? 0)
      : async (job) => recorder?.claimed(job.payload, job.waitMs);
  const worker = await startQueueWorker(db, {
    workerId,
    queues: {
      [o.queue]: {
        handler,
        concurrency: o.concurrency,
        batchSize: o.batchSize,
        leaseSeconds: o.leaseSeconds,
      },
    },
    sweepMs: o.sweepMs,
    pollMs: o.pollMs,
    reportMs: o.reportMs,
  });
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await worker.stop(o.stopDeadlineMs ?? 10_000);
    await db.close();
    const result = recorder ? `${recorder.line()}\n` : "";
    exitAfter(`${result}stopped ${workerId} ${JSON.stringify(worker.counters())}\n`);
  };
  process.on("SIGTERM", () => void stop());
  process.on("SIGINT", () => void stop());
  process.stdout.write(`ready ${workerId}\n`);
}

async function runBaseline(o: WorkerProcessOptions): Promise<void> {
  const workerId = o.workerId ?? `baseline:${process.pid}`;
  const batch = o.batchSize ?? 100;
  const pollMs = o.pollMs ?? 5;
  const clients = await Promise.all(
    Array.from({ length: o.poolSize ?? 4 }, async () => {
      const client = new pg.Client({ connectionString: o.url });
      await client.connect();
      return client;
    }),
  );
  const recorder = new Recorder(await dbClockOffset(o.url));
  let stopping = false;
  let completed = 0;
  const loop = async (client: pg.Client) => {
    while (!stopping) {
      const { rows } = await client.query<{ id: string; payload: unknown; wait_ms: number }>(
        `UPDATE raw_jobs SET leased_until = now() + interval '30 seconds'
         WHERE id IN (SELECT id FROM raw_jobs
                      WHERE leased_until IS NULL AND run_at <= now()
                      ORDER BY run_at LIMIT $1 FOR UPDATE SKIP LOCKED)
         RETURNING id, payload, (extract(epoch FROM now() - run_at) * 1000)::float8 AS wait_ms`,
        [batch],
      );
      if (rows.length === 0) {
        await sleep(pollMs);
        continue;
      }
      for (const r of rows) recorder.claimed(r.payload, r.wait_ms);
      await client.query("DELETE FROM raw_jobs WHERE id = ANY($1::bigint[])", [
        rows.map((r) => r.id),
      ]);
      completed += rows.length;
    }
  };
  const loops = clients.map(loop);
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await Promise.allSettled(loops);
    await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
    exitAfter(`${recorder.line()}\nstopped ${workerId} ${JSON.stringify({ completed })}\n`);
  };
  process.on("SIGTERM", () => void stop());
  process.on("SIGINT", () => void stop());
  process.stdout.write(`ready ${workerId}\n`);
  const failed = await Promise.race(
    loops.map((l) =>
      l.then(
        () => null,
        (err: unknown) => err,
      ),
    ),
  );
  if (failed) throw failed;
}

async function main(): Promise<void> {
  const o = fromArgs(process.argv.slice(2));
  if (o.mode === "baseline") await runBaseline(o);
  else if (o.mode === "graphile") await runGraphile(o);
  else if (o.mode === "pgboss") await runPgBoss(o);
  else await runQueueWorker(o);
}

/** Stops on SIGTERM/SIGINT: `stop()`, then the result line, then `stopped`, then exit 0. */
function onStopSignal(workerId: string, recorder: Recorder, stop: () => Promise<void>): void {
  let stopping = false;
  const handle = async () => {
    if (stopping) return;
    stopping = true;
    await stop();
    exitAfter(`${recorder.line()}\nstopped ${workerId} {}\n`);
  };
  process.on("SIGTERM", () => void handle());
  process.on("SIGINT", () => void handle());
}

/** graphile-worker as its performance page configures it for throughput (bench/queue.ts). */
async function runGraphile(o: WorkerProcessOptions): Promise<void> {
  const { Logger, run } = await import("graphile-worker");
  const workerId = o.workerId ?? `graphile:${process.pid}`;
  const recorder = new Recorder(await dbClockOffset(o.url));
  const runner = await run({
    taskList: {
      [o.queue]: async (payload, helpers) => {
        const { job } = helpers;
        const claimedAt = job.locked_at ? new Date(job.locked_at).getTime() : null;
        const wait =
          claimedAt !== null
            ? claimedAt - new Date(job.run_at).getTime()
            : preciseNow() - new Date(job.run_at).getTime();
        recorder.claimed(payload, wait);
      },
    },
    noHandleSignals: true,
    logger: new Logger(() => (level, message) => {
      if (level === "error") process.stderr.write(`graphile: ${message}\n`);
    }),
    preset: {
      worker: {
        connectionString: o.url,
        concurrentJobs: o.concurrency ?? 2_000,
        maxPoolSize: o.poolSize ?? 10,
        pollInterval: o.pollMs ?? 2_000,
        localQueue: { size: o.batchSize ?? 1_000 },
        completeJobBatchDelay: 0,
        failJobBatchDelay: 0,
      },
    },
  });
  onStopSignal(workerId, recorder, () => runner.stop());
  process.stdout.write(`ready ${workerId}\n`);
}

/** pg-boss with enough workers of --batch jobs each to hold --concurrency jobs (bench/queue.ts). */
async function runPgBoss(o: WorkerProcessOptions): Promise<void> {
  const { default: PgBoss } = await import("pg-boss");
  const workerId = o.workerId ?? `pgboss:${process.pid}`;
  const recorder = new Recorder(await dbClockOffset(o.url));
  const boss = new PgBoss({
    connectionString: o.url,
    max: o.poolSize ?? 10,
    schedule: false,
    supervise: false,
    migrate: false,
  });
  boss.on("error", (err) => process.stderr.write(`pg-boss: ${err.message}\n`));
  await boss.start();
  const batchSize = o.batchSize ?? 1_000;
  const workers = Math.max(1, Math.round((o.concurrency ?? 2_000) / batchSize));
  for (let i = 0; i < workers; i++) {
    await boss.work(
      o.queue,
      { batchSize, pollingIntervalSeconds: (o.pollMs ?? 500) / 1000, includeMetadata: true },
      async (jobs) => {
        for (const job of jobs) {
          recorder.claimed(job.data, job.startedOn.getTime() - job.createdOn.getTime());
        }
      },
    );
  }
  onStopSignal(workerId, recorder, () => boss.stop({ graceful: true, wait: true }));
  process.stdout.write(`ready ${workerId}\n`);
}

// ---------------------------------------------------------------------------------------------
// The parent's side.

export interface WorkerProcess {
  /** The worker id it printed when ready. */
  id: string;
  pid: number;
  child: ChildProcess;
  /** Milliseconds from spawn to its ready line. */
  startMs: number;
  /** Lines it printed on stdout after the ready line. */
  lines: string[];
  /** Resolves when it has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The last few KB of its stderr (logs), for failure messages. */
  stderr(): string;
  /** SIGTERM, then waits for the exit. */
  terminate(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts a worker process and waits (up to `timeoutMs`) until it has printed its ready line. */
export function spawnWorkerProcess(
  options: WorkerProcessOptions,
  { logLevel = "warn", timeoutMs = 30_000 }: { logLevel?: string; timeoutMs?: number } = {},
): Promise<WorkerProcess> {
  const started = performance.now();
  const child = spawn(process.execPath, ["--import", "tsx", THIS_FILE, ...toArgs(options)], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, LOG_LEVEL: logLevel },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderrTail = "";
  child.stderr?.setEncoding("utf8");
  child.stderr?.on("data", (chunk: string) => {
    stderrTail = (stderrTail + chunk).slice(-8_000);
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once("exit", (code, signal) => resolve({ code, signal }));
  });
  const lines: string[] = [];
  return new Promise<WorkerProcess>((resolve, reject) => {
    let ready = false;
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`worker process not ready after ${timeoutMs} ms:\n${stderrTail}`));
    }, timeoutMs);
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      if (!ready) {
        reject(new Error(`worker process exited (${code ?? signal}) before ready:\n${stderrTail}`));
      }
    });
    if (!child.stdout) throw new Error("no stdout");
    createInterface({ input: child.stdout }).on("line", (line) => {
      if (ready) {
        lines.push(line);
        return;
      }
      const m = /^ready (\S+)$/.exec(line);
      if (!m?.[1]) return;
      ready = true;
      clearTimeout(timer);
      const proc: WorkerProcess = {
        id: m[1],
        pid: child.pid ?? -1,
        child,
        startMs: performance.now() - started,
        lines,
        exited,
        stderr: () => stderrTail,
        terminate: () => {
          if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
          return exited;
        },
      };
      resolve(proc);
    });
  });
}

if (process.argv[1] && pathToFileURL(process.argv[1]).href === import.meta.url) {
  main().catch((err: unknown) => {
    process.stderr.write(`workerProcess: ${(err as Error)?.stack ?? err}\n`);
    process.exit(1);
  });
}
