import type { Database } from "@/lib/db";

/** Rows folded or deleted per statement: each is one short transaction, whatever the backlog. */
const BATCH = 10_000;
/** Statements per run: 200,000 rows at most, so one run never holds a worker for long. */
const MAX_BATCHES = 20;

export interface HistoryTrimmed {
  /** fetch_attempts rows folded into fetch_attempts_daily (and deleted). */
  attemptsFolded: number;
  pageLooks: number;
}

/**
 * Keeps fetch history bounded: fetch_attempts rows older than `days` are folded into
 * fetch_attempts_daily (attempts, bytes and time per source, UTC day and code) and deleted, and
 * page_looks older than that are deleted; oldest first, in batches.
 *
 * Each batch is one statement: the DELETE … RETURNING feeds the INSERT … ON CONFLICT that adds
 * its counts, so a row is counted exactly when it is deleted. Two worker processes running it at
 * once cannot count a row twice: the second's DELETE waits on the first's row locks and skips
 * the rows the first deleted.
 */
export async function trimFetchHistory(db: Database, days: number): Promise<HistoryTrimmed> {
  let attemptsFolded = 0;
  for (let i = 0; i < MAX_BATCHES; i++) {
    const [row] = await db.prisma.$queryRaw<{ n: number }[]>`
      WITH old AS (
        DELETE FROM fetch_attempts
        WHERE id IN (
          SELECT id FROM fetch_attempts
          WHERE started_at < now() - make_interval(days => ${days})
          ORDER BY started_at
          LIMIT ${BATCH}
        )
        RETURNING source_id, started_at, code, bytes, duration_ms
      ),
      folded AS (
        INSERT INTO fetch_attempts_daily AS d
          (source_id, day, code, attempts, bytes, duration_ms_sum, duration_ms_max)
        SELECT source_id, (started_at AT TIME ZONE 'UTC')::date, code, count(*)::int,
               sum(bytes)::bigint, sum(duration_ms)::bigint, max(duration_ms)
        FROM old
        GROUP BY 1, 2, 3
        ON CONFLICT (source_id, day, code) DO UPDATE SET
          attempts = d.attempts + excluded.attempts,
          bytes = d.bytes + excluded.bytes,
          duration_ms_sum = d.duration_ms_sum + excluded.duration_ms_sum,
          duration_ms_max = greatest(d.duration_ms_max, excluded.duration_ms_max)
      )
      SELECT count(*)::int AS n FROM old`;
    const n = row?.n ?? 0;
    attemptsFolded += n;
    if (n < BATCH) break;
  }
  let pageLooks = 0;
  for (let i = 0; i < MAX_BATCHES; i++) {
    const n = await db.prisma.$executeRaw`
      DELETE FROM page_looks
      WHERE id IN (
        SELECT id FROM page_looks
        WHERE at < now() - make_interval(days => ${days})
        ORDER BY at
        LIMIT ${BATCH}
      )`;
    pageLooks += n;
    if (n < BATCH) break;
  }
  return { attemptsFolded, pageLooks };
}
