/**
 * Dashboard benchmark: how fast every dashboard API answers on a production-sized database.
 *
 *   npm run -s bench -- dashboard [--news N] [--events N] [--sources N] [--attempts N] [--runs R]
 *                                 [--json] [--reuse DBNAME] [--in-process]
 *
 * PostgreSQL only (DATABASE_URL). A scratch database (ww_bench_<random>, dropped at the end) is
 * migrated and filled by bench/dashboardSeed.ts: N news rows (default 1,000,000) and N audit rows
 * (news_events, default 5,000,000) over 30 days, plus a day of fetch attempts and lease events,
 * dead letters, repair runs and admin actions; `--sources N` sources (default 500; 100,000 is
 * the fleet the Sources page is built for, seeded in seconds with a mix of health, two
 * collectors each) and `--attempts N` fetch attempts over the last day (default 200,000).
 * `--reuse DBNAME` keeps a seeded database between runs (it is created and seeded when missing,
 * and not dropped).
 *
 * Then the real app is started on it (`next start`, workers and simulator off) and every GET
 * route under app/api (found on disk, so new pages are measured without editing this file; health,
 * metrics and auth are not dashboard reads) is requested R times in a row (default 30) after 3
 * warm-up requests, over HTTP on loopback, as the dashboard's polling does. Dynamic segments are
 * filled with rows that exist (a source, an item, a dead letter, a repair run); the Sources list
 * is asked in each of its orders and filters too. Reported: p50, p95 and max per endpoint, and
 * the worst p95 against the 200 ms goal.
 *
 * `--in-process` calls each route's GET handler in this process instead (no build, no server):
 * the same handler, query and serialisation, without Next.js's HTTP layer (a millisecond or two
 * on loopback). For a machine where building the app is not an option.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { createServer } from "node:net";
import path from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";
import { config } from "@/lib/config";
import { openDatabase } from "@/lib/db";
import { createScratchDatabase } from "@/lib/scratchDatabase";
import { type SeedSize, seedLargeDatabase } from "./dashboardSeed";

const GOAL_P95_MS = 200;
// The public read path (/api/news) answers from the read model, not the dashboard's reads, and
// has a bench of its own (bench spike).
const NOT_DASHBOARD = ["/api/health", "/api/metrics", "/api/auth", "/api/chaos", "/api/news"];
const log = (line: string) => process.stderr.write(`${line}\n`);

interface Measured {
  path: string;
  status: number;
  p50Ms: number;
  p95Ms: number;
  maxMs: number;
}

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      news: { type: "string", default: "1000000" },
      events: { type: "string", default: "5000000" },
      sources: { type: "string", default: "500" },
      attempts: { type: "string", default: "200000" },
      "in-process": { type: "boolean", default: false },
      runs: { type: "string", default: "30" },
      reuse: { type: "string" },
      json: { type: "boolean", default: false },
    },
  });
  // In process the routes read this process's configuration: dashboard reads open, as the
  // started app is told below (set before the configuration is first read).
  if (values["in-process"]) {
    process.env.DASHBOARD_READ = "open";
    process.env.LOG_LEVEL ??= "warn";
  }
  const server = config().DATABASE_URL;
  if (!server) {
    log("the dashboard bench needs PostgreSQL: set DATABASE_URL");
    process.exitCode = 2;
    return;
  }
  const size = {
    news: Number(values.news),
    events: Number(values.events),
    sources: Number(values.sources),
    attempts: Number(values.attempts),
  };
  const runs = Number(values.runs);

  const { url, dispose } = await database(server, values.reuse, size);
  let app: ChildProcess | undefined;
  let inProcess: InProcess | undefined;
  try {
    let get: Getter;
    if (values["in-process"]) {
      inProcess = await inProcessApp(url);
      get = inProcess.get;
    } else {
      const port = await freePort();
      app = await startApp(url, port);
      const base = `http://127.0.0.1:${port}`;
      get = (endpoint) => fetch(base + endpoint, { headers: { accept: "application/json" } });
    }
    const samples = await sampleIds(url);
    const endpoints = await dashboardEndpoints(samples);
    log(`measuring ${endpoints.length} endpoints, ${runs} requests each`);
    const results: Measured[] = [];
    for (const endpoint of endpoints) {
      results.push(await measure(get, endpoint, runs));
      const r = results.at(-1) as Measured;
      log(`  ${r.path}: ${r.status} p50 ${r.p50Ms} ms, p95 ${r.p95Ms} ms`);
    }
    const worst = Math.max(...results.map((r) => r.p95Ms));
    if (values.json) {
      console.log(
        JSON.stringify({
          news: size.news,
          events: size.events,
          sources: size.sources,
          attempts: size.attempts,
          inProcess: values["in-process"],
          worstP95Ms: worst,
          goalP95Ms: GOAL_P95_MS,
          endpoints: results,
        }),
      );
      return;
    }
    console.log(
      `dashboard bench: ${size.sources.toLocaleString("en")} sources, ${size.news.toLocaleString("en")} news, ` +
        `${size.events.toLocaleString("en")} news_events, ${size.attempts.toLocaleString("en")} fetch attempts a day, ` +
        `${runs} requests per endpoint ${values["in-process"] ? "in process" : "over HTTP"}\n`,
    );
    console.log(
      "endpoint".padEnd(58),
      "status",
      "p50 ms".padStart(7),
      "p95 ms".padStart(7),
      "max ms".padStart(7),
    );
    for (const r of results) {
      console.log(
        r.path.padEnd(58),
        String(r.status).padStart(6),
        String(r.p50Ms).padStart(7),
        String(r.p95Ms).padStart(7),
        String(r.maxMs).padStart(7),
      );
    }
    console.log(
      `\nworst p95: ${worst} ms (goal ${GOAL_P95_MS} ms): ${worst < GOAL_P95_MS ? "met" : "NOT met"}`,
    );
    if (results.some((r) => r.status !== 200)) process.exitCode = 1;
  } finally {
    if (app) await stopApp(app);
    await inProcess?.close();
    await dispose();
  }
}

type Getter = (endpoint: string) => Promise<Response>;

interface InProcess {
  get: Getter;
  close: () => Promise<void>;
}

/**
 * The GET handlers of app/api, called in this process on the scratch database (the shared
 * client the routes use is set to it, as the routes' fuzz test does), dashboard reads open.
 */
