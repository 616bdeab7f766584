import { existsSync } from "node:fs";
import { mkdir, open, readFile, rm } from "node:fs/promises";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { vector } from "@electric-sql/pglite-pgvector";
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { PrismaPGlite } from "pglite-prisma-adapter";
import { Backoff, type BackoffPolicy } from "./backoff";
import { config } from "./config";
import { PrismaClient } from "./generated/prisma/client";
import { migrate, type SqlConnection } from "./migrate";
import { PgliteThread } from "./pgliteThread";

export type DatabaseKind = "pglite" | "postgres";

/** Unsubscribes a LISTEN. */
export type Unlisten = () => Promise<void>;

/** The one way to the database: Prisma for queries, plus LISTEN, which Prisma cannot do. */
export interface Database {
  kind: DatabaseKind;
  /** Where it lives, without credentials: a data directory or host/database. */
  location: string;
  prisma: PrismaClient;
  /**
   * The pool Prisma's PostgreSQL adapter runs on (absent on PGlite): the queue's hot statements
   * (claim, complete, enqueue) go straight to it, since Prisma's per-row conversion was ~10 % of
   * a worker's CPU in a 20,000-job drain, plus its garbage (docs/decisions/017).
   */
  pool?: pg.Pool;
  listen(channel: string, onMessage: (payload: string) => void): Promise<Unlisten>;
  close(): Promise<void>;
  /**
   * False once the database can answer no more (the embedded database's thread stopped): the
   * process's shared database is then opened again. Absent: always true.
   */
  readonly alive?: boolean;
}

export interface OpenOptions {
  /** PostgreSQL URL; when absent the embedded PGlite is used. */
  url?: string;
  /** PGlite data directory, or "memory://" for a throwaway in-memory database. */
  dataDir?: string;
  poolSize?: number;
  /** Refuse to initialise a new PGlite directory (read-only commands must not create one). */
  mustExist?: boolean;
  /**
   * PGlite in a worker thread of its own (lib/pgliteThread.ts, decision 031): the app's shared
   * database, so ingestion's statements never hold the server's event loop. In this thread
   * otherwise (tests and CLI commands, which serve nobody meanwhile).
   */
  thread?: boolean;
}

/** The PGlite directory holds no database: a read would only ever see an empty new one. */
export class DatabaseMissingError extends Error {
  constructor(readonly dataDir: string) {
    super(
      `no embedded database in ${dataDir}: start the app there first, or set WIREWATCH_DATA_DIR ` +
        "(or DATABASE_URL) to the database to read",
    );
    this.name = "DatabaseMissingError";
  }
}

/** Opens a database and brings its schema up to date. */
export async function openDatabase(options: OpenOptions): Promise<Database> {
  return options.url
    ? openPostgres(options.url, options.poolSize ?? 10)
    : openPglite(options.dataDir ?? "memory://", options.mustExist ?? false, options.thread);
}

async function openPglite(dataDir: string, mustExist: boolean, thread = false): Promise<Database> {
  const inMemory = dataDir.startsWith("memory://");
  // PG_VERSION is the first file initdb writes and is in every PGlite data directory.
  if (mustExist && !inMemory && !existsSync(path.join(dataDir, "PG_VERSION"))) {
    throw new DatabaseMissingError(path.resolve(dataDir));
  }
  let release = async () => {};
  if (!inMemory) {
    await mkdir(dataDir, { recursive: true });
    release = await lockDataDir(dataDir);
  }
  if (thread) return openPgliteThread(dataDir, inMemory, release);
  try {
    // pgvector ships as a PGlite extension; loaded here, made with CREATE EXTENSION by
    // lib/search/vectors.ts at start (docs/decisions/026).
    const lite = await PGlite.create(dataDir, { extensions: { vector } });
    await migrate(lite as SqlConnection, undefined, { lock: false });
    const prisma = new PrismaClient({ adapter: new PrismaPGlite(lite) });
    return {
      kind: "pglite",
      location: inMemory ? dataDir : path.resolve(dataDir),
      prisma,
      listen: async (channel, onMessage) => lite.listen(channel, onMessage),
      close: async () => {
        await prisma.$disconnect();
        await lite.close();
        await release();
      },
    };
  } catch (err) {
    await release();
    throw err;
  }
}

