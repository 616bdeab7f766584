/**
 * Scale benchmark (issue 18): many sources on one PostgreSQL, polled by 1, 2 or 4 worker
 * processes, against the simulator's fleet of feeds on many loopback hosts.
 *
 *   npm run -s bench -- scale [--sources N] [--workers 1,2,4] [--interval S] [--seconds S]
 *                             [--feeds-per-host N] [--warmup S] [--settle] [--line on|off]
 *                             [--concurrency N] [--short] [--json]
 *
 * PostgreSQL only (DATABASE_URL). For each worker count, from scratch: the simulator in a child
 * process serving N feeds (`npm run simulator -- --sources N`: 100 feeds a host, 90 % quiet, 3 %
 * hot, 2 % slow, 2 % failing, 1 % large, 30 % of new items republished across outlets), a fresh
 * migrated database with the N feeds added as dashboard sources (one statement, as an OPML import
 * adds them), then W × `npm run workers` collecting (WIREWATCH_WORKER_ROLE=collect: the frontier,
 * polling, the writer; `--concurrency` polls at once each, WIREWATCH_FETCH_CONCURRENCY, default 64)
 * and, unless `--line off`, one more running the line after the store
 * (`process`: dedup, embed, extract, index, the read model). Every feed's first poll brings its
 * whole document (20 items), so the line starts with N × 20 items to work through: its backlog
 * at the end says whether it caught up. `--settle` measures the steady state instead: after the
 * warm-up it waits (up to two hours) until 99 % of the sources whose breaker is closed have been
 * polled once, so the window sees polls of feeds already stored (mostly 304s). After the warm-up
 * the run is measured for `--seconds`:
 *
 * - lateness of polls (due → claimed, the fetch queue's own histogram, queue_claim_stats) p50 /
 *   p99 / max, polls a second, and how many sources were polled in the window (a window of at
 *   least one interval should see every source whose breaker is closed);
 * - politeness: the busiest 1 s any host saw from the simulator's start (its own count) against
 *   the budget a host is promised across all processes (1 request/s, bursts of 5);
 * - CPU (share of a core) and RSS per worker process, the simulator's and PostgreSQL's (every
 *   postgres process on the machine: run it on a quiet machine), and polls per PostgreSQL
 *   CPU-second; RSS drift, the median of the window's last quarter of samples minus that of its
 *   first quarter (a long window: is a process's memory flat?);
 * - rows and bytes a day per table, extrapolated from the window (pg_stat_user_tables), and the
 *   line's backlog at the end (jobs ready per queue).
 *
 * `--short` (CI): 2,000 sources, 20 to a host, 1 and 2 workers, a 60 s interval, 75 s measured.
 * Progress goes to stderr; the result is one JSON document (`--json`: one line) on stdout.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { claimWaitQuantile } from "@/lib/claimWaits";
import { config } from "@/lib/config";
import { createScratchDatabase, type ScratchDatabase } from "@/lib/scratchDatabase";
import { DEFAULT_HOST_BUDGET } from "@/workers/fetcher/rateBudget";

const ROOT = path.resolve(import.meta.dirname, "..");
const log = (line: string) => process.stderr.write(`${line}\n`);
const TICKS_PER_SECOND = 100; // Linux's USER_HZ: /proc/<pid>/stat counts CPU in these.
const SAMPLE_EVERY_MS = 5_000;

export class ScaleOptionsError extends Error {}

export interface ScaleOptions {
  sources: number;
  workers: number[];
  intervalSeconds: number;
  /** Feeds a simulated host serves: with the interval, what a host's budget must carry. */
  feedsPerHost: number;
  seconds: number;
  warmupSeconds: number;
  /** After the warm-up, wait until 99 % of the sources were polled once: the steady state. */
  settle: boolean;
  /** A process running the line after the store beside the collecting ones. */
  line: boolean;
  /** Polls each collecting process runs at once (WIREWATCH_FETCH_CONCURRENCY). */
  concurrency: number;
}