async function inProcessApp(url: string): Promise<InProcess> {
  const db = await openDatabase({ url, poolSize: 10 });
  (globalThis as unknown as { wirewatchDb?: Promise<typeof db> }).wirewatchDb = Promise.resolve(db);
  const root = path.resolve("app/api");
  const handlers = new Map<string, (request: Request, context: unknown) => Promise<Response>>();
  const get: Getter = async (endpoint) => {
    const u = new URL(endpoint, "http://127.0.0.1");
    const segments = u.pathname.split("/").slice(2).map(decodeURIComponent);
    // Which route file answers: a literal directory where there is one, else the dynamic one.
    let dir = root;
    const params: Record<string, string> = {};
    for (const segment of segments) {
      const entries = await readdir(dir, { withFileTypes: true });
      const literal = entries.find((e) => e.isDirectory() && e.name === segment);
      const dynamic = entries.find((e) => e.isDirectory() && e.name.startsWith("["));
      const next = literal ?? dynamic;
      if (!next) return new Response(null, { status: 404 });
      if (!literal && dynamic) params[dynamic.name.slice(1, -1)] = segment;
      dir = path.join(dir, next.name);
    }
    const file = path.join(dir, "route.ts");
    let handler = handlers.get(file);
    if (!handler) {
      handler = ((await import(file)) as { GET: typeof handler }).GET;
      if (!handler) return new Response(null, { status: 405 });
      handlers.set(file, handler);
    }
    const request = new Request(u, { headers: { accept: "application/json", host: "127.0.0.1" } });
    return handler(request, { params: Promise.resolve(params) });
  };
  return { get, close: () => db.close() };
}

async function database(
  server: string,
  reuse: string | undefined,
  size: SeedSize,
): Promise<{ url: string; dispose: () => Promise<void> }> {
  if (reuse) {
    const admin = new pg.Client({ connectionString: server });
    await admin.connect();
    const exists = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [reuse]);
    if (exists.rowCount === 0) await admin.query(`CREATE DATABASE ${pg.escapeIdentifier(reuse)}`);
    await admin.end();
    const u = new URL(server);
    u.pathname = `/${reuse}`;
    const url = u.toString();
    const db = await openDatabase({ url, poolSize: 2 }); // migrates
    // Seeding ends with the admin actions: a database without them was interrupted.
    const seeded = (await db.prisma.adminAudit.count()) > 0;
    await db.close();
    if (!seeded) {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await client.query(
        "TRUNCATE sources, source_state, collector_status, news, news_events, fetch_attempts, jobs, lease_events, queue_claim_stats, queue_workers, repair_runs, admin_audit CASCADE",
      );
      await client.end();
      await seed(url, size);
    } else log(`reusing seeded database ${reuse}`);
    return { url, dispose: async () => {} };
  }
  const scratch = await createScratchDatabase("ww_bench", server, { poolSize: 2 });
  await scratch.db.close();
  await seed(scratch.where, size);
  return { url: scratch.where, dispose: () => scratch.dispose() };
}

async function seed(url: string, size: SeedSize) {
  log(`seeding ${new URL(url).pathname.slice(1)}`);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await seedLargeDatabase(client, size, log);
  } finally {
    await client.end();
  }
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

async function startApp(url: string, port: number): Promise<ChildProcess> {
  log("building (when stale) and starting the app");
  const env = {
    ...process.env,
    DATABASE_URL: url,
    WIREWATCH_WORKERS: "off",
    WIREWATCH_SIMULATOR: "off",
    DASHBOARD_READ: "open",
    LOG_LEVEL: "warn",
    NEXT_TELEMETRY_DISABLED: "1",
  };
  // Its own process group, so stopping it stops next-server too (npx and sh would leave it
  // running, holding the port and our stderr).
  const app = spawn(
    "sh",
    ["-c", `node scripts/ensure-build.mjs >&2 && exec node_modules/.bin/next start -p ${port}`],
    { env, stdio: ["ignore", "ignore", "inherit"], detached: true },
  );
  const deadline = Date.now() + 300_000;
  while (Date.now() < deadline) {
    if (app.exitCode !== null) throw new Error(`the app exited with ${app.exitCode}`);
    const ok = await fetch(`http://127.0.0.1:${port}/api/health`)
      .then((r) => r.ok)
      .catch(() => false);
    if (ok) return app;
    await new Promise((r) => setTimeout(r, 500));
  }
  await stopApp(app);
  throw new Error("the app did not become healthy within 5 minutes");
}

