/**
 * The spike test (seed 003, issue 16): the public read path under a breaking-news spike.
 *
 *   npm run -s bench -- spike [--short] [--json] [--url URL [--sim URL]] [--runs R]
 *                             [--path P] [--peak R] [--scale N] [--connections N] [--redis URL] [--gzip]
 *
 * Without --url: builds when stale, starts the app (`next start`, a free port) on the embedded
 * default with its built-in simulator and a fresh WIREWATCH_DATA_DIR, so the cache is cold (no
 * read model yet: the first requests are answered while the model comes up, and what they got
 * is counted), waits for /api/health, turns the simulator's rate up (--sim-rate, 600 stories a
 * minute: ingestion writes at full speed) and runs the load at once. --redis URL gives the app
 * that REDIS_URL (the Redis store) instead of the in-process one. Requests ask for identity
 * (uncompressed) bodies, the bytes the read model stores; --gzip sends Accept-Encoding: gzip as
 * browsers do (the baseline then replays the compressed bytes).
 *
 * The load is an open model (bench/spikeDriver.ts, in a process of its own): arrivals on seed
 * 003's schedule, 5 req/s for 30 s, to 400 req/s in 20 s, 2 min at 400, back to 5 in 30 s
 * (--short divides the durations by 6, keeping the plateau), against --path (default
 * /api/news?limit=20; one arrival in ten asks a category's page or the next page by cursor, as
 * the first page names them). An arrival that cannot go out on time is counted as not sent.
 *
 * In the same run, the baseline: a bare node:http server (bench/spikeBaseline.ts) answering the
 * bytes and headers the app gave for the path, driven by the same schedule; with --runs > 1 the
 * two take turns going first (the app always first in run 1, while its cache is cold). During
 * the app's first run one simulator source is blackholed and another answers 503
 * (bench/spikeIngestion.ts); afterwards the other sources' poll cycles and the two breakers are
 * judged.
 *
 * Reported: per phase the target and achieved arrival rate, sent and not sent, statuses; the
 * failed share (non-2xx/304, errors and not sent, over the scheduled arrivals); latency
 * p50/p95/p99/max overall and on the plateau; the cache hit ratio (wirewatch_read_requests_total
 * deltas from /api/metrics, else the X-Cache header's tally); the seed's thresholds and the
 * issue's aim marked met or not; ratios against the baseline. Exit code 1 when a seed threshold
 * or the ingestion check is not met. Results to stdout (one JSON line with --json), progress to
 * stderr. Load generator, app and baseline share this machine's cores: the output says how many.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { type Baseline, fetchOnce, startBaseline } from "./spikeBaseline";
import {
  type DriverRecords,
  KINDS,
  type Phase,
  RESULT,
  runDriver,
  spikeShape,
} from "./spikeDriver";
import {
  blockSources,
  clearFaults,
  type IngestionReport,
  setSimulatorRate,
} from "./spikeIngestion";

/** Seed 003's thresholds, and the issue's aim for this read path. */
export const THRESHOLDS = { failedShare: 0.01, p95Ms: 800, p99Ms: 2_000 };
export const AIM = { plateauP99Ms: 20, throughputRatio: 0.5 };
const SHORT_SCALE = 6;
/**
 * Late by more than this and an arrival is not sent: 20 slots at 400 req/s (2.5 ms apart), above
 * a timer's millisecond of jitter and a minor GC, below any latency the thresholds care about;
 * a driver starved for longer than that is one that could not send on time.
 */
const LATE_MS = 50;
/**
 * Sockets, hence requests in flight at once: at 400 req/s, 512 in flight is a mean answer time
 * of 1.28 s, past the seed's p95 of 800 ms; a server slower than that is one the driver counts
 * as busy instead of queueing in front of it.
 */
