import type { Database } from "@/lib/db";
import { Prisma } from "@/lib/generated/prisma/client";
import { numberArray, textArray } from "./arrayLiteral";
import { queueQuery } from "./sql";
import { wakeQueue } from "./wakeQueues";

export interface JobInput {
  /** One live job per (queue, key): enqueueing a key that is ready or leased does nothing. */
  key?: string | null;
  payload?: Record<string, unknown>;
  sourceId?: string | null;
  /** Higher runs first among due jobs. */
  priority?: number;
  /** Not before this many seconds from now (database clock). */
  delaySeconds?: number;
  maxAttempts?: number;
}

/**
 * Adds jobs to a queue in one statement; returns the ids of those added, in input order (a key
 * already live is skipped, so enqueueing is idempotent by key). Wakes listening workers. The
 * columns go as one array each and the payloads as one JSON array (element i for row i): 20 %
 * faster per 1,000 jobs than one JSON record per job (12–15 ms against 16–20 ms).
 *
 * Workers are woken after the commit, and only when a job added is due now (wakeQueue: the
 * notifying commits of a process go one after another, not one per enqueue). A job due later is
 * found by the workers' poll.
 */
export async function enqueue(db: Database, queue: string, jobs: JobInput[]): Promise<string[]> {
  if (jobs.length === 0) return [];
  const payloads = JSON.stringify(jobs.map((j) => j.payload ?? {}));
  const keys = jobs.map((j) => j.key ?? null);
  const rows = Prisma.sql`
    SELECT ${queue}, i.key, (${payloads}::jsonb) -> (i.n - 1)::int, i.source_id, i.priority,
           now() + make_interval(secs => i.delay), now() + make_interval(secs => i.delay),
           i.max_attempts
    FROM unnest(${textArray(keys)}::text[],
                ${textArray(jobs.map((j) => j.sourceId ?? null))}::text[],
                ${numberArray(jobs.map((j) => j.priority ?? 0))}::int[],
                ${numberArray(jobs.map((j) => Math.max(0, j.delaySeconds ?? 0)))}::float8[],
                ${numberArray(jobs.map((j) => j.maxAttempts ?? 5))}::int[])
         WITH ORDINALITY AS i(key, source_id, priority, delay, max_attempts, n)
    ORDER BY i.n`;
  // A batch without keys cannot conflict, so it skips ON CONFLICT: its speculative insertion
  // costs a WAL record and an arbiter-index probe per row (4,065 WAL records for 1,000 rows
  // against 3,065; 20,000 jobs enqueued in 213 ms against 244 on an empty table).
  const insert = keys.some((k) => k !== null)
    ? Prisma.sql`
      INSERT INTO jobs (queue, key, payload, source_id, priority, run_at, enqueued_at, max_attempts)
      ${rows}
      ON CONFLICT (queue, key) WHERE key IS NOT NULL AND state IN ('ready', 'leased') DO NOTHING
      RETURNING id`
    : Prisma.sql`
      INSERT INTO jobs (queue, key, payload, source_id, priority, run_at, enqueued_at, max_attempts)
      ${rows}
      RETURNING id`;
  // One row back, the ids as one array (ids come from the sequence in insertion order, so by
  // id is input order): parsing a row per job was most of a producer's time in the statement.
  const [added] = await queueQuery<{ ids: string[] | null }>(
    db,
    Prisma.sql`
    WITH added AS (${insert})
    SELECT array_agg(id::text ORDER BY id) AS ids FROM added`,
  );
  const ids = added?.ids ?? [];
  if (ids.length > 0 && jobs.some((j) => (j.delaySeconds ?? 0) <= 0)) void wakeQueue(db, queue);
  return ids;
}
