import { type DatabaseKind, getDb } from "@/lib/db";

export type DatabaseCheck =
  | { ok: true; kind: DatabaseKind; location: string }
  | { ok: false; code: "database_unavailable" | "database_timeout"; message: string };

// A fresh PGlite data directory took 4.7 s to create and migrate on the development machine
// (0.8 s to reopen). 10 s covers a first start twice over; a database slower than that to answer
// SELECT 1 is reported as not ready instead of holding the probe open.
const DEADLINE_MS = 10_000;

/** Readiness: opens the shared database if needed (waiting for migrations) and runs SELECT 1. */
export async function checkDatabase(): Promise<DatabaseCheck> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), DEADLINE_MS);
  });
  const probe = (async () => {
    const db = await getDb();
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
    return { ok: true, kind: db.kind, location: db.location };
  } catch (err) {
    return { ok: false, code: "database_unavailable", message: (err as Error).message };
  } finally {
    clearTimeout(timer);
  }
}