const CONNECTIONS = 512;
const TIMEOUT_MS = 10_000;
const VARIANT_SHARE = 0.1;
/** The header the public routes set with the request's cache outcome (Helper B's hit|miss|stale). */
const CACHE_HEADERS = ["x-cache"];
const CACHE_METRIC = "wirewatch_read_requests_total";
const HIT_OUTCOMES = ["hit", "not_modified"];
const CACHE_OUTCOMES = ["hit", "not_modified", "miss", "stale", "error"];
/** A spike from one client: the per-client public limit (1,200/min) is for many real readers. */
const APP_RATE_LIMIT = "10000000";
const log = (line: string) => process.stderr.write(`${line}\n`);

function usageError(message: string): Error {
  const err = new Error(message);
  err.name = "UsageError";
  return err;
}

interface Spread {
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

export interface TargetRun {
  scheduled: number;
  sent: number;
  notSent: { late: number; busy: number };
  statuses: Record<string, number>;
  errors: { timeout: number; connection: number; other: number };
  failed: number;
  failedShare: number;
  latencyMs: Spread;
  phases: {
    name: string;
    seconds: number;
    targetRate: number;
    achievedRate: number;
    scheduled: number;
    sent: number;
    notSent: number;
    okPerSecond: number;
    statuses: Record<string, number>;
    headerTally: Record<string, number>;
  }[];
  plateau: { latencyMs: Spread; okPerSecond: number; achievedRate: number };
  cold: { firstOkAfterSeconds: number | null; beforeFirstOk: Record<string, number> };
  kinds: Record<string, number>;
  headerTally: Record<string, number>;
  lagMs: { p50: number; p99: number; max: number };
  driver: { cpuShareOfOneCore: number; maxInFlight: number; wallSeconds: number };
  bytes: number;
}

const isOk = (status: number) => (status >= 200 && status < 300) || status === 304;

function quantiles(values: number[]): Spread {
  const sorted = Float64Array.from(values).sort();
  const at = (q: number) =>
    sorted.length === 0
      ? Number.NaN
      : (sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] as number);
  return {
    p50: at(0.5),
    p95: at(0.95),
    p99: at(0.99),
    max: sorted.length ? (sorted[sorted.length - 1] as number) : Number.NaN,
  };
}

function statusKey(result: number): string | null {
  if (result > 0) return String(result);
  if (result === RESULT.timeout) return "timeout";
  if (result === RESULT.connection) return "connection";
  if (result === RESULT.otherError) return "error";
  return null;
}

