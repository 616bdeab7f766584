import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { type Database, openDatabase } from "./db";

export interface ScratchDatabase {
  db: Database;
  /** The scratch database's URL (PostgreSQL) or data directory (PGlite). */
  where: string;
  /** Closes the database and removes it. */
  dispose(): Promise<void>;
}

/**
 * A fresh, migrated database that is thrown away afterwards: a new database on `serverUrl`'s
 * PostgreSQL server when given (it needs CREATEDB), else an embedded PGlite in a temporary
 * directory. Used by replays, benchmarks and tests so they never touch real data.
 */
export async function createScratchDatabase(
  prefix: string,
  serverUrl: string | undefined,
  { poolSize = 10 } = {},
): Promise<ScratchDatabase> {
  if (!serverUrl) {
    const dir = await mkdtemp(path.join(tmpdir(), `${prefix}-`));
    const db = await openDatabase({ dataDir: dir });
    return {
      db,
      where: dir,
      dispose: async () => {
        await db.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  }
  const name = `${prefix}_${process.pid}_${randomBytes(4).toString("hex")}`.replace(/\W/g, "_");
  await adminQuery(serverUrl, `CREATE DATABASE ${pg.escapeIdentifier(name)}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  try {
    const db = await openDatabase({ url: url.toString(), poolSize });
    return {
      db,
      where: url.toString(),
      dispose: async () => {
        await db.close();
        await dropDatabase(serverUrl, name);
      },
    };
  } catch (err) {
    await dropDatabase(serverUrl, name);
    throw err;
  }
}

export async function dropDatabase(serverUrl: string, name: string): Promise<void> {
  await adminQuery(serverUrl, `DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
}

async function adminQuery(serverUrl: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