async function stopApp(app: ChildProcess): Promise<void> {
  if (app.exitCode !== null || !app.pid) return;
  const exited = new Promise((resolve) => app.once("exit", resolve));
  try {
    process.kill(-app.pid, "SIGTERM");
  } catch {
    return; // already gone
  }
  const timer = setTimeout(() => {
    try {
      if (app.pid) process.kill(-app.pid, "SIGKILL");
    } catch {}
  }, 10_000);
  await exited;
  clearTimeout(timer);
}

interface Samples {
  source: string;
  item: string;
  deadLetter: string;
  repairRun: string;
}

async function sampleIds(url: string): Promise<Samples> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const one = async (sql: string) => String((await client.query(sql)).rows[0]?.v ?? "");
    return {
      source: await one("SELECT id AS v FROM sources ORDER BY id LIMIT 1"),
      // An item deep in the table, with several audit rows.
      item: await one(
        `SELECT entry_key AS v FROM news ORDER BY updated_at DESC
         OFFSET least(5000, (SELECT count(*) / 2 FROM news)) LIMIT 1`,
      ),
      deadLetter: await one(
        "SELECT id::text AS v FROM jobs WHERE state = 'dead' ORDER BY id LIMIT 1",
      ),
      repairRun: await one("SELECT id::text AS v FROM repair_runs ORDER BY id DESC LIMIT 1"),
    };
  } finally {
    await client.end();
  }
}

/** Every GET route under app/api, with its dynamic segments filled, plus searches. */
async function dashboardEndpoints(samples: Samples): Promise<string[]> {
  const root = path.resolve("app/api");
  const found: string[] = [];
  const walk = async (dir: string) => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) await walk(full);
      else if (
        entry.name === "route.ts" &&
        /export\s+(async\s+function|const)\s+GET\b/.test(await readFile(full, "utf8"))
      ) {
        found.push(`/api/${path.relative(root, dir).split(path.sep).join("/")}`);
      }
    }
  };
  await walk(root);
  const fill: Record<string, string> = {
    sources: samples.source,
    items: samples.item,
    "dead-letters": samples.deadLetter,
    repairs: samples.repairRun,
  };
  const endpoints: string[] = [];
  for (const route of found.sort()) {
    if (NOT_DASHBOARD.some((p) => route === p || route.startsWith(`${p}/`))) continue;
    const parts = route.split("/");
    const filled = parts.map((part, i) => {
      if (!part.startsWith("[")) return part;
      const value = fill[parts[i - 1] ?? ""];
      return value ? encodeURIComponent(value) : null;
    });
    if (filled.includes(null)) {
      log(`  skipping ${route}: no sample for its dynamic segment`);
      continue;
    }
    const path_ = filled.join("/");
    // Routes whose query is required: asked as the page asks them.
    const required: Record<string, string> = {
      "/api/dedup/titles": `?keys=${samples.item}`,
      "/api/search": "?q=Floods",
    };
    if (path_ in required && !samples.item) {
      log(`  skipping ${route}: no sample for its query`);
      continue;
    }
    endpoints.push(path_ + (required[path_] ?? ""));
  }
  if (endpoints.includes("/api/sources")) {
    // The Sources list in each order and filter its page offers (a name search as typed).
    endpoints.push(
      "/api/sources?sort=health&dir=desc",
      "/api/sources?sort=errorRate&dir=desc",
      "/api/sources?sort=lastPolled&dir=desc",
      "/api/sources?health=stalled",
      "/api/sources?health=failing&sort=errorRate&dir=desc",
      "/api/sources?breaker=open",
      "/api/sources?kind=page&limit=200",
      "/api/sources?q=news4242",
    );
  }
  if (endpoints.includes("/api/items")) {
    endpoints.push("/api/items?q=Floods", `/api/items?source=${samples.source}`);
  }
  return endpoints;
}

async function measure(request: Getter, endpoint: string, runs: number): Promise<Measured> {
  let status = 0;
  const get = async () => {
    const started = performance.now();
    const res = await request(endpoint);
    await res.arrayBuffer();
    status = res.status;
    return performance.now() - started;
  };
  for (let i = 0; i < 3; i++) await get();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) times.push(await get());
  times.sort((a, b) => a - b);
  const at = (q: number) =>
    Math.round(times[Math.min(times.length - 1, Math.ceil(q * times.length) - 1)] ?? 0);
  return {
    path: endpoint,
    status,
    p50Ms: at(0.5),
    p95Ms: at(0.95),
    maxMs: Math.round(times.at(-1) ?? 0),
  };
}