/** Every figure of one target's run from the driver's per-arrival records. */
export function summarize(r: DriverRecords, phases: readonly Phase[]): TargetRun {
  const n = r.result.length;
  const pending = r.result.filter((x) => x === RESULT.pending).length;
  if (pending > 0) throw new Error(`spike driver left ${pending} arrivals without a result`);
  const statuses: Record<string, number> = {};
  const errors = { timeout: 0, connection: 0, other: 0 };
  let late = 0;
  let busy = 0;
  let failed = 0;
  const latencies: number[] = [];
  const lags: number[] = [];
  const kinds: Record<string, number> = Object.fromEntries(KINDS.map((k) => [k, 0]));
  const headerTally: Record<string, number> = {};
  const perPhase = phases.map(() => ({
    scheduled: 0,
    sent: 0,
    notSent: 0,
    ok: 0,
    statuses: {} as Record<string, number>,
    headerTally: {} as Record<string, number>,
  }));
  const plateauIndex = phases.findIndex((p) => p.name === "hold");
  const plateauLatencies: number[] = [];
  let firstOk: number | null = null;
  const beforeFirstOk: Record<string, number> = {};
  for (let i = 0; i < n; i++) {
    const result = r.result[i] as number;
    const ph = perPhase[r.phase[i] as number] as (typeof perPhase)[number];
    ph.scheduled++;
    if (result === RESULT.notSentLate || result === RESULT.notSentBusy) {
      if (result === RESULT.notSentLate) late++;
      else busy++;
      ph.notSent++;
      failed++;
      continue;
    }
    ph.sent++;
    const key = statusKey(result) as string;
    statuses[key] = (statuses[key] ?? 0) + 1;
    ph.statuses[key] = (ph.statuses[key] ?? 0) + 1;
    if (result === RESULT.timeout) errors.timeout++;
    else if (result === RESULT.connection) errors.connection++;
    else if (result === RESULT.otherError) errors.other++;
    if (isOk(result)) {
      ph.ok++;
      if (firstOk === null) firstOk = (r.atMs[i] as number) / 1000;
    } else {
      failed++;
      if (firstOk === null) beforeFirstOk[key] = (beforeFirstOk[key] ?? 0) + 1;
    }
    latencies.push(r.latencyMs[i] as number);
    lags.push(r.lagMs[i] as number);
    if (r.phase[i] === plateauIndex) plateauLatencies.push(r.latencyMs[i] as number);
    const kind = KINDS[r.kind[i] as number] as string;
    kinds[kind] = (kinds[kind] ?? 0) + 1;
    const h = r.header[i] as number;
    if (h > 0) {
      const v = r.headerValues[h - 1] as string;
      headerTally[v] = (headerTally[v] ?? 0) + 1;
      ph.headerTally[v] = (ph.headerTally[v] ?? 0) + 1;
    }
  }
  const sent = n - late - busy;
  const lag = quantiles(lags);
  const plateau = perPhase[plateauIndex];
  const plateauSeconds = phases[plateauIndex]?.seconds ?? Number.NaN;
  return {
    scheduled: n,
    sent,
    notSent: { late, busy },
    statuses,
    errors,
    failed,
    failedShare: n > 0 ? failed / n : 0,
    latencyMs: quantiles(latencies),
    phases: phases.map((p, k) => {
      const ph = perPhase[k] as (typeof perPhase)[number];
      return {
        name: p.name,
        seconds: p.seconds,
        targetRate: ph.scheduled / p.seconds,
        achievedRate: ph.sent / p.seconds,
        scheduled: ph.scheduled,
        sent: ph.sent,
        notSent: ph.notSent,
        okPerSecond: ph.ok / p.seconds,
        statuses: ph.statuses,
        headerTally: ph.headerTally,
      };
    }),
    plateau: {
      latencyMs: quantiles(plateauLatencies),
      okPerSecond: (plateau?.ok ?? 0) / plateauSeconds,
      achievedRate: (plateau?.sent ?? 0) / plateauSeconds,
    },
    cold: { firstOkAfterSeconds: firstOk, beforeFirstOk },
    kinds,
    headerTally,
    lagMs: { p50: lag.p50, p99: lag.p99, max: lag.max },
    driver: {
      cpuShareOfOneCore: (r.cpuMs.user + r.cpuMs.system) / r.wallMs,
      maxInFlight: r.maxInFlight,
      wallSeconds: r.wallMs / 1000,
    },
    bytes: r.bytes,
  };
}