/** The same database as openPglite's, with PGlite and its adapter in a worker thread. */
async function openPgliteThread(
  dataDir: string,
  inMemory: boolean,
  release: () => Promise<void>,
): Promise<Database> {
  let thread: PgliteThread | null = null;
  try {
    thread = await PgliteThread.start(dataDir);
    await migrate(thread.sql(), undefined, { lock: false });
    const open = thread;
    const prisma = new PrismaClient({ adapter: open.adapterFactory() });
    return {
      kind: "pglite",
      location: inMemory ? dataDir : path.resolve(dataDir),
      prisma,
      get alive() {
        return open.alive;
      },
      listen: (channel, onMessage) => open.listen(channel, onMessage),
      close: async () => {
        await prisma.$disconnect();
        await open.close();
        await release();
      },
    };
  } catch (err) {
    await thread?.close().catch(() => undefined);
    await release();
    throw err;
  }
}

export class DatabaseInUseError extends Error {
  constructor(dataDir: string, pid: number) {
    super(
      `the embedded database in ${path.resolve(dataDir)} is in use by process ${pid} ` +
        "(is wirewatch running?). PGlite allows one process at a time: stop that process, or " +
        "use PostgreSQL (DATABASE_URL) to share a database between processes",
    );
    this.name = "DatabaseInUseError";
  }
}

/**
 * PGlite has no lock of its own, and two processes writing one data directory corrupt it.
 * A lock file holding the owner's pid keeps a second process out; one left behind by a process
 * that died is taken over.
 */
