import type { Database } from "@/lib/db";
import { Prisma } from "@/lib/generated/prisma/client";
import { queueQuery } from "./sql";

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

/** The channel enqueue notifies, so idle workers wake at once instead of at their next poll. */
export const JOBS_CHANNEL = "wirewatch_jobs";

/**
 * Adds jobs to a queue in one statement; returns the ids of those added (a key already live is
 * skipped, so enqueueing is idempotent by key). Wakes listening workers.
 */
export async function enqueue(db: Database, queue: string, jobs: JobInput[]): Promise<string[]> {
  if (jobs.length === 0) return [];
  const rows = jobs.map((j) => ({
    key: j.key ?? null,
    payload: j.payload ?? {},
    source_id: j.sourceId ?? null,
    priority: j.priority ?? 0,
    delay: Math.max(0, j.delaySeconds ?? 0),
    max_attempts: j.maxAttempts ?? 5,
  }));
  const added = await queueQuery<{ id: string }>(
    db,
    Prisma.sql`
    WITH input AS (
      SELECT * FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
        AS i(key text, payload jsonb, source_id text, priority int, delay float8, max_attempts int)
    ), added AS (
      INSERT INTO jobs (queue, key, payload, source_id, priority, run_at, enqueued_at, max_attempts)
      SELECT ${queue}, key, payload, source_id, priority,
             now() + make_interval(secs => delay), now() + make_interval(secs => delay), max_attempts
      FROM input
      ON CONFLICT (queue, key) WHERE key IS NOT NULL AND state IN ('ready', 'leased') DO NOTHING
      RETURNING id
    )
    SELECT id::text AS id,
           (SELECT count(*) FROM (SELECT pg_notify(${JOBS_CHANNEL}, ${queue}) FROM added LIMIT 1) n)::int AS woke
    FROM added`,
  );
  return added.map((r) => r.id);
}
