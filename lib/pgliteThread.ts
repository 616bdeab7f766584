import { Worker } from "node:worker_threads";
import type {
  IsolationLevel,
  SqlDriverAdapter,
  SqlDriverAdapterFactory,
  SqlQuery,
  SqlResultSet,
  Transaction,
} from "@prisma/driver-adapter-utils";
import { searchRoots } from "./embed/packages";
import type { SqlConnection } from "./migrate";

/**
 * The embedded database in a thread of its own (docs/decisions/031).
 *
 * PGlite is PostgreSQL compiled to WebAssembly, and every statement runs synchronously on the
 * thread that calls it. On the server's main thread, a minute of ingestion at full speed held
 * the event loop for up to 3.8 s at a stretch (a chain of statements, each resolving the next
 * in a microtask), and a public read that needs no database at all waited behind it. Here
 * PGlite, its Prisma adapter (pglite-prisma-adapter) and its LISTEN run in a worker thread;
 * this side is a Prisma driver adapter and a migration connection that post each call to it
 * and await the answer. Each answer arrives as a message, a macrotask, so the main thread
 * serves its sockets between any two statements, and the WebAssembly runs on the other core.
 *
 * One thread per data directory, as one PGlite per directory: what holds for PGlite (a single
 * session; a transaction has it to itself until it ends) holds the same way here, since the
 * calls reach the one adapter in the thread. Errors cross as data: a driver error becomes an
 * Error named DriverAdapterError with its cause (what Prisma maps to P2002 and the rest), any
 * other keeps its name, message and SQLSTATE code. The thread dying (out of memory, a
 * WebAssembly abort) fails every call in flight and every later one with the reason.
 */

/** Runs in the worker thread: opens PGlite, then answers calls until "close". */
const THREAD_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
// On Linux this thread runs at a lower priority than the server's own (setpriority on its thread
// id, from /proc/thread-self): when both want the CPU, a reader's request, which needs no
// database, goes first, and ingestion's statements take what is left. The embedding thread
// (lib/embed/shipped.ts, nice 10) yields to both. Elsewhere it runs at the process's priority.
try {
  const tid = Number(require("node:fs").readlinkSync("/proc/thread-self").split("/").pop());
  if (Number.isInteger(tid) && tid > 0) require("node:os").setPriority(tid, workerData.nice);
} catch {}
const from = { paths: workerData.searchRoots };
const load = (name) => require(require.resolve(name, from));
let lite;
let adapter;
const transactions = new Map();
const listens = new Map();
let nextId = 1;

function describe(err) {
  if (err && err.name === "DriverAdapterError" && err.cause && typeof err.cause === "object") {
    return { driver: { ...err.cause }, message: String(err.message || err.cause.message || "") };
  }
  return {
    name: (err && err.name) || "Error",
    message: String((err && err.message) || err),
    code: err && typeof err.code === "string" ? err.code : undefined,
    detail: err && typeof err.detail === "string" ? err.detail : undefined,
  };
}

const ops = {
  query: (m) => (m.tx ? transaction(m.tx) : adapter).queryRaw(m.query),
  execute: (m) => (m.tx ? transaction(m.tx) : adapter).executeRaw(m.query),
  script: (m) => adapter.executeScript(m.script),
  begin: async (m) => {
    const tx = await adapter.startTransaction(m.isolationLevel);
    const id = nextId++;
    transactions.set(id, tx);
    return { id, options: tx.options };
  },
  commit: (m) => end(m.tx, (tx) => tx.commit()),
  rollback: (m) => end(m.tx, (tx) => tx.rollback()),
  sql: async (m) => ({ rows: (await lite.query(m.sql, m.params)).rows }),
  exec: async (m) => { await lite.exec(m.sql); },
  listen: async (m) => {
    const id = nextId++;
    const unlisten = await lite.listen(m.channel, (payload) =>
      parentPort.postMessage({ type: "notify", listen: id, payload }),
    );
    listens.set(id, unlisten);
    return id;
  },
  unlisten: async (m) => {
    const unlisten = listens.get(m.listen);
    listens.delete(m.listen);
    if (unlisten) await unlisten();
  },
  close: async () => {
    await lite.close();
  },
};

