/**
 * The spike bench's load driver: an open model. Arrivals are fixed in advance from the shape
 * (rate per phase, linear ramps), and each is sent at its instant whether or not earlier ones
 * were answered; one that cannot go out on time is recorded as not sent, with why:
 *
 *   late   the driver reached it more than `lateMs` after its instant (its own event loop was
 *          starved: on 2 shared cores, by the app);
 *   busy   every one of `connections` keep-alive sockets was waiting for an answer (the server
 *          is not keeping up: a closed-model tool would have waited here and hidden it).
 *
 * Every arrival ends with exactly one result (a status, an error code or a not-sent code), so
 * nothing is dropped silently; the parent checks that none is left pending.
 *
 * It runs in a child process of its own (`runDriver` forks this file), so its timers are not
 * starved by the bench's own work, and its CPU time is measured apart. node:http with one
 * keep-alive agent (docs/decisions/030 says why not undici or a load tool).
 */
import { fork } from "node:child_process";
import http from "node:http";
import { fileURLToPath } from "node:url";

export const PHASE_NAMES = ["warm", "ramp", "hold", "down"] as const;
export type PhaseName = (typeof PHASE_NAMES)[number];

export interface Phase {
  name: PhaseName;
  seconds: number;
  fromRate: number;
  toRate: number;
}

/** Seed 003's spike: 5 req/s for 30 s, to 400 in 20 s, 2 min there, back to 5 in 30 s. */
export function spikeShape({
  scale = 1,
  base = 5,
  peak = 400,
}: {
  scale?: number;
  base?: number;
  peak?: number;
}): Phase[] {
  return [
    { name: "warm", seconds: 30 / scale, fromRate: base, toRate: base },
    { name: "ramp", seconds: 20 / scale, fromRate: base, toRate: peak },
    { name: "hold", seconds: 120 / scale, fromRate: peak, toRate: peak },
    { name: "down", seconds: 30 / scale, fromRate: peak, toRate: base },
  ];
}

/**
 * The arrival instants (ms from the start) and each one's phase. The j-th arrival is at the
 * instant the integral of the rate reaches j (the first at 0), so a linear ramp's gaps shrink
 * smoothly and the count per phase is its area, whatever the scale.
 */
export function arrivals(phases: readonly Phase[]): { at: Float64Array; phase: Uint8Array } {
  const at: number[] = [];
  const phase: number[] = [];
  let startS = 0;
  let before = 0; // arrivals' worth of rate integrated before this phase
  let next = 0;
  phases.forEach((p, index) => {
    const { seconds: T, fromRate: a, toRate: b } = p;
    const area = (T * (a + b)) / 2;
    while (next < before + area - 1e-9) {
      const x = next - before;
      const c = (b - a) / (2 * T);
      const t = Math.abs(c) < 1e-12 ? x / a : (-a + Math.sqrt(a * a + 4 * c * x)) / (2 * c);
      at.push((startS + t) * 1000);
      phase.push(index);
      next++;
    }
    before += area;
    startS += T;
  });
  return { at: Float64Array.from(at), phase: Uint8Array.from(phase) };
}

/** What became of an arrival: an HTTP status (> 0) or one of these. */
export const RESULT = {
  pending: 0,
  notSentLate: -1,
  notSentBusy: -2,
  timeout: -3,
  connection: -4,
  otherError: -5,
} as const;

/** Arrival kinds: the list's first page, a category's first page, the list's next page. */
export const KINDS = ["main", "category", "cursor"] as const;

export interface DriverOptions {
  /** The server's origin, e.g. http://127.0.0.1:3000. */
  origin: string;
  /** The main path, e.g. /api/news?limit=20. */
  path: string;
  phases: Phase[];
  connections: number;
  timeoutMs: number;
  lateMs: number;
  /**
   * One arrival in `1 / variantShare` asks a category's page or the next page instead (halves),
   * once the main path's body named a category and a nextCursor; 0: never.
   */
  variantShare: number;
  /** Response headers whose values are tallied (the app's cache outcome header, if any). */
  tallyHeaders: string[];
  /** Sent with every request (Accept; Accept-Encoding with --gzip). */
  headers: Record<string, string>;
}