async function lockDataDir(dataDir: string): Promise<() => Promise<void>> {
  const lockPath = path.join(dataDir, "wirewatch.lock");
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await open(lockPath, "wx");
      await handle.writeFile(String(process.pid));
      await handle.close();
      return () => rm(lockPath, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const owner = Number.parseInt(await readFile(lockPath, "utf8").catch(() => ""), 10);
      if (owner && owner !== process.pid && isAlive(owner)) {
        throw new DatabaseInUseError(dataDir, owner);
      }
      await rm(lockPath, { force: true });
    }
  }
  throw new Error(`could not lock ${lockPath}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

export class DatabaseUnavailableError extends Error {
  constructor(location: string, cause: unknown) {
    super(`cannot reach PostgreSQL at ${location}: ${(cause as Error)?.message ?? cause}`, {
      cause,
    });
    this.name = "DatabaseUnavailableError";
  }
}

async function openPostgres(url: string, poolSize: number): Promise<Database> {
  const parsed = new URL(url);
  const location = `${parsed.hostname}:${parsed.port || 5432}${parsed.pathname}`;
  const admin = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  try {
    await admin.connect();
  } catch (err) {
    throw new DatabaseUnavailableError(location, err);
  }
  try {
    await migrate(asSqlConnection(admin));
  } finally {
    await admin.end();
  }
  // A server that stops answering (a partition) must fail connects rather than hang them, and
  // TCP keepalive notices a dead peer on an idle pooled connection.
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    connectionTimeoutMillis: 10_000,
    keepAlive: true,
  });
  // An idle connection the server dropped (a restart) is reported here; the next query on the
  // pool fails or reconnects on its own, so there is nothing to do, but an unheard 'error' would
  // end the process.
  pool.on("error", () => undefined);
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool, { disposeExternalPool: true }) });
  const listeners = new Set<pg.Client>();
  let dbClosed = false;
  return {
    kind: "postgres",
    location,
    prisma,
    pool,
    listen: async (channel, onMessage) => {
      // LISTEN needs a connection of its own that stays open; a pooled one would be handed back.
      // When it is lost (the server restarted), it is opened again with growing pauses; what was
      // notified meanwhile is lost, so listeners must not depend on every notification.
      let current: pg.Client | null = null;
      let closed = false;
      const connect = async (): Promise<void> => {
        const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
        client.on("notification", (msg) => {
          if (msg.channel === channel) onMessage(msg.payload ?? "");
        });
        let lost = false;
        let established = false;
        const onLost = () => {
          if (lost) return;
          lost = true;
          listeners.delete(client);
          client.end().catch(() => undefined);
          // Only a connection that was up starts reconnecting: a failed attempt (pg emits 'end'
          // after a refused connect too) is retried by the loop that made it.
          if (established && !closed && !dbClosed) void reconnect();
        };
        client.on("error", onLost);
        client.on("end", onLost);
        try {
          await client.connect();
          await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
          if (lost) throw new Error("connection lost while subscribing");
        } catch (err) {
          lost = true;
          client.end().catch(() => undefined);
          throw err;
        }
        established = true;
        if (closed || dbClosed) {
          lost = true; // unlistened while connecting: this one is not wanted
          await client.end();
          return;
        }
        current = client;
        listeners.add(client);
      };
      const reconnect = async () => {
        const backoff = new Backoff(LISTEN_RECONNECT);
        while (!closed && !dbClosed) {
          await backoff.wait();
          if (closed || dbClosed) return;
          try {
            await connect();
            return;
          } catch {
            // still down; try again after a longer pause
          }
        }
      };
      await connect();
      return async () => {
        closed = true;
        const client = current;
        if (!client) return;
        listeners.delete(client);
        await client.end().catch(() => undefined);
      };
    },
    close: async () => {
      dbClosed = true;
      await Promise.all([...listeners].map((c) => c.end().catch(() => undefined)));
      await prisma.$disconnect();
    },
  };
}

function asSqlConnection(client: pg.Client): SqlConnection {
  return {
    query: async <R>(sql: string, params?: unknown[]) =>
      (await client.query(sql, params)) as unknown as { rows: R[] },
    exec: (sql) => client.query(sql),
  };
}

/**
 * A lost LISTEN connection (PostgreSQL restarted, a network cut) is opened again after 250 ms,
 * doubling to 5 s, with full jitter: every worker process loses its LISTEN at the same moment,
 * and reconnecting in step would hit a database that is just coming back with all of them at
 * once. 5 s is short next to a worker's poll interval, which covers what is missed meanwhile.
 */
const LISTEN_RECONNECT: BackoffPolicy = { baseMs: 250, capMs: 5_000 };

const globalForDb = globalThis as unknown as { wirewatchDb?: Promise<Database> };

/**
 * The process's shared database, from configuration: PostgreSQL when DATABASE_URL is set, else
 * PGlite under WIREWATCH_DATA_DIR. Kept on globalThis so Next.js route handlers,
 * instrumentation and workers in one process share one instance (PGlite allows only one).
 */
export function getDb(): Promise<Database> {
  const shared = globalForDb.wirewatchDb;
  if (!shared) return openShared(Promise.resolve());
  return shared.then((db) => {
    if (db.alive !== false) return db;
    // An embedded database whose thread stopped is closed (its lock file goes) and opened anew.
    if (globalForDb.wirewatchDb === shared) openShared(db.close().catch(() => undefined));
    return getDb();
  });
}

function openShared(after: Promise<unknown>): Promise<Database> {
  const opening: Promise<Database> = after
    .then(() => openConfiguredDatabase({ thread: true }))
    .catch((err) => {
      if (globalForDb.wirewatchDb === opening) globalForDb.wirewatchDb = undefined;
      throw err;
    });
  globalForDb.wirewatchDb = opening;
  return opening;
}

/** A database of its own from configuration (a CLI command); `mustExist` for read-only ones. */
export function openConfiguredDatabase(options: Pick<OpenOptions, "mustExist" | "thread"> = {}) {
  return openDatabase({
    url: config().DATABASE_URL,
    dataDir: config().WIREWATCH_DATA_DIR,
    poolSize: config().DATABASE_POOL_SIZE,
    ...options,
  });
}