function parseOptions(args: string[]) {
  const { values } = parseArgs({
    args,
    options: {
      short: { type: "boolean", default: false },
      json: { type: "boolean", default: false },
      url: { type: "string" },
      sim: { type: "string" },
      path: { type: "string", default: "/api/news?limit=20" },
      runs: { type: "string", default: "1" },
      scale: { type: "string" },
      peak: { type: "string", default: "400" },
      base: { type: "string", default: "5" },
      connections: { type: "string", default: String(CONNECTIONS) },
      timeout: { type: "string", default: String(TIMEOUT_MS) },
      "late-ms": { type: "string", default: String(LATE_MS) },
      "sim-rate": { type: "string", default: "600" },
      gzip: { type: "boolean", default: false },
      "no-ingestion": { type: "boolean", default: false },
      redis: { type: "string" },
    },
    strict: true,
  });
  const positive = (name: string, raw: string, integer = true) => {
    const v = Number(raw);
    if (!(v > 0) || (integer && !Number.isInteger(v))) {
      throw usageError(`--${name} must be a positive ${integer ? "integer" : "number"}`);
    }
    return v;
  };
  const origin = (name: string, raw: string | undefined) => {
    if (raw === undefined) return undefined;
    try {
      const u = new URL(raw);
      if (u.protocol !== "http:") throw new Error();
      return u.origin;
    } catch {
      throw usageError(`--${name} must be an http:// URL`);
    }
  };
  if (!values.path.startsWith("/")) throw usageError("--path must start with /");
  if (values.sim && !values.url) throw usageError("--sim goes with --url (the app's simulator)");
  if (values.short && values.scale) throw usageError("--short is --scale 6: give one of them");
  if (values.redis && values.url) throw usageError("--redis is for the app this bench starts");
  if (values.redis && !/^rediss?:\/\/\S+$/.test(values.redis)) {
    throw usageError("--redis must be a redis:// URL");
  }
  return {
    json: values.json,
    url: origin("url", values.url),
    sim: origin("sim", values.sim),
    path: values.path,
    runs: positive("runs", values.runs),
    scale: values.scale ? positive("scale", values.scale, false) : values.short ? SHORT_SCALE : 1,
    peak: positive("peak", values.peak, false),
    base: positive("base", values.base, false),
    connections: positive("connections", values.connections),
    timeoutMs: positive("timeout", values.timeout),
    lateMs: positive("late-ms", values["late-ms"]),
    simRate: positive("sim-rate", values["sim-rate"]),
    ingestion: !values["no-ingestion"],
    redis: values.redis ?? "",
    headers: {
      accept: "application/json",
      ...(values.gzip ? { "accept-encoding": "gzip" } : {}),
    } as Record<string, string>,
  };
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
    probe.on("error", reject);
  });
}

interface StartedApp {
  origin: string;
  simUrl: string;
  logFile: string;
  stop(): Promise<void>;
}

/** `next start` on the embedded default with its simulator, on a fresh data directory. */
async function startApp(redisUrl: string): Promise<StartedApp> {
  const [port, simPort] = [await freePort(), await freePort()];
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "wirewatch-spike-"));
  const logFile = path.join(dataDir, "app.log");
  const origin = `http://127.0.0.1:${port}`;
  const env = {
    ...process.env,
    DATABASE_URL: "",
    REDIS_URL: redisUrl,
    WIREWATCH_DATA_DIR: path.join(dataDir, "db"),
    WIREWATCH_CONFIG: "none",
    WIREWATCH_SIMULATOR: "on",
    SIMULATOR_PORT: String(simPort),
    WIREWATCH_URL: origin,
    WIREWATCH_PUBLIC_RATE_LIMIT: APP_RATE_LIMIT,
    DASHBOARD_READ: "open",
    METRICS_TOKEN: "",
    LOG_LEVEL: "warn",
    NEXT_TELEMETRY_DISABLED: "1",
  };
  log("building (when stale) and starting the app");
  const out = createWriteStream(logFile);
  // Its own process group, so stopping it stops next-server too (as bench/dashboard.ts does).
  const app: ChildProcess = spawn(
    "sh",
    [
      "-c",
      `node scripts/ensure-build.mjs >&2 && exec node_modules/.bin/next start -H 127.0.0.1 -p ${port}`,
    ],
    { env, stdio: ["ignore", "pipe", "pipe"], detached: true },
  );
  app.stdout?.pipe(out);
  app.stderr?.on("data", (chunk: Buffer) => {
    out.write(chunk);
    // The build's progress is worth seeing; the app's own log lines stay in the file.
    if (/ensure-build|Compiled|Creating an optimized|error/i.test(chunk.toString())) {
      process.stderr.write(chunk);
    }
  });
  const stop = async () => {
    if (app.exitCode === null && app.pid) {
      const exited = new Promise((resolve) => app.once("exit", resolve));
      try {
        process.kill(-app.pid, "SIGTERM");
        const timer = setTimeout(() => {
          try {
            if (app.pid) process.kill(-app.pid, "SIGKILL");
          } catch {}
        }, 15_000);
        await exited;
        clearTimeout(timer);
      } catch {}
    }
    out.end();
    rmSync(path.join(dataDir, "db"), { recursive: true, force: true });
  };
  const deadline = Date.now() + 600_000;
  while (Date.now() < deadline) {
    if (app.exitCode !== null) {
      await stop();
      throw new Error(`the app exited with ${app.exitCode} (its log: ${logFile})`);
    }
    const ok = await fetch(`${origin}/api/health`)
      .then((r) => r.ok)
      .catch(() => false);
    if (ok) return { origin, simUrl: `http://127.0.0.1:${simPort}`, logFile, stop };
    await new Promise((r) => setTimeout(r, 250));
  }
  await stop();
  throw new Error("the app did not become healthy within 10 minutes");
}