export interface DriverRecords {
  /** Per arrival, in schedule order. */
  atMs: Float64Array;
  phase: Uint8Array;
  result: Int16Array;
  /** From the request's creation to the body's last byte (or the error); NaN when not sent. */
  latencyMs: Float32Array;
  /** How late it went out against its instant; NaN when not sent. */
  lagMs: Float32Array;
  kind: Uint8Array;
  /** Index + 1 into `headerValues` of the first tallied header present; 0 none. */
  header: Uint8Array;
  headerValues: string[];
  bytes: number;
  wallMs: number;
  /** The driver process's CPU over the run. */
  cpuMs: { user: number; system: number };
  /** The highest number of requests in flight at once. */
  maxInFlight: number;
}

const MAX_HEADER_VALUES = 32;
// The main path's body is parsed at most this often to learn a category and a cursor: once a
// second costs a JSON.parse of ~20 kB, nothing next to 400 responses.
const DISCOVER_EVERY_MS = 1_000;

/** Runs the schedule against `origin` in a child process; resolves with every arrival's fate. */
export function runDriver(options: DriverOptions): Promise<DriverRecords> {
  const child = fork(fileURLToPath(import.meta.url), ["--spike-driver"], {
    execArgv: ["--import", "tsx"],
    serialization: "advanced",
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  return new Promise((resolve, reject) => {
    let done = false;
    child.on("message", (m: { type: string; records?: DriverRecords; error?: string }) => {
      if (m.type === "ready") child.send({ type: "run", options });
      else if (m.type === "done" && m.records) {
        done = true;
        resolve(m.records);
        child.disconnect();
      } else if (m.type === "failed") {
        done = true;
        reject(new Error(`spike driver: ${m.error}`));
        child.kill();
      }
    });
    child.on("error", reject);
    child.on("exit", (code) => {
      if (!done) reject(new Error(`spike driver exited with ${code} before its results`));
    });
  });
}

/** The child's work: the schedule, on this process's clock. */
async function drive(o: DriverOptions): Promise<DriverRecords> {
  const { at, phase } = arrivals(o.phases);
  const n = at.length;
  const result = new Int16Array(n);
  const latencyMs = new Float32Array(n).fill(Number.NaN);
  const lagMs = new Float32Array(n).fill(Number.NaN);
  const kind = new Uint8Array(n);
  const header = new Uint8Array(n);
  const headerValues: string[] = [];
  const target = new URL(o.origin);
  const agent = new http.Agent({
    keepAlive: true,
    // The driver's own count of requests in flight keeps it at or under this, so the agent
    // never queues a request out of sight: a request is sent or counted as busy.
    maxSockets: o.connections,
    maxFreeSockets: o.connections,
  });
  const paths: string[] = [o.path, o.path, o.path];
  const every = o.variantShare > 0 ? Math.round(1 / o.variantShare) : 0;
  let lastDiscover = Number.NEGATIVE_INFINITY;
  let bytes = 0;
  let inFlight = 0;
  let maxInFlight = 0;
  let finished = 0;
  const open = new Map<number, { req: http.ClientRequest; sentAt: number }>();

  const join = (path: string, param: string, value: string) =>
    `${path}${path.includes("?") ? "&" : "?"}${param}=${encodeURIComponent(value)}`;
  const discover = (body: Buffer) => {
    try {
      const page = JSON.parse(body.toString("utf8")) as {
        items?: { category?: unknown }[];
        nextCursor?: unknown;
      };
      const category = page.items?.find((i) => typeof i.category === "string")?.category;
      if (typeof category === "string") paths[1] = join(o.path, "category", category);
      if (typeof page.nextCursor === "string") paths[2] = join(o.path, "cursor", page.nextCursor);
    } catch {
      // Not JSON (another endpoint, an error page): the variants stay on the main path.
    }
  };
  const tally = (res: http.IncomingMessage): number => {
    for (const name of o.tallyHeaders) {
      const raw = res.headers[name];
      if (raw === undefined) continue;
      const value = String(raw).slice(0, 40);
      let index = headerValues.indexOf(value);
      if (index < 0 && headerValues.length < MAX_HEADER_VALUES)
        index = headerValues.push(value) - 1;
      return index + 1;
    }
    return 0;
  };

  let allDone: () => void = () => {};
  const drained = new Promise<void>((resolve) => {
    allDone = resolve;
  });
  const settle = (i: number, code: number, sentAt: number) => {
    if (result[i] !== RESULT.pending) return;
    result[i] = code;
    latencyMs[i] = performance.now() - sentAt;
    open.delete(i);
    inFlight--;
    if (++finished === n) allDone();
  };
  const skip = (i: number, code: number) => {
    result[i] = code;
    if (++finished === n) allDone();
  };

  const send = (i: number, start: number) => {
    // Every `every`-th arrival is a variant, category and cursor in turn: the same arrivals in
    // every run and against both servers.
    const variant = every > 0 && i % every === every - 1 ? 1 + (Math.floor(i / every) % 2) : 0;
    const path = paths[variant] ?? o.path;
    kind[i] = path === o.path ? 0 : variant;
    const sentAt = performance.now();
    lagMs[i] = sentAt - start - (at[i] as number);
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    const req = http.request(
      {
        agent,
        host: target.hostname,
        port: target.port,
        path,
        method: "GET",
        headers: o.headers,
      },
      (res) => {
        header[i] = tally(res);
        const keep =
          kind[i] === 0 &&
          res.statusCode === 200 &&
          performance.now() - lastDiscover > DISCOVER_EVERY_MS;
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => {
          bytes += chunk.length;
          if (keep) chunks.push(chunk);
        });
        res.on("end", () => {
          if (keep) {
            lastDiscover = performance.now();
            discover(Buffer.concat(chunks));
          }
          settle(i, res.statusCode ?? RESULT.otherError, sentAt);
        });
        res.on("error", (err) => settle(i, classify(err), sentAt));
      },
    );
    req.on("error", (err) => settle(i, classify(err), sentAt));
    open.set(i, { req, sentAt });
    req.end();
  };

  const cpu0 = process.cpuUsage();
  const start = performance.now() + 20;
  let next = 0;
  // Timeouts are swept, not one timer per request: 48,000 timers on the plateau would cost the
  // driver more than the requests. A request is ended within timeoutMs + 100 ms.
  const sweeper = setInterval(() => {
    const now = performance.now();
    for (const [i, r] of open) {
      if (now - r.sentAt > o.timeoutMs) {
        settle(i, RESULT.timeout, r.sentAt);
        r.req.destroy();
      }
    }
  }, 100);
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now() - start;
      while (next < n && (at[next] as number) <= now) {
        const i = next++;
        if (now - (at[i] as number) > o.lateMs) skip(i, RESULT.notSentLate);
        else if (inFlight >= o.connections) skip(i, RESULT.notSentBusy);
        else send(i, start);
      }
      if (next >= n) return resolve();
      // Wake up at the next instant (timers fire ≥ 1 ms late; the lag is recorded per request).
      setTimeout(tick, Math.max(0, (at[next] as number) - (performance.now() - start)));
    };
    setTimeout(tick, 20);
  });
  if (finished < n) await drained;
  clearInterval(sweeper);
  const wallMs = performance.now() - start;
  const cpu = process.cpuUsage(cpu0);
  agent.destroy();
  return {
    atMs: at,
    phase,
    result,
    latencyMs,
    lagMs,
    kind,
    header,
    headerValues,
    bytes,
    wallMs,
    cpuMs: { user: cpu.user / 1000, system: cpu.system / 1000 },
    maxInFlight,
  };
}

function classify(err: Error & { code?: string }): number {
  const code = err.code ?? "";
  if (["ECONNREFUSED", "ECONNRESET", "EPIPE", "ECONNABORTED"].includes(code)) {
    return RESULT.connection;
  }
  if (code === "ETIMEDOUT" || code === "UND_ERR_HEADERS_TIMEOUT") return RESULT.timeout;
  return RESULT.otherError;
}

if (process.argv.includes("--spike-driver") && process.send) {
  process.on("message", (m: { type: string; options: DriverOptions }) => {
    if (m.type !== "run") return;
    drive(m.options).then(
      (records) => process.send?.({ type: "done", records }),
      (err: unknown) => process.send?.({ type: "failed", error: String(err) }),
    );
  });
  process.send({ type: "ready" });
}
