import type pg from "pg";
import type { Database } from "@/lib/db";

/**
 * Jobs rows in states the queue's own operations reach only through time or a crash, for tests
 * and benches that need them as a starting point. Not for production code: these write jobs
 * without leases, fencing or notifications.
 */

/**
 * Every ready job of `queue` held by `owner` for `seconds`, as if that worker had claimed them
 * (attempt 1, a fresh token) and then died: what a previous run leaves behind.
 */
export async function holdLeases(
  db: Database,
  { queue, owner, seconds }: { queue: string; owner: string; seconds: number },
): Promise<number> {
  return db.prisma.$executeRaw`
    UPDATE jobs SET state = 'leased', attempts = 1, lease_token = gen_random_uuid(),
           lease_owner = ${owner}, leased_at = now(),
           lease_expires_at = now() + make_interval(secs => ${seconds}::float8)
    WHERE queue = ${queue} AND state = 'ready'`;
}

/** The jobs columns a seed may set; the rest keep their defaults. */
export const SEED_JOB_COLUMNS = [
  "queue",
  "key",
  "payload",
  "source_id",
  "run_at",
  "state",
  "attempts",
  "max_attempts",
  "dead_at",
  "first_failed_at",
  "last_failed_at",
  "last_error",
  "fingerprint",
] as const;
export type SeedJobColumn = (typeof SEED_JOB_COLUMNS)[number];

/**
 * Bulk jobs for a bench database (hundreds of thousands of rows in one statement): `select`
 * yields one row per job with the named `columns`, in that order (e.g. from generate_series).
 */
export async function seedJobsFrom(
  client: pg.Client,
  columns: readonly SeedJobColumn[],
  select: string,
  params: unknown[] = [],
): Promise<void> {
  for (const c of columns) {
    if (!SEED_JOB_COLUMNS.includes(c)) throw new Error(`seedJobsFrom: no such column ${c}`);
  }
  await client.query(`INSERT INTO jobs (${columns.join(", ")}) ${select}`, params);
}