/** wirewatch_read_requests_total for the list route, by outcome; null when not exported. */
async function readOutcomes(origin: string): Promise<Record<string, number> | null> {
  const text = await fetch(`${origin}/api/metrics`, { signal: AbortSignal.timeout(30_000) })
    .then((r) => (r.ok ? r.text() : null))
    .catch(() => null);
  if (text === null) return null;
  const outcomes: Record<string, number> = {};
  let found = false;
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${CACHE_METRIC}{`)) continue;
    found = true;
    const labels = line.slice(line.indexOf("{") + 1, line.lastIndexOf("}"));
    if (!/(^|,)route="list"/.test(labels)) continue;
    const outcome = /(?:^|,)outcome="([^"]*)"/.exec(labels)?.[1];
    if (!outcome) continue;
    outcomes[outcome] = (outcomes[outcome] ?? 0) + Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return found || text.includes(`# HELP ${CACHE_METRIC} `) ? outcomes : null;
}

export interface CacheReport {
  from: "metrics" | "header" | "none";
  outcomes: Record<string, number>;
  hitRatio: number | null;
}

function cacheReport(
  before: Record<string, number> | null,
  after: Record<string, number> | null,
  tally: Record<string, number>,
): CacheReport {
  let from: CacheReport["from"] = "none";
  let outcomes: Record<string, number> = {};
  if (before && after) {
    from = "metrics";
    for (const [k, v] of Object.entries(after)) {
      const d = v - (before[k] ?? 0);
      if (d > 0) outcomes[k] = d;
    }
  } else if (Object.keys(tally).length > 0) {
    from = "header";
    outcomes = tally;
  }
  // Helper D's definition (the dashboard's): answered from the model without a build, over
  // every answer the read path judged; not_found and rate_limited are in neither.
  const hits = HIT_OUTCOMES.reduce((s, k) => s + (outcomes[k] ?? 0), 0);
  const all = CACHE_OUTCOMES.reduce((s, k) => s + (outcomes[k] ?? 0), 0);
  return { from, outcomes, hitRatio: all > 0 ? hits / all : null };
}

const median = (values: number[]) => {
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
};

export async function run(args: string[]): Promise<void> {
  const o = parseOptions(args);
  const phases = spikeShape({ scale: o.scale, base: o.base, peak: o.peak });
  const machine = {
    cores: os.cpus().length,
    cpu: os.cpus()[0]?.model ?? "unknown",
    loadAverage1m: os.loadavg()[0] as number,
    node: process.version,
  };
  let app: StartedApp | undefined;
  let baseline: Baseline | undefined;
  let baselineSource:
    | { status: number; bytes: number; headers: Record<string, string>; error?: string }
    | undefined;
  let ingestion: IngestionReport | null = null;
  let simRate: number | null = null;
  const runs: {
    app: TargetRun;
    baseline: TargetRun | null;
    order: string[];
    cache: CacheReport;
  }[] = [];
  const startedAt = new Date();
  try {
    if (!o.url) app = await startApp(o.redis);
    const origin = app?.origin ?? (o.url as string);
    const simUrl = app?.simUrl ?? o.sim;
    if (simUrl) {
      simRate = await setSimulatorRate(simUrl, o.simRate);
      log(`simulator at ${simRate} stories a minute`);
    }
    let blocked: Awaited<ReturnType<typeof blockSources>> | undefined;
    const driverOptions = (target: string) => ({
      origin: target,
      path: o.path,
      phases,
      connections: o.connections,
      timeoutMs: o.timeoutMs,
      lateMs: o.lateMs,
      variantShare: VARIANT_SHARE,
      tallyHeaders: CACHE_HEADERS,
      headers: o.headers,
    });
    for (let r = 0; r < o.runs; r++) {
      const order = r % 2 === 0 ? ["app", "baseline"] : ["baseline", "app"];
      const got: Partial<Record<"app" | "baseline", TargetRun>> = {};
      let cache: CacheReport = { from: "none", outcomes: {}, hitRatio: null };
      for (const target of order) {
        if (target === "app") {
          const before = await readOutcomes(origin);
          if (r === 0 && simUrl && o.ingestion) {
            blocked = await blockSources(origin, simUrl, simRate);
            log("blackholed and 503 sources injected");
          }
          log(`run ${r + 1}/${o.runs}: the app (${origin}${o.path})`);
          const records = await runDriver(driverOptions(origin));
          const after = await readOutcomes(origin);
          got.app = summarize(records, phases);
          cache = cacheReport(before, after, got.app.headerTally);
        } else {
          if (!baseline) {
            // An app that cannot answer one request leaves nothing to replay: reported, not run.
            const once = await fetchOnce(origin + o.path, o.headers).catch((err: Error) => {
              baselineSource = { status: 0, bytes: 0, headers: {}, error: err.message };
              return null;
            });
            if (!once) {
              log(`  baseline not run: ${baselineSource?.error}`);
              continue;
            }
            baselineSource = {
              status: once.status,
              bytes: once.body.length,
              headers: once.headers,
            };
            baseline = await startBaseline(once.body, once.headers);
          }
          log(`run ${r + 1}/${o.runs}: the baseline (${baseline.origin})`);
          got.baseline = summarize(await runDriver(driverOptions(baseline.origin)), phases);
        }
        const t = got[target as "app" | "baseline"] as TargetRun;
        log(
          `  ${target}: ${t.sent} sent, ${t.notSent.late + t.notSent.busy} not sent, failed ${(100 * t.failedShare).toFixed(2)} %, plateau p99 ${t.plateau.latencyMs.p99.toFixed(1)} ms`,
        );
      }
      runs.push({ app: got.app as TargetRun, baseline: got.baseline ?? null, order, cache });
    }
    if (blocked) {
      log(
        "waiting for the two breakers (at most 200 s after the faults), then judging the sources",
      );
      ingestion = await blocked.finish();
    }
    if (simUrl && o.ingestion) await clearFaults(simUrl).catch(() => {});
  } finally {
    await baseline?.stop();
    await app?.stop();
  }

  const cold = runs[0]?.app as TargetRun;
  const ratios = runs.map((x) => ({
    throughput: x.app.plateau.okPerSecond / (x.baseline?.plateau.okPerSecond ?? Number.NaN),
    p99: x.app.plateau.latencyMs.p99 / (x.baseline?.plateau.latencyMs.p99 ?? Number.NaN),
  }));
  const ratio = {
    throughput: median(ratios.map((x) => x.throughput)),
    p99: median(ratios.map((x) => x.p99)),
  };
  const checks = [
    {
      name: "failed share < 1 %",
      seed: true,
      value: cold.failedShare,
      limit: THRESHOLDS.failedShare,
      met: cold.failedShare < THRESHOLDS.failedShare,
    },
    {
      name: "p95 < 800 ms",
      seed: true,
      value: cold.latencyMs.p95,
      limit: THRESHOLDS.p95Ms,
      met: cold.latencyMs.p95 < THRESHOLDS.p95Ms,
    },
    {
      name: "p99 < 2 s",
      seed: true,
      value: cold.latencyMs.p99,
      limit: THRESHOLDS.p99Ms,
      met: cold.latencyMs.p99 < THRESHOLDS.p99Ms,
    },
    {
      name: `plateau p99 ≤ 20 ms at ${o.peak} req/s`,
      seed: false,
      value: cold.plateau.latencyMs.p99,
      limit: AIM.plateauP99Ms,
      met: cold.plateau.latencyMs.p99 <= AIM.plateauP99Ms,
    },
    {
      name: "throughput ≥ 0.5× the baseline's",
      seed: false,
      value: ratio.throughput,
      limit: AIM.throughputRatio,
      met: ratio.throughput >= AIM.throughputRatio,
    },
  ];
  const summary = {
    startedAt: startedAt.toISOString(),
    machine: {
      ...machine,
      shared: "the load driver, the app (with its ingestion) and the baseline share these cores",
    },
    target: {
      origin:
        o.url ??
        `next start (${o.redis ? "Redis store" : "embedded default"}, built-in simulator, fresh data directory: cold cache)`,
      path: o.path,
      variantShare: VARIANT_SHARE,
      cold: !o.url,
    },
    shape: { scale: o.scale, phases },
    driver: {
      model: "open",
      transport: "node:http keep-alive agent",
      requestHeaders: o.headers,
      connections: o.connections,
      lateMs: o.lateMs,
      timeoutMs: o.timeoutMs,
    },
    runs,
    baselineSource: baselineSource ?? null,
    ratios: { perRun: ratios, median: ratio },
    cache: runs[0]?.cache ?? null,
    checks,
    ingestion,
    met: {
      seed: checks.filter((c) => c.seed).every((c) => c.met),
      aim: checks.filter((c) => !c.seed).every((c) => c.met),
      ingestion: ingestion?.met ?? null,
    },
  };
  if (!summary.met.seed || summary.met.ingestion === false) process.exitCode = 1;
  if (o.json) {
    process.stdout.write(`${JSON.stringify(summary)}\n`);
    return;
  }
  process.stdout.write(`${formatSummary(summary, app?.logFile)}\n`);
}

type Summary = {
  machine: { cores: number; cpu: string; loadAverage1m: number; node: string; shared: string };
  target: { origin: string; path: string; cold: boolean };
  shape: { scale: number; phases: Phase[] };
  driver: { connections: number; lateMs: number };
  runs: { app: TargetRun; baseline: TargetRun | null; order: string[]; cache: CacheReport }[];
  baselineSource: { status: number; bytes: number; error?: string } | null;
  ratios: { median: { throughput: number; p99: number } };
  cache: CacheReport | null;
  checks: { name: string; seed: boolean; value: number; limit: number; met: boolean }[];
  ingestion: IngestionReport | null;
};

function formatSummary(s: Summary, logFile: string | undefined): string {
  const ms = (v: number) => (Number.isFinite(v) ? `${v < 10 ? v.toFixed(2) : v.toFixed(1)}` : "–");
  const spread = (l: Spread) =>
    `p50 ${ms(l.p50)}  p95 ${ms(l.p95)}  p99 ${ms(l.p99)}  max ${ms(l.max)} ms`;
  const counts = (c: Record<string, number>) =>
    Object.entries(c)
      .map(([k, v]) => `${k} ${v}`)
      .join(", ") || "none";
  const lines = [
    `spike: ${s.target.origin}${s.target.path}, open model, ${s.runs.length} run(s), durations ÷ ${s.shape.scale}`,
    `machine: ${s.machine.cores} cores (${s.machine.cpu}), load ${s.machine.loadAverage1m.toFixed(2)} at start, Node ${s.machine.node}; ${s.machine.shared}`,
    `shape: ${s.shape.phases.map((p) => `${p.name} ${p.seconds.toFixed(1)} s ${p.fromRate}→${p.toRate}/s`).join(", ")}; ${s.driver.connections} sockets, late after ${s.driver.lateMs} ms`,
  ];
  s.runs.forEach((run, k) => {
    for (const name of ["app", "baseline"] as const) {
      const t = run[name];
      if (!t) continue;
      lines.push(
        "",
        `run ${k + 1} ${name}${run.order[0] === name ? " (first)" : ""}: ${t.scheduled} scheduled, ${t.sent} sent, not sent ${t.notSent.late} late + ${t.notSent.busy} busy; failed ${t.failed} (${(100 * t.failedShare).toFixed(2)} %)`,
        `  statuses: ${counts(t.statuses)}`,
        `  latency overall: ${spread(t.latencyMs)}`,
        `  plateau: ${spread(t.plateau.latencyMs)}; ${t.plateau.achievedRate.toFixed(1)} sent/s, ${t.plateau.okPerSecond.toFixed(1)} ok/s`,
      );
      for (const p of t.phases) {
        lines.push(
          `  ${p.name.padEnd(5)} target ${p.targetRate.toFixed(1).padStart(6)}/s achieved ${p.achievedRate.toFixed(1).padStart(6)}/s, ${p.sent} sent, ${p.notSent} not sent; ${counts(p.statuses)}${Object.keys(p.headerTally).length ? `; X-Cache ${counts(p.headerTally)}` : ""}`,
        );
      }
      lines.push(
        `  driver: lag p50 ${ms(t.lagMs.p50)} p99 ${ms(t.lagMs.p99)} max ${ms(t.lagMs.max)} ms, ${(100 * t.driver.cpuShareOfOneCore).toFixed(0)} % of a core, ${t.driver.maxInFlight} in flight at most; kinds ${counts(t.kinds)}`,
      );
      if (name === "app" && k === 0 && s.target.cold) {
        lines.push(
          `  cold start: first 2xx/304 after ${t.cold.firstOkAfterSeconds === null ? "never" : `${t.cold.firstOkAfterSeconds.toFixed(2)} s`}; before it: ${counts(t.cold.beforeFirstOk)}`,
        );
      }
      if (name === "app") {
        lines.push(
          `  cache (${run.cache.from}): ${counts(run.cache.outcomes)}; hit ratio ${run.cache.hitRatio === null ? "unknown" : `${(100 * run.cache.hitRatio).toFixed(1)} %`}`,
        );
      }
    }
  });
  if (s.baselineSource?.error) {
    lines.push("", `baseline: not run (the app's answer to replay: ${s.baselineSource.error})`);
  } else if (s.baselineSource) {
    lines.push(
      "",
      `baseline: a bare node:http server answering the app's ${s.baselineSource.bytes} bytes (its answer was ${s.baselineSource.status}) with its headers`,
    );
  }
  lines.push(
    `app / baseline on the plateau (median over runs): throughput ${s.ratios.median.throughput.toFixed(3)}×, p99 ${s.ratios.median.p99.toFixed(2)}×`,
    "",
    "checks (run 1, the cold one):",
  );
  for (const c of s.checks) {
    lines.push(
      `  ${c.seed ? "seed" : "aim "}  ${c.name.padEnd(40)} ${c.value.toPrecision(3).padStart(9)}  ${c.met ? "met" : "NOT met"}`,
    );
  }
  const ing = s.ingestion;
  if (ing) {
    lines.push(
      "",
      `ingestion (faults at ${ing.injectedAt}, checked ${ing.checkedAt}; simulator ${ing.simulatorRatePerMinute ?? "?"} stories/min):`,
    );
    for (const f of ing.faulted) {
      lines.push(
        `  ${f.sourceId} (${f.fault}): breaker ${f.opened ? `opened after ${f.openedAfterSeconds?.toFixed(0)} s` : "did NOT open"}, ${f.failedRequests} failed requests in ${f.polls} polls before (threshold ${ing.threshold}), ${f.requestsWhileOpen} requests while open; ${counts(f.codes)}: ${f.met ? "met" : "NOT met"}`,
      );
    }
    for (const x of ing.others) {
      lines.push(
        `  ${x.sourceId.padEnd(14)} ${x.kind.padEnd(9)} ${x.polls === null ? "activity" : `${x.polls} polls, ${x.failedPolls} failed,`} longest gap ${x.maxGapSeconds.toFixed(1)} s (allowed ${x.allowedGapSeconds.toFixed(1)}): ${x.met ? "on time" : "NOT on time"}`,
      );
    }
    for (const p of ing.problems) lines.push(`  problem: ${p}`);
    lines.push(`  ingestion: ${ing.met ? "met" : "NOT met"}`);
  }
  if (logFile) lines.push("", `the app's log: ${logFile}`);
  return lines.join("\n");
}
