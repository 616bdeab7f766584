import { type Database, type DatabaseKind, getDb } from "@/lib/db";
import { logger } from "@/lib/logger";

export type DatabaseCheck =
  | { ok: true; kind: DatabaseKind }
  | { ok: false; code: "database_unavailable" | "database_timeout"; message: string };

// Requests that arrive while the server starts already wait for instrumentation's register(),
// which opens the database: a fresh PGlite directory took 4.7-7.5 s to create and migrate on the
// development machine (1.2 s to reopen). The deadline is for a database that stops answering (an
// unreachable PostgreSQL can hold a query until TCP gives up, minutes later); 10 s still covers
// a fresh PGlite start should a probe arrive before it is done.
const DEADLINE_MS = 10_000;

/**
 * Readiness: opens the shared database if needed (waiting for migrations) and runs SELECT 1.
 * The answer is public, so it names no host, port or database and no driver text (which has
 * them): those go to the server log.
 */
export async function checkDatabase(open: () => Promise<Database> = getDb): Promise<DatabaseCheck> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), DEADLINE_MS);
  });
  const probe = (async () => {
    const db = await open();
    await db.prisma.$queryRaw`SELECT 1`;
    return db;
  })();
  try {
    const db = await Promise.race([probe, deadline]);
    if (db === "timeout") {
      probe.catch(() => {}); // settles later; its outcome is the next probe's business
      return {
        ok: false,
        code: "database_timeout",
        message: `the database did not answer within ${DEADLINE_MS / 1000} s`,
      };
    }
    return { ok: true, kind: db.kind };
  } catch (err) {
    logger().warn({ err }, "health: the database did not answer");
    return { ok: false, code: "database_unavailable", message: "the database is not reachable" };
  } finally {
    clearTimeout(timer);
  }
}
