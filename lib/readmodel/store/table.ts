import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import type { Database } from "../../db";
import { PrismaClient } from "../../generated/prisma/client";
import type { Payload } from "../types";

/**
 * The read_payloads table, the memory store's copy for restarts, reached through the read path's
 * own connections: on PostgreSQL a pool of READ_POOL_SIZE (2) connections of its own, so 400
 * readers a second can never take the connections ingestion's writer and queue need, nor a burst
 * of ingestion starve readers; on PGlite the process's one instance (it has a single connection
 * whatever we do). Only read_payloads is named here: the request path's one table.
 */
export interface PayloadTable {
  /** Every stored payload (the head row included, see HEAD_ROW). */
  load(newerThan?: number): Promise<Payload[]>;
  /** Inserts or replaces, a row only by one of the same or a newer model version. */
  upsert(payloads: readonly Payload[]): Promise<void>;
  remove(keys: readonly string[]): Promise<void>;
  /** Every key in the table: a refresh drops what another process's builder deleted. */
  keys(): Promise<string[]>;
  close(): Promise<void>;
}

/**
 * The head (the newest complete version) kept as a row of its own with an empty body, so one
 * table holds the whole model and a restart finds both. A key no payload can have: payload keys
 * are built by lib/readmodel/keys.ts and never start with "#".
 */
export const HEAD_ROW = "#head";

/**
 * A failed connect gives up after 2 s and a statement after 5 s: the table is written after a
 * build and read at start and by the refresh, never while a reader waits, so these only bound
 * how long a dead database holds a builder or a refresh (the store then says unavailable).
 */
const CONNECT_TIMEOUT_MS = 2_000;
const STATEMENT_TIMEOUT_MS = 5_000;

/**
 * Rows per upsert statement: a build writes a few hundred payloads; one statement per row would
 * be as many round trips, one per 500 keeps each statement's parameters (5 per row) far under
 * PostgreSQL's 65,535.
 */
const UPSERT_CHUNK = 500;

type Row = {
  key: string;
  model_version: bigint | number;
  etag: string;
  body: Uint8Array;
  built_at: Date;
};

/** The read path's table on this process's database (its own pool on PostgreSQL). */
export async function openPayloadTable(
  db: Database,
  /** The read pool's server; undefined: read through `db`'s own client (PGlite, tests). */
  url: string | undefined,
  poolSize: number,
): Promise<PayloadTable> {
  if (db.kind === "pglite" || !url) return prismaTable(db.prisma, async () => {});
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    statement_timeout: STATEMENT_TIMEOUT_MS,
    keepAlive: true,
    application_name: "wirewatch-read",
  });
  // An idle connection the server dropped is reported here; the next query reconnects or fails.
  pool.on("error", () => undefined);
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool, { disposeExternalPool: true }) });
  return prismaTable(prisma, () => prisma.$disconnect());
}

function prismaTable(prisma: PrismaClient, close: () => Promise<void>): PayloadTable {
  return {
    async load(newerThan = -1) {
      const rows = await prisma.$queryRaw<Row[]>`
        SELECT key, model_version, etag, body, built_at FROM read_payloads
        WHERE model_version > ${newerThan}`;
      return rows.map((r) => ({
        key: r.key,
        modelVersion: Number(r.model_version),
        etag: r.etag,
        body: Buffer.from(r.body),
        builtAt: new Date(r.built_at),
      }));
    },
    async upsert(payloads) {
      for (let i = 0; i < payloads.length; i += UPSERT_CHUNK) {
        const chunk = payloads.slice(i, i + UPSERT_CHUNK);
        // A row is replaced only by the same or a newer version: two builders' late writes (or a
        // request-built page of an older version arriving after a build) never roll a key back.
        await prisma.$executeRaw`
          INSERT INTO read_payloads (key, model_version, etag, body, built_at)
          SELECT * FROM unnest(
            ${chunk.map((p) => p.key)}::text[],
            ${chunk.map((p) => p.modelVersion)}::bigint[],
            ${chunk.map((p) => p.etag)}::text[],
            ${chunk.map((p) => `\\x${p.body.toString("hex")}`)}::text[]::bytea[],
            ${chunk.map((p) => p.builtAt.toISOString())}::timestamptz[])
          ON CONFLICT (key) DO UPDATE SET
            model_version = EXCLUDED.model_version, etag = EXCLUDED.etag,
            body = EXCLUDED.body, built_at = EXCLUDED.built_at
          WHERE read_payloads.model_version <= EXCLUDED.model_version`;
      }
    },
    async remove(keys) {
      if (keys.length === 0) return;
      await prisma.$executeRaw`DELETE FROM read_payloads WHERE key = ANY(${[...keys]}::text[])`;
    },
    async keys() {
      const rows = await prisma.$queryRaw<{ key: string }[]>`SELECT key FROM read_payloads`;
      return rows.map((r) => r.key);
    },
    close,
  };
}