function transaction(id) {
  const tx = transactions.get(id);
  if (!tx) throw new Error("transaction " + id + " has ended");
  return tx;
}

async function end(id, how) {
  const tx = transaction(id);
  transactions.delete(id);
  await how(tx);
}

parentPort.on("message", (m) => {
  Promise.resolve()
    .then(() => ops[m.op](m))
    .then(
      (value) => parentPort.postMessage({ type: "result", id: m.id, value }),
      (err) => parentPort.postMessage({ type: "result", id: m.id, error: describe(err) }),
    );
});

(async () => {
  const { PGlite } = load("@electric-sql/pglite");
  const { vector } = load("@electric-sql/pglite-pgvector");
  const { PrismaPGlite } = load("pglite-prisma-adapter");
  lite = await PGlite.create(workerData.dataDir, { extensions: { vector } });
  const factory = new PrismaPGlite(lite);
  adapter = await factory.connect();
  parentPort.postMessage({ type: "ready", adapterName: factory.adapterName });
})().catch((err) => parentPort.postMessage({ type: "open_failed", error: describe(err) }));
`;

type Op = "query" | "execute" | "script" | "begin" | "commit" | "rollback";
type RawOp = "sql" | "exec" | "listen" | "unlisten" | "close";

interface ErrorData {
  driver?: Record<string, unknown>;
  name?: string;
  message: string;
  code?: string;
  detail?: string;
}

type FromThread =
  | { type: "ready"; adapterName: string }
  | { type: "open_failed"; error: ErrorData }
  | { type: "result"; id: number; value?: unknown; error?: ErrorData }
  | { type: "notify"; listen: number; payload: string };

/** The thread stopped (or never started); every call fails with this. */
export class DatabaseThreadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DatabaseThreadError";
  }
}

/**
 * An error that crossed from the thread, rebuilt: a driver error keeps the shape Prisma
 * recognises (`name === "DriverAdapterError"` with its `cause`), others their name and code.
 */
function rebuild(data: ErrorData): Error {
  if (data.driver) {
    const err = new Error(data.message);
    err.name = "DriverAdapterError";
    (err as Error & { cause: unknown }).cause = data.driver;
    return err;
  }
  return Object.assign(new Error(data.message), {
    name: data.name ?? "Error",
    ...(data.code ? { code: data.code } : {}),
    ...(data.detail ? { detail: data.detail } : {}),
  });
}

/**
 * Opening takes a few seconds for a new data directory (initdb) and well under one for an
 * existing one; two minutes only catches a thread that hangs on a machine busy with other work.
 */
const OPEN_TIMEOUT_MS = 120_000;

/**
 * Nice 5: a third of the CPU weight of the server's thread (Linux CFS weights 335 against 1024)
 * when both are busy; on an idle core it runs at full speed, so ingestion loses nothing unless
 * readers need the CPU. Above the embedding thread's 10, so writes outrank a backfill.
 */
const THREAD_NICE = 5;

export class PgliteThread {
  private readonly pending = new Map<
    number,
    { resolve: (v: unknown) => void; reject: (e: Error) => void }
  >();
  private readonly listeners = new Map<number, (payload: string) => void>();
  private nextId = 1;
  private stopped: DatabaseThreadError | null = null;
  private closing = false;
  adapterName = "pglite-prisma-adapter";

  private constructor(
    private readonly worker: Worker,
    readonly dataDir: string,
  ) {}

  /** Starts the thread and opens PGlite in `dataDir` ("memory://" for a throwaway one). */
  static async start(dataDir: string): Promise<PgliteThread> {
    const worker = new Worker(THREAD_SOURCE, {
      eval: true,
      workerData: { dataDir, searchRoots: searchRoots(), nice: THREAD_NICE },
      // PostgreSQL's own notices go to our stderr, never stdout (CLI commands print JSON there).
      stdout: true,
    });
    worker.stdout.on("data", (chunk: Buffer) => process.stderr.write(chunk));
    const thread = new PgliteThread(worker, dataDir);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        void worker.terminate();
        reject(
          new DatabaseThreadError(
            `the embedded database in ${dataDir} did not open within ${OPEN_TIMEOUT_MS / 1000} s`,
          ),
        );
      }, OPEN_TIMEOUT_MS);
      const opened = (message: FromThread) => {
        if (message.type === "ready") {
          thread.adapterName = message.adapterName;
        } else if (message.type === "open_failed") {
          void worker.terminate();
          reject(rebuild(message.error));
        } else return;
        clearTimeout(timer);
        worker.off("message", opened);
        resolve();
      };
      worker.on("message", opened);
      worker.once("error", (err) => {
        clearTimeout(timer);
        reject(err);
      });
    });
    worker.on("message", (message: FromThread) => thread.onMessage(message));
    worker.on("error", (err) =>
      thread.fail(`the embedded database's thread failed: ${err.message}`),
    );
    worker.on("exit", (code) => {
      if (!thread.closing) thread.fail(`the embedded database's thread exited (code ${code})`);
    });
    return thread;
  }

  /** Whether the thread stopped (a Database holding it must be opened again). */
  get alive(): boolean {
    return this.stopped === null;
  }

  /** Prisma's driver adapter, forwarding every statement to the thread. */
  adapterFactory(): SqlDriverAdapterFactory {
    const info = { provider: "postgres" as const, adapterName: this.adapterName };
    const queryable = (tx?: number) => ({
      ...info,
      queryRaw: (query: SqlQuery) => this.call<SqlResultSet>("query", { query, tx }),
      executeRaw: (query: SqlQuery) => this.call<number>("execute", { query, tx }),
    });
    const adapter: SqlDriverAdapter = {
      ...queryable(),
      executeScript: (script: string) => this.call<void>("script", { script }),
      startTransaction: async (isolationLevel?: IsolationLevel): Promise<Transaction> => {
        const begun = await this.call<{ id: number; options: Transaction["options"] }>("begin", {
          isolationLevel,
        });
        return {
          ...queryable(begun.id),
          options: begun.options,
          commit: () => this.call<void>("commit", { tx: begun.id }),
          rollback: () => this.call<void>("rollback", { tx: begun.id }),
        };
      },
      getConnectionInfo: () => ({ supportsRelationJoins: true }),
      dispose: async () => {},
    };
    return { ...info, connect: async () => adapter };
  }

  /** A connection for the migration runner (plain SQL, rows as objects). */
  sql(): SqlConnection {
    return {
      query: <R>(sql: string, params?: unknown[]) =>
        this.call<{ rows: R[] }>("sql", { sql, params }),
      exec: (sql: string) => this.call<void>("exec", { sql }),
    };
  }

  /** LISTEN on the thread's PGlite; NOTIFY payloads come back as messages. */
  async listen(
    channel: string,
    onMessage: (payload: string) => void,
  ): Promise<() => Promise<void>> {
    const id = await this.call<number>("listen", { channel });
    this.listeners.set(id, onMessage);
    return async () => {
      this.listeners.delete(id);
      if (this.alive) await this.call<void>("unlisten", { listen: id });
    };
  }

  /** Closes PGlite (flushing it to disk) and stops the thread. */
  async close(): Promise<void> {
    if (this.closing) return;
    try {
      if (this.alive) await this.call<void>("close", {});
    } finally {
      this.closing = true;
      await this.worker.terminate();
      this.fail("the embedded database was closed");
    }
  }

  /** Ends the thread at once, as a crash would (tests of what callers see then). */
  async kill(): Promise<void> {
    await this.worker.terminate();
  }

  private call<T>(op: Op | RawOp, payload: Record<string, unknown>): Promise<T> {
    if (this.stopped) return Promise.reject(this.stopped);
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.worker.postMessage({ ...payload, op, id });
    });
  }

  private onMessage(message: FromThread): void {
    if (message.type === "notify") {
      this.listeners.get(message.listen)?.(message.payload);
      return;
    }
    if (message.type !== "result") return;
    const waiting = this.pending.get(message.id);
    if (!waiting) return;
    this.pending.delete(message.id);
    if (message.error) waiting.reject(rebuild(message.error));
    else waiting.resolve(message.value);
  }

  private fail(reason: string): void {
    if (this.stopped) return;
    this.stopped = new DatabaseThreadError(reason);
    for (const waiting of this.pending.values()) waiting.reject(this.stopped);
    this.pending.clear();
    this.listeners.clear();
  }
}
