import pg from "pg";
import type { Database } from "@/lib/db";
import { Prisma } from "@/lib/generated/prisma/client";
import type { Tx } from "./clusters";

/**
 * The dedup decision's transaction. On PostgreSQL it runs on one pooled connection of the `pg`
 * pool directly, not through Prisma's interactive transaction: a decision is ~20 small
 * statements (locks, lookups, the link), and Prisma's per-statement cost in an interactive
 * transaction (~0.5 ms of CPU each) made the stage CPU-bound at under 100 decisions a second
 * (bench dedup). The statements are the same Prisma.sql; what they return is converted as
 * Prisma's raw queries convert it (int8 → BigInt), so the callers cannot tell. On PGlite (one
 * connection, no pool) it is Prisma's transaction, as before.
 *
 * A statement that has not finished within `timeoutMs` is cancelled (statement_timeout), as
 * Prisma's transaction timeout would: a lock wait behind a stuck decision fails the job, which the
 * queue retries, rather than holding a connection for ever.
 */
export async function inTransaction<T>(
  db: Database,
  work: (tx: Tx) => Promise<T>,
  { timeoutMs = 25_000 } = {},
): Promise<T> {
  const pool = db.pool;
  if (!pool) return db.prisma.$transaction(work, { maxWait: 30_000, timeout: timeoutMs });
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query(
      `BEGIN; SET LOCAL statement_timeout = ${Math.max(1, Math.floor(timeoutMs))}`,
    );
    try {
      const result = await work(asTx(client));
      await client.query("COMMIT");
      return result;
    } catch (err) {
      await client.query("ROLLBACK").catch((e: Error) => {
        broken = e; // the connection is in no state to go back to the pool
      });
      throw err;
    }
  } finally {
    client.release(broken);
  }
}

const INT8 = 20;
const INT8_ARRAY = 1016;
const parseInt8Array = pg.types.getTypeParser(INT8_ARRAY as never) as (
  v: string,
) => (string | null)[];

/** As Prisma returns raw values: int8 (count(*), ids) as BigInt, int8[] as BigInt[]. */
const prismaTypes = {
  getTypeParser(oid: number, format?: "text" | "binary") {
    if (oid === INT8) return (v: string) => BigInt(v);
    if (oid === INT8_ARRAY)
      return (v: string) => parseInt8Array(v).map((x) => (x === null ? null : BigInt(x)));
    return pg.types.getTypeParser(oid as never, format ?? "text");
  },
};

function toSql(query: TemplateStringsArray | Prisma.Sql, values: unknown[]): Prisma.Sql {
  return query instanceof Prisma.Sql ? query : Prisma.sql(query, ...values);
}

/**
 * Read-only statements on the pool's other connections, each its own autocommit statement, for
 * what a batch's transaction reads that needs none of its own writes (stage 3's lookups, which
 * leave the batch's items out): split over `ways` connections they use both of the server's
 * cores, where inside the transaction they would run one after another on one backend. Null on
 * PGlite (one connection). Read committed: each statement's snapshot is taken when it starts, so
 * one started after the transaction's advisory locks sees every decision those locks waited for.
 */
export function sideReaders(db: Database, ways: number, transactions: number): Tx[] | null {
  const pool = db.pool;
  // Room for the stage's own transactions, the queue's claims and completions, and the readers:
  // a transaction waiting for a reader that waits for a connection would stall until the pool's
  // connect timeout (the batch then fails and its items are decided alone).
  const room = (pool?.options.max ?? 0) - transactions - 2;
  const n = Math.min(ways, room);
  if (!pool || n < 2) return null;
  return Array.from({ length: n }, () => asTx(pool));
}

/** The two calls the dedup code makes on a transaction, over a pg client (or pool). */
function asTx(client: pg.PoolClient | pg.Pool): Tx {
  const run = (query: TemplateStringsArray | Prisma.Sql, values: unknown[]) => {
    const sql = toSql(query, values);
    return client.query({ text: sql.text, values: sql.values, types: prismaTypes });
  };
  const tx = {
    $queryRaw: async (query: TemplateStringsArray | Prisma.Sql, ...values: unknown[]) =>
      (await run(query, values)).rows,
    $executeRaw: async (query: TemplateStringsArray | Prisma.Sql, ...values: unknown[]) =>
      (await run(query, values)).rowCount ?? 0,
  };
  return tx as unknown as Tx;
}