export function scaleOptions(args: string[]): ScaleOptions & { json: boolean } {
  const { values } = parseArgs({
    args,
    options: {
      sources: { type: "string" },
      workers: { type: "string" },
      interval: { type: "string" },
      "feeds-per-host": { type: "string" },
      seconds: { type: "string" },
      warmup: { type: "string" },
      line: { type: "string" },
      settle: { type: "boolean", default: false },
      concurrency: { type: "string" },
      short: { type: "boolean", default: false },
      json: { type: "boolean", default: false },
    },
    strict: true,
  });
  const short = values.short === true;
  const whole = (name: string, raw: string | undefined, fallback: number, min: number) => {
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min) {
      throw new ScaleOptionsError(`--${name} must be a whole number ≥ ${min}, not "${raw}"`);
    }
    return n;
  };
  const intervalSeconds = whole("interval", values.interval, short ? 60 : 300, 15);
  const workers = (values.workers ?? (short ? "1,2" : "4")).split(",").map((w) => {
    const n = Number(w.trim());
    if (!Number.isInteger(n) || n < 1 || n > 16) {
      throw new ScaleOptionsError(
        `--workers takes counts from 1 to 16, comma-separated, not "${w}"`,
      );
    }
    return n;
  });
  return {
    sources: whole("sources", values.sources, short ? 2_000 : 100_000, 1),
    // 100 at a 300 s interval: a third of a request a second, well inside a host's budget (1/s).
    // The short run's 60 s interval with 20 to a host asks the same of a host.
    feedsPerHost: whole("feeds-per-host", values["feeds-per-host"], short ? 20 : 100, 1),
    workers,
    intervalSeconds,
    // One interval and a quarter: every source whose breaker is closed comes due in it.
    seconds: whole("seconds", values.seconds, Math.ceil(intervalSeconds * 1.25), 10),
    warmupSeconds: whole("warmup", values.warmup, short ? 20 : 60, 0),
    settle: values.settle === true,
    // A poll mostly waits (network, a host's budget, the writer): the product's default of 8 a
    // process held four processes to 17 polls/s at 10,000 sources, 32 to 35 (docs/capacity.md).
    concurrency: whole("concurrency", values.concurrency, short ? 16 : 64, 1),
    line: lineOption(values.line),
    json: values.json === true,
  };
}

function lineOption(raw: string | undefined): boolean {
  if (raw === undefined || raw === "on") return true;
  if (raw === "off") return false;
  throw new ScaleOptionsError(`--line is on or off, not "${raw}"`);
}

interface ProcSample {
  cpuTicks: number;
  rssBytes: number;
}

/** CPU ticks (user + system) and RSS of one process, from /proc; null once it is gone. */
function procSample(pid: number): ProcSample | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command (which may hold spaces) start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const cpuTicks = Number(fields[11]) + Number(fields[12]);
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const rssKb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
    return { cpuTicks, rssBytes: rssKb * 1024 };
  } catch {
    return null;
  }
}

/** CPU ticks of every process named postgres (the server, its backends, its helpers). */
async function postgresTicks(): Promise<number> {
  const { readdir } = await import("node:fs/promises");
  let ticks = 0;
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      if (!comm.startsWith("postgres")) continue;
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return ticks;
}

interface Child {
  proc: ChildProcess;
  output: string[];
}

