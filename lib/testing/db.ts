import { type Database, openDatabase } from "../db";
import { createScratchDatabase } from "../scratchDatabase";

/** The server tests run against: TEST_DATABASE_URL, else DATABASE_URL, else none (PGlite). */
export function testServerUrl(): string | undefined {
  return process.env.TEST_DATABASE_URL || process.env.DATABASE_URL || undefined;
}

export interface TestDatabase extends Database {
  /** Opens another client on the same database (for racing writers); closed by drop(). */
  connectAnother(poolSize?: number): Promise<Database>;
  /** Closes every client and drops the database. */
  drop(): Promise<void>;
}

/**
 * A fresh, migrated database for one test file: a new database on the test server when one is
 * configured (so files run in parallel without sharing rows), else an in-memory PGlite.
 */
export async function createTestDatabase({
  poolSize = 10,
  embedded = false,
}: {
  poolSize?: number;
  /** PGlite even when a server is configured: for what only the embedded default has. */
  embedded?: boolean;
} = {}): Promise<TestDatabase> {
  const server = embedded ? undefined : testServerUrl();
  if (!server) {
    // WIREWATCH_TEST_PGLITE_THREAD=1 runs every embedded test database the way the app opens its
    // own, in a worker thread (lib/pgliteThread.ts): the whole suite checks that path that way.
    const thread = process.env.WIREWATCH_TEST_PGLITE_THREAD === "1";
    const db = await openDatabase({ dataDir: "memory://", thread });
    return {
      ...db,
      connectAnother: async () => {
        throw new Error("a second client needs a real PostgreSQL (set TEST_DATABASE_URL)");
      },
      drop: () => db.close(),
    };
  }
  const scratch = await createScratchDatabase("ww_test", server, { poolSize });
  const others: Database[] = [];
  return {
    ...scratch.db,
    connectAnother: async (size = 2) => {
      const other = await openDatabase({ url: scratch.where, poolSize: size });
      others.push(other);
      return other;
    },
    drop: async () => {
      await Promise.all(others.map((o) => o.close()));
      await scratch.dispose();
    },
  };
}

/**
 * For tests that need real concurrency: says loudly why they are skipped without a server.
 * Use as `describe.skipIf(!requireRealPostgres("what"))(…)`.
 */
export function requireRealPostgres(what: string): boolean {
  if (testServerUrl()) return true;
  console.warn(
    `\n⚠ SKIPPED: ${what} needs a real PostgreSQL (racing connections, row locks). ` +
      "Set TEST_DATABASE_URL or DATABASE_URL to run it; PGlite is a single connection.\n",
  );
  return false;
}
