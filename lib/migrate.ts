import { createHash, randomUUID } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";

/** The little a migration runner needs from a connection (pg.Client and PGlite both fit). */
export interface SqlConnection {
  query<R = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<{ rows: R[] }>;
  exec(sql: string): Promise<unknown>;
}

export interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

// Read at run time from the project root (where npm start runs); not part of any bundle.
export const MIGRATIONS_DIR = path.join(
  /*turbopackIgnore: true*/ process.cwd(),
  "prisma",
  "migrations",
);

// Prisma's own bookkeeping table, column for column, so `prisma migrate deploy` (where Prisma's
// schema engine is available) sees these migrations as applied and agrees with us.
const CREATE_PRISMA_MIGRATIONS = `
CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

// Any constant works; it only has to be the same in every wirewatch process so that two of them
// starting at once against one database apply each migration once.
const MIGRATION_LOCK_KEY = 7_206_519_001;

export async function loadMigrations(dir = MIGRATIONS_DIR): Promise<Migration[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const names = entries
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  return Promise.all(
    names.map(async (name) => {
      const sql = await readFile(path.join(dir, name, "migration.sql"), "utf8");
      return { name, sql, checksum: createHash("sha256").update(sql).digest("hex") };
    }),
  );
}

export class MigrationError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "MigrationError";
  }
}

/**
 * Applies pending migrations in order, each in its own transaction, and records them in
 * _prisma_migrations. Returns the names applied. Refuses to continue when an applied migration's
 * file has changed or an earlier attempt failed half-way, since guessing there loses data.
 */
export async function migrate(
  conn: SqlConnection,
  migrations?: Migration[],
  { lock = true }: { lock?: boolean } = {},
): Promise<string[]> {
  const all = migrations ?? (await loadMigrations());
  await conn.exec(CREATE_PRISMA_MIGRATIONS);
  if (lock) await conn.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK_KEY]);
  try {
    const { rows } = await conn.query<{
      migration_name: string;
      checksum: string;
      finished_at: Date | null;
      rolled_back_at: Date | null;
    }>(`SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations"`);
    const applied = new Map(
      rows.filter((r) => !r.rolled_back_at).map((r) => [r.migration_name, r]),
    );
    const done: string[] = [];
    for (const m of all) {
      const prior = applied.get(m.name);
      if (prior) {
        if (!prior.finished_at) {
          throw new MigrationError(
            `migration ${m.name} was started but never finished; inspect the database, then mark it rolled back in _prisma_migrations`,
          );
        }
        if (prior.checksum !== m.checksum) {
          throw new MigrationError(
            `migration ${m.name} was changed after it was applied (checksum ${prior.checksum.slice(0, 12)}… in the database, ${m.checksum.slice(0, 12)}… on disk)`,
          );
        }
        continue;
      }
      await applyOne(conn, m);
      done.push(m.name);
    }
    return done;
  } finally {
    if (lock) await conn.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK_KEY]);
  }
}

async function applyOne(conn: SqlConnection, m: Migration): Promise<void> {
  const id = randomUUID();
  await conn.exec("BEGIN");
  try {
    await conn.query(
      `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, applied_steps_count)
       VALUES ($1, $2, $3, now(), 0)`,
      [id, m.checksum, m.name],
    );
    await conn.exec(m.sql);
    await conn.query(
      `UPDATE "_prisma_migrations" SET finished_at = now(), applied_steps_count = 1 WHERE id = $1`,
      [id],
    );
    await conn.exec("COMMIT");
  } catch (err) {
    await conn.exec("ROLLBACK");
    throw new MigrationError(`migration ${m.name} failed: ${(err as Error).message}`, {
      cause: err,
    });
  }
}
