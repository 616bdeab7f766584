import type { Database } from "@/lib/db";
import type { Prisma } from "@/lib/generated/prisma/client";

/**
 * Runs one of the queue's hot statements (claim, complete, enqueue): on the PostgreSQL pool
 * when there is one, else through Prisma (PGlite). The same SQL and parameters either way; the
 * statements cast what they return to types both drivers read alike (ids as text, ints, jsonb).
 * Prisma's per-row conversion and its garbage were ~10 % of a worker's CPU in a 20,000-job drain
 * (docs/decisions/017).
 */
export async function queueQuery<T>(db: Database, sql: Prisma.Sql): Promise<T[]> {
  if (db.pool) return (await db.pool.query(sql.text, sql.values)).rows as T[];
  return db.prisma.$queryRaw<T[]>(sql);
}
