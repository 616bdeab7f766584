/**
 * The processing line's dedup stage in a process of its own, for tests that kill it:
 *
 *   node --import tsx workers/line/testing/lineProcess.ts --url postgres://… [--concurrency C]
 *     [--lease S] [--hold-ms M] [--sweep-ms M]
 *
 * --hold-ms keeps every decision's transaction open that long before it commits (its locks
 * held, nothing visible yet), so a SIGKILL lands inside a decision rather than between two.
 * Prints `ready <workerId>`; SIGTERM stops the line and the worker and exits 0.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { type Database, openDatabase } from "@/lib/db";
import { sleep } from "@/lib/sleep";
import { dedupStage } from "@/workers/dedup/stage";
import { startQueueWorker } from "@/workers/queue/queueWorker";
import { createLine } from "../line";

const THIS_FILE = fileURLToPath(import.meta.url);
const PROJECT_ROOT = path.resolve(path.dirname(THIS_FILE), "../../..");

export interface LineProcessOptions {
  url: string;
  concurrency?: number;
  leaseSeconds?: number;
  holdMs?: number;
  sweepMs?: number;
}

/** The database with every interactive transaction held open `ms` before it commits. */
function holdingTransactions(db: Database, ms: number): Database {
  if (ms <= 0) return db;
  const prisma = new Proxy(db.prisma, {
    get(target, prop, receiver) {
      if (prop !== "$transaction") return Reflect.get(target, prop, receiver);
      return (fn: (tx: unknown) => Promise<unknown>, options?: unknown) =>
        (target.$transaction as (f: typeof fn, o?: unknown) => Promise<unknown>)(async (tx) => {
          const result = await fn(tx);
          await sleep(ms);
          return result;
        }, options);
    },
  });
  return { ...db, prisma };
}

async function main(): Promise<void> {
  const { values: v } = parseArgs({
    options: {
      url: { type: "string" },
      concurrency: { type: "string", default: "4" },
      lease: { type: "string", default: "30" },
      "hold-ms": { type: "string", default: "0" },
      "sweep-ms": { type: "string", default: "500" },
    },
  });
  if (!v.url) throw new Error("--url is required");
  const base = await openDatabase({ url: v.url, poolSize: 6 });
  const db = holdingTransactions(base, Number(v["hold-ms"]));
  const line = createLine(
    db,
    [dedupStage(db, { concurrency: Number(v.concurrency), leaseSeconds: Number(v.lease) })],
    { sweepMs: Number(v["sweep-ms"]) },
  );
  const worker = await startQueueWorker(db, {
    queues: line.queues,
    pollMs: 100,
    sweepMs: 200,
    reportMs: 1_000,
  });
  await line.start();
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await line.stop();
    await worker.stop(5_000);
    await base.close();
    process.stdout.write(`stopped ${worker.id}\n`, () => process.exit(0));
  };
  process.on("SIGTERM", () => void stop());
  process.stdout.write(`ready ${worker.id}\n`);
}

export interface LineProcess {
  id: string;
  pid: number;
  kill(signal: NodeJS.Signals): void;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr(): string;
}

/** Starts a line process and waits for its ready line. */
export function spawnLineProcess(o: LineProcessOptions, timeoutMs = 30_000): Promise<LineProcess> {
  const args = ["--url", o.url];
  if (o.concurrency !== undefined) args.push("--concurrency", String(o.concurrency));
  if (o.leaseSeconds !== undefined) args.push("--lease", String(o.leaseSeconds));
  if (o.holdMs !== undefined) args.push("--hold-ms", String(o.holdMs));
  if (o.sweepMs !== undefined) args.push("--sweep-ms", String(o.sweepMs));
  const child = spawn(process.execPath, ["--import", "tsx", THIS_FILE, ...args], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, LOG_LEVEL: "warn" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let tail = "";
  child.stderr?.setEncoding("utf8");
  child.stderr?.on("data", (chunk: string) => {
    tail = (tail + chunk).slice(-8_000);
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`line process not ready after ${timeoutMs} ms:\n${tail}`));
    }, timeoutMs);
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`line process exited (${code ?? signal}) before ready:\n${tail}`));
    });
    if (!child.stdout) throw new Error("no stdout");
    createInterface({ input: child.stdout }).on("line", (line) => {
      const m = /^ready (\S+)$/.exec(line);
      if (!m?.[1]) return;
      clearTimeout(timer);
      resolve({
        id: m[1],
        pid: child.pid ?? -1,
        kill: (signal) => {
          if (child.exitCode === null && child.signalCode === null) child.kill(signal);
        },
        exited,
        stderr: () => tail,
      });
    });
  });
}

if (process.argv[1] && pathToFileURL(process.argv[1]).href === import.meta.url) {
  main().catch((err: unknown) => {
    process.stderr.write(`lineProcess: ${(err as Error)?.stack ?? err}\n`);
    process.exit(1);
  });
}
