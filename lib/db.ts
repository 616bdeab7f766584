import { mkdir } from "node:fs/promises";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { PrismaPGlite } from "pglite-prisma-adapter";
import { config } from "./config";
import { PrismaClient } from "./generated/prisma/client";
import { migrate, type SqlConnection } from "./migrate";

export type DatabaseKind = "pglite" | "postgres";

/** Unsubscribes a LISTEN. */
export type Unlisten = () => Promise<void>;

/** The one way to the database: Prisma for queries, plus LISTEN, which Prisma cannot do. */
export interface Database {
  kind: DatabaseKind;
  /** Where it lives, without credentials: a data directory or host/database. */
  location: string;
  prisma: PrismaClient;
  listen(channel: string, onMessage: (payload: string) => void): Promise<Unlisten>;
  close(): Promise<void>;
}

export interface OpenOptions {
  /** PostgreSQL URL; when absent the embedded PGlite is used. */
  url?: string;
  /** PGlite data directory, or "memory://" for a throwaway in-memory database. */
  dataDir?: string;
  poolSize?: number;
}

/** Opens a database and brings its schema up to date. */
export async function openDatabase(options: OpenOptions): Promise<Database> {
  return options.url
    ? openPostgres(options.url, options.poolSize ?? 10)
    : openPglite(options.dataDir ?? "memory://");
}

async function openPglite(dataDir: string): Promise<Database> {
  if (!dataDir.startsWith("memory://")) await mkdir(dataDir, { recursive: true });
  const lite = await PGlite.create(dataDir);
  await migrate(lite as SqlConnection, undefined, { lock: false });
  const prisma = new PrismaClient({ adapter: new PrismaPGlite(lite) });
  return {
    kind: "pglite",
    location: dataDir.startsWith("memory://") ? dataDir : path.resolve(dataDir),
    prisma,
    listen: async (channel, onMessage) => lite.listen(channel, onMessage),
    close: async () => {
      await prisma.$disconnect();
      await lite.close();
    },
  };
}

async function openPostgres(url: string, poolSize: number): Promise<Database> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await migrate(asSqlConnection(admin));
  } finally {
    await admin.end();
  }
  const prisma = new PrismaClient({
    adapter: new PrismaPg({ connectionString: url, max: poolSize }),
  });
  const listeners = new Set<pg.Client>();
  const parsed = new URL(url);
  return {
    kind: "postgres",
    location: `${parsed.hostname}:${parsed.port || 5432}${parsed.pathname}`,
    prisma,
    listen: async (channel, onMessage) => {
      // LISTEN needs a connection of its own that stays open; a pooled one would be handed back.
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      client.on("notification", (msg) => {
        if (msg.channel === channel) onMessage(msg.payload ?? "");
      });
      await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
      listeners.add(client);
      return async () => {
        listeners.delete(client);
        await client.end();
      };
    },
    close: async () => {
      await Promise.all([...listeners].map((c) => c.end()));
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

const globalForDb = globalThis as unknown as { wirewatchDb?: Promise<Database> };

/**
 * The process's shared database, from configuration: PostgreSQL when DATABASE_URL is set, else
 * PGlite under WIREWATCH_DATA_DIR. Kept on globalThis so Next.js route handlers,
 * instrumentation and workers in one process share one instance (PGlite allows only one).
 */
export function getDb(): Promise<Database> {
  globalForDb.wirewatchDb ??= openDatabase({
    url: config().DATABASE_URL,
    dataDir: config().WIREWATCH_DATA_DIR,
    poolSize: config().DATABASE_POOL_SIZE,
  }).catch((err) => {
    globalForDb.wirewatchDb = undefined;
    throw err;
  });
  return globalForDb.wirewatchDb;
}