function start(args: string[], env: NodeJS.ProcessEnv, name: string): Child {
  const proc = spawn(process.execPath, ["--import", "tsx", ...args], {
    cwd: ROOT,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output: string[] = [];
  const keep = (chunk: Buffer) => {
    // The last lines only: a child that fails says why at the end.
    output.push(chunk.toString("utf8"));
    if (output.length > 200) output.splice(0, output.length - 200);
  };
  proc.stdout?.on("data", keep);
  proc.stderr?.on("data", keep);
  proc.on("exit", (code, signal) => {
    if (code !== 0 && code !== null) log(`  ${name} exited with code ${code}`);
    if (signal && signal !== "SIGTERM") log(`  ${name} ended by ${signal}`);
  });
  return { proc, output };
}

async function stop(child: Child, deadlineMs = 20_000): Promise<void> {
  const { proc } = child;
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
  proc.kill("SIGTERM");
  const timer = setTimeout(() => proc.kill("SIGKILL"), deadlineMs);
  await exited;
  clearTimeout(timer);
}

async function waitFor<T>(what: string, ms: number, probe: () => Promise<T | null>): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const got = await probe();
    if (got !== null) return got;
    if (Date.now() > until) throw new Error(`timed out after ${ms / 1000} s waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

interface SimulatorChild extends Child {
  url: string;
  sourcesFile: string;
}

async function startFleetSimulator(options: ScaleOptions, dir: string): Promise<SimulatorChild> {
  const sourcesFile = path.join(dir, "fleet.json");
  const child = start(
    [
      "simulator/main.ts",
      "--port",
      "0",
      "--sources",
      String(options.sources),
      "--feeds-per-host",
      String(options.feedsPerHost),
      "--poll-interval",
      String(options.intervalSeconds),
      "--write-sources",
      sourcesFile,
    ],
    { ...process.env, LOG_LEVEL: "warn" },
    "simulator",
  );
  const url = await waitFor("the simulator", 120_000, async () => {
    if (child.proc.exitCode !== null) {
      throw new Error(`the simulator stopped: ${child.output.join("").slice(-2_000)}`);
    }
    const text = child.output.join("");
    if (!/fleet: wrote \d+ sources/.test(text)) return null;
    return /newsroom simulator on (http:\/\/\S+)/.exec(text)?.[1] ?? null;
  });
  // It prints every source as JSON too: nothing more is needed from its stdout.
  child.output.length = 0;
  return { ...child, url, sourcesFile };
}

/** The fleet's feeds as dashboard sources (one statement each table), with their state rows. */
async function addSources(scratch: ScratchDatabase, file: string): Promise<number> {
  const { sources } = JSON.parse(await readFile(file, "utf8")) as {
    sources: { id: string; name: string; url: string; pollIntervalSeconds: number }[];
  };
  const col = <K extends keyof (typeof sources)[number]>(k: K) => sources.map((s) => s[k]);
  await scratch.db.prisma.$executeRaw`
    INSERT INTO sources (id, name, kind, url, allow_private, poll_interval_seconds, collectors,
                         config_origin)
    SELECT id, name, 'feed', url, true, every, ARRAY['A'], 'dashboard'
    FROM unnest(${col("id")}::text[], ${col("name")}::text[], ${col("url")}::text[],
                ${col("pollIntervalSeconds")}::int[]) AS s(id, name, url, every)`;
  await scratch.db.prisma.$executeRaw`
    INSERT INTO source_state (source_id) SELECT id FROM sources`;
  return sources.length;
}

interface TableCounts {
  inserted: number;
  updated: number;
  deleted: number;
  live: number;
  bytes: number;
}

async function tableCounts(scratch: ScratchDatabase): Promise<Map<string, TableCounts>> {
  // The statistics collector flushes a backend's counts when it goes idle, at most once a second.
  const rows = await scratch.db.prisma.$queryRaw<
    { name: string; ins: bigint; upd: bigint; del: bigint; live: bigint; bytes: bigint }[]
  >`
    SELECT relname AS name, n_tup_ins AS ins, n_tup_upd AS upd, n_tup_del AS del,
           n_live_tup AS live, pg_total_relation_size(relid) AS bytes
    FROM pg_stat_user_tables`;
  return new Map(
    rows.map((r) => [
      r.name,
      {
        inserted: Number(r.ins),
        updated: Number(r.upd),
        deleted: Number(r.del),
        live: Number(r.live),
        bytes: Number(r.bytes),
      },
    ]),
  );
}

export interface TablePerDay {
  table: string;
  insertsPerDay: number;
  updatesPerDay: number;
  deletesPerDay: number;
  /** Growth of the table with its indexes and TOAST, extrapolated (negative: it shrank). */
  bytesPerDay: number;
  liveRows: number;
  bytes: number;
}

export interface ProcessFigures {
  role: string;
  pid: number;
  /** Share of one core over the window (1 = a whole core). */
  cpu: number;
  rssMb: { start: number; max: number; end: number; drift: number };
}

export interface ScalePoint {
  sources: number;
  /** Measured after every source's first poll (`--settle`), or from the start. */
  steady: boolean;
  /** Collecting processes (WIREWATCH_WORKER_ROLE=collect). */
  workers: number;
  /** Polls each of them runs at once. */
  concurrency: number;
  line: boolean;
  intervalSeconds: number;
  windowSeconds: number;
  /** Polls started in the window (first attempts: fetch_attempts with retry 0), and per second. */
  polls: number;
  pollsPerSecond: number;
  /** Sources/interval: the rate every source polled on time needs. */
  neededPollsPerSecond: number;
  lateness: { p50Ms: number | null; p99Ms: number | null; maxMs: number; meanMs: number | null };
  /** Sources with at least one poll started in the window, of those with a closed breaker. */
  polledInWindow: { polled: number; closedBreakers: number; share: number };
  politeness: {
    hosts: number;
    busiestSecond: number;
    busiestHost: string | null;
    budgetPerSecond: number;
    burst: number;
    met: boolean;
  };
  processes: ProcessFigures[];
  /** PostgreSQL's CPU, and whether autovacuum ran (a test server may have it off). */
  postgres: { cpu: number; pollsPerCpuSecond: number | null; autovacuum: boolean };
  backlog: Record<string, number>;
  tables: TablePerDay[];
}

async function measure(
  options: ScaleOptions,
  workers: number,
  dir: string,
  serverUrl: string,
): Promise<ScalePoint> {
  log(
    `\n${options.sources.toLocaleString("en")} sources, ${workers} collecting process(es) ` +
      `polling ${options.concurrency} at once` +
      (options.line ? " and one for the line" : ", no line"),
  );
  const sim = await startFleetSimulator(options, dir);
  log(`  simulator on ${sim.url}`);
  const scratch = await createScratchDatabase("ww_scale", serverUrl, { poolSize: 2 });
  const children: (Child & { role: string })[] = [];
  try {
    const [vacuum] = await scratch.db.prisma.$queryRaw<{ on: boolean }[]>`
      SELECT current_setting('autovacuum')::boolean AS on`;
    const autovacuum = vacuum?.on ?? false;
    if (!autovacuum) {
      log(
        "  warning: autovacuum is off on this server: the jobs table bloats and plans go stale, " +
          "so the figures are not a production server's",
      );
    }
    const added = await addSources(scratch, sim.sourcesFile);
    log(`  ${added.toLocaleString("en")} sources added`);
    const emptyConfig = path.join(dir, "wirewatch.config.json");
    await writeFile(emptyConfig, '{ "sources": [] }\n');
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DATABASE_URL: scratch.where,
      TEST_DATABASE_URL: undefined,
      WIREWATCH_CONFIG: emptyConfig,
      WIREWATCH_SIMULATOR: "off",
      LOG_LEVEL: "warn",
    };
    for (let w = 0; w < workers; w++) {
      const role = `worker ${w + 1}`;
      const collect = {
        ...env,
        WIREWATCH_WORKER_ROLE: "collect",
        WIREWATCH_FETCH_CONCURRENCY: String(options.concurrency),
      };
      children.push({ ...start(["workers/main.ts"], collect, role), role });
    }
    if (options.line) {
      const role = "line";
      const processing = { ...env, WIREWATCH_WORKER_ROLE: "process" };
      children.push({ ...start(["workers/main.ts"], processing, role), role });
    }
    children.push({ ...sim, role: "simulator" });
    await waitFor("the first poll", 120_000, async () => {
      for (const c of children) {
        if (c.proc.exitCode !== null) {
          throw new Error(`${c.role} stopped: ${c.output.join("").slice(-2_000)}`);
        }
      }
      const [row] = await scratch.db.prisma.$queryRaw<{ n: bigint }[]>`
        SELECT count(*) AS n FROM fetch_attempts`;
      return Number(row?.n ?? 0) > 0 ? true : null;
    });
    log(`  polling; warming up for ${options.warmupSeconds} s`);
    await new Promise((r) => setTimeout(r, options.warmupSeconds * 1000));
    if (options.settle) await settle(scratch);

    const [clock] = await scratch.db.prisma.$queryRaw<{ now: Date }[]>`SELECT now() AS now`;
    const windowStart = clock?.now ?? new Date();
    const before = await tableCounts(scratch);
    const pgBefore = await postgresTicks();
    const startedAt = performance.now();
    const samples = new Map<number, ProcSample[]>();
    const sample = () => {
      for (const c of children) {
        const pid = c.proc.pid;
        const s = pid === undefined ? null : procSample(pid);
        if (pid !== undefined && s) samples.set(pid, [...(samples.get(pid) ?? []), s]);
      }
    };
    sample();
    const sampler = setInterval(sample, SAMPLE_EVERY_MS);
    const endAt = Date.now() + options.seconds * 1000;
    while (Date.now() < endAt) {
      await new Promise((r) => setTimeout(r, Math.min(30_000, endAt - Date.now())));
      log(`  ${Math.round((endAt - Date.now()) / 1000)} s left`);
    }
    clearInterval(sampler);
    sample();
    const windowSeconds = (performance.now() - startedAt) / 1000;
    const pgTicks = (await postgresTicks()) - pgBefore;
    await new Promise((r) => setTimeout(r, 1_500)); // the statistics' last flush
    const after = await tableCounts(scratch);
    // Counted from the simulator's start: the first polls, the likeliest to bunch, included.
    const hostRates = await fetchJson<{
      hosts: number;
      rates: { host: string; maxPerSecond: number }[];
    }>(`${sim.url}/_control/hosts?top=1`);

    // Claims are rolled up per minute (database clock): the minutes the window touches.
    const claims = await scratch.db.prisma.$queryRaw<
      { claims: bigint; wait_sum: bigint; wait_max: number; buckets: bigint[] }[]
    >`
      SELECT sum(claims) AS claims, sum(wait_ms_sum) AS wait_sum, max(wait_ms_max) AS wait_max,
             (SELECT array_agg(b ORDER BY i) FROM (
                SELECT i, sum(wait_buckets[i]) AS b
                FROM queue_claim_stats, generate_subscripts(wait_buckets, 1) AS i
                WHERE queue = 'fetch' AND minute >= ${windowStart}::timestamptz - interval '1 minute'
                GROUP BY i) x) AS buckets
      FROM queue_claim_stats
      WHERE queue = 'fetch' AND minute >= ${windowStart}::timestamptz - interval '1 minute'`;
    const claim = claims[0];
    const buckets = (claim?.buckets ?? []).map(Number);

    const [polled] = await scratch.db.prisma.$queryRaw<
      { polls: number; polled: number; closed: number }[]
    >`
      SELECT (SELECT count(*)::int FROM fetch_attempts
              WHERE started_at >= ${windowStart} AND retry = 0) AS polls,
             (SELECT count(DISTINCT source_id)::int FROM fetch_attempts
              WHERE started_at >= ${windowStart} AND retry = 0) AS polled,
             (SELECT count(*)::int FROM source_state WHERE breaker_state = 'closed') AS closed`;
    const backlog = await scratch.db.prisma.$queryRaw<{ queue: string; n: number }[]>`
      SELECT queue, count(*)::int AS n FROM jobs
      WHERE state = 'ready' AND run_at <= now() GROUP BY queue ORDER BY queue`;

    const processes: ProcessFigures[] = children.flatMap((c) => {
      const s = c.proc.pid === undefined ? undefined : samples.get(c.proc.pid);
      const first = s?.[0];
      const last = s?.at(-1);
      if (!s || !first || !last) return [];
      const mb = (b: number) => Math.round(b / 1024 / 102.4) / 10;
      const quarter = Math.max(1, Math.floor(s.length / 4));
      const rss = s.map((x) => x.rssBytes);
      return [
        {
          role: c.role,
          pid: c.proc.pid as number,
          cpu: round((last.cpuTicks - first.cpuTicks) / TICKS_PER_SECOND / windowSeconds, 3),
          rssMb: {
            start: mb(first.rssBytes),
            max: mb(Math.max(...s.map((x) => x.rssBytes))),
            end: mb(last.rssBytes),
            drift: mb(median(rss.slice(-quarter)) - median(rss.slice(0, quarter))),
          },
        },
      ];
    });
    const busiest = hostRates.rates[0] ?? null;
    const pgCpuSeconds = pgTicks / TICKS_PER_SECOND;
    const perDay = 86_400 / windowSeconds;
    const tables: TablePerDay[] = [...after]
      .map(([table, a]) => {
        const b = before.get(table) ?? { inserted: 0, updated: 0, deleted: 0, live: 0, bytes: 0 };
        return {
          table,
          insertsPerDay: Math.round((a.inserted - b.inserted) * perDay),
          updatesPerDay: Math.round((a.updated - b.updated) * perDay),
          deletesPerDay: Math.round((a.deleted - b.deleted) * perDay),
          bytesPerDay: Math.round((a.bytes - b.bytes) * perDay),
          liveRows: a.live,
          bytes: a.bytes,
        };
      })
      .filter((t) => t.insertsPerDay + t.updatesPerDay + t.deletesPerDay > 0)
      .sort((x, y) => y.insertsPerDay - x.insertsPerDay);

    const polls = polled?.polls ?? 0;
    const point: ScalePoint = {
      sources: options.sources,
      steady: options.settle,
      concurrency: options.concurrency,
      workers,
      line: options.line,
      intervalSeconds: options.intervalSeconds,
      windowSeconds: round(windowSeconds, 1),
      polls,
      pollsPerSecond: round(polls / windowSeconds, 1),
      neededPollsPerSecond: round(options.sources / options.intervalSeconds, 1),
      // Interpolated within a bucket, a quantile can pass the largest wait seen: capped at it.
      lateness: {
        p50Ms: roundOrNull(atMost(claimWaitQuantile(buckets, 0.5), claim?.wait_max)),
        p99Ms: roundOrNull(atMost(claimWaitQuantile(buckets, 0.99), claim?.wait_max)),
        maxMs: claim?.wait_max ?? 0,
        meanMs:
          Number(claim?.claims ?? 0) > 0
            ? Math.round(Number(claim?.wait_sum ?? 0) / Number(claim?.claims))
            : null,
      },
      polledInWindow: {
        polled: polled?.polled ?? 0,
        closedBreakers: polled?.closed ?? 0,
        share: polled?.closed ? round((polled.polled ?? 0) / polled.closed, 4) : 0,
      },
      politeness: {
        hosts: hostRates.hosts,
        busiestSecond: busiest?.maxPerSecond ?? 0,
        busiestHost: busiest?.host ?? null,
        budgetPerSecond: DEFAULT_HOST_BUDGET.ratePerSecond,
        burst: DEFAULT_HOST_BUDGET.burst,
        // In any 1 s a bucket of `burst` tokens refilling at `rate` lets at most this many out.
        met:
          (busiest?.maxPerSecond ?? 0) <=
          Math.floor(DEFAULT_HOST_BUDGET.burst + DEFAULT_HOST_BUDGET.ratePerSecond),
      },
      processes,
      postgres: {
        cpu: round(pgCpuSeconds / windowSeconds, 3),
        pollsPerCpuSecond: pgCpuSeconds > 0 ? Math.round(polls / pgCpuSeconds) : null,
        autovacuum,
      },
      backlog: Object.fromEntries(backlog.map((b) => [b.queue, b.n])),
      tables,
    };
    report(point);
    return point;
  } finally {
    await Promise.all(children.filter((c) => c.role !== "simulator").map((c) => stop(c)));
    await stop(sim);
    await scratch.dispose();
  }
}

/** Waits until 99 % of the sources whose breaker is closed have been polled at least once. */
async function settle(scratch: ScratchDatabase): Promise<void> {
  const started = Date.now();
  let lastLog = 0;
  await waitFor("every source's first poll", 2 * 3_600_000, async () => {
    const [row] = await scratch.db.prisma.$queryRaw<{ polled: number; closed: number }[]>`
      SELECT (SELECT count(*)::int FROM source_state
              WHERE last_polled_at IS NOT NULL AND breaker_state = 'closed') AS polled,
             (SELECT count(*)::int FROM source_state WHERE breaker_state = 'closed') AS closed`;
    const polled = row?.polled ?? 0;
    const closed = row?.closed ?? 0;
    if (Date.now() - lastLog > 60_000) {
      lastLog = Date.now();
      log(
        `  settling: ${polled} of ${closed} polled once, ${Math.round((Date.now() - started) / 1000)} s`,
      );
    }
    return closed > 0 && polled >= 0.99 * closed ? true : null;
  });
  log(`  settled after ${Math.round((Date.now() - started) / 1000)} s`);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

async function fetchJson<T>(url: string): Promise<T> {
  const res = await fetch(url, { signal: AbortSignal.timeout(30_000) });
  if (!res.ok) throw new Error(`GET ${url}: ${res.status}`);
  return (await res.json()) as T;
}

function report(p: ScalePoint): void {
  const ms = (v: number | null) => (v === null ? "—" : `${Math.round(v).toLocaleString("en")} ms`);
  log(
    `  polls ${p.pollsPerSecond}/s (needed ${p.neededPollsPerSecond}/s); lateness p50 ${ms(p.lateness.p50Ms)}, ` +
      `p99 ${ms(p.lateness.p99Ms)}, max ${ms(p.lateness.maxMs)}; polled in window ` +
      `${p.polledInWindow.polled} of ${p.polledInWindow.closedBreakers} closed breakers`,
  );
  log(
    `  busiest host second ${p.politeness.busiestSecond} (budget ${p.politeness.budgetPerSecond}/s, burst ${p.politeness.burst}); ` +
      `PostgreSQL ${p.postgres.cpu} cores; ${p.processes.map((x) => `${x.role} ${x.cpu} cores ${x.rssMb.max} MB (drift ${x.rssMb.drift} MB)`).join(", ")}`,
  );
}

const round = (v: number, digits: number) => Math.round(v * 10 ** digits) / 10 ** digits;
const atMost = (v: number | null, max: number | undefined) =>
  v === null || max === undefined ? v : Math.min(v, max);
const roundOrNull = (v: number | null) => (v === null ? null : Math.round(v));

export async function run(args: string[]): Promise<void> {
  let options: ReturnType<typeof scaleOptions>;
  try {
    options = scaleOptions(args);
  } catch (err) {
    if (
      !(
        err instanceof ScaleOptionsError ||
        (err as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")
      )
    ) {
      throw err;
    }
    log(`bench scale: ${(err as Error).message}`);
    process.exitCode = 2;
    return;
  }
  const serverUrl = config().DATABASE_URL;
  if (!serverUrl) {
    log("bench scale: it needs PostgreSQL (set DATABASE_URL); worker processes share one database");
    process.exitCode = 2;
    return;
  }
  const dir = await mkdtemp(path.join(tmpdir(), "ww-scale-"));
  try {
    const points: ScalePoint[] = [];
    for (const workers of options.workers) {
      points.push(await measure(options, workers, dir, serverUrl));
    }
    const result = {
      bench: "scale",
      sources: options.sources,
      intervalSeconds: options.intervalSeconds,
      feedsPerHost: options.feedsPerHost,
      line: options.line,
      points,
    };
    process.stdout.write(`${JSON.stringify(result, null, options.json ? undefined : 2)}\n`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
