import type { Database } from "@/lib/db";
import type { ClaimedJob } from "./types";

interface Row {
  id: string;
  queue: string;
  key: string | null;
  payload: Record<string, unknown>;
  source_id: string | null;
  priority: number;
  attempts: number;
  max_attempts: number;
  lease_token: string;
  wait_ms: number;
  reclaimed: boolean;
}

/**
 * Claims up to `limit` due jobs of a queue on a lease of `leaseSeconds` (database clock), highest
 * priority first, then the longest due. FOR UPDATE SKIP LOCKED: racing workers never wait on each
 * other and never take the same job. Each claim counts an attempt, draws a fresh lease token and
 * is recorded in lease_events ('reclaimed' when the previous lease ran out), in the same statement.
 */
export async function claim(
  db: Database,
  queue: string,
  workerId: string,
  limit: number,
  leaseSeconds: number,
): Promise<ClaimedJob[]> {
  if (limit <= 0) return [];
  const rows = await db.prisma.$queryRaw<Row[]>`
    WITH picked AS (
      SELECT id, lease_expired AS was_expired FROM jobs
      WHERE queue = ${queue} AND state = 'ready' AND run_at <= now()
      ORDER BY priority DESC, run_at
      LIMIT ${limit}
      FOR UPDATE SKIP LOCKED
    ), claimed AS (
      UPDATE jobs j
      SET state = 'leased', attempts = j.attempts + 1, lease_token = gen_random_uuid(),
          lease_owner = ${workerId}, leased_at = now(),
          lease_expires_at = now() + make_interval(secs => ${leaseSeconds}::float8),
          lease_expired = false
      FROM picked
      WHERE j.id = picked.id
      RETURNING j.id, j.queue, j.key, j.payload, j.source_id, j.priority, j.attempts, j.max_attempts,
                j.lease_token, picked.was_expired,
                greatest(0, floor(extract(epoch FROM now() - j.run_at) * 1000))::int AS wait_ms
    ), recorded AS (
      INSERT INTO lease_events (job_id, queue, attempt, worker_id, kind, wait_ms)
      SELECT id, queue, attempts, ${workerId},
             CASE WHEN was_expired THEN 'reclaimed' ELSE 'claimed' END, wait_ms
      FROM claimed
    )
    SELECT id::text AS id, queue, key, payload, source_id, priority, attempts, max_attempts,
           lease_token::text AS lease_token, wait_ms, was_expired AS reclaimed
    FROM claimed`;
  return rows.map((r) => ({
    lease: { id: r.id, attempt: r.attempts, token: r.lease_token },
    queue: r.queue,
    key: r.key,
    payload: r.payload,
    sourceId: r.source_id,
    priority: r.priority,
    maxAttempts: r.max_attempts,
    waitMs: r.wait_ms,
    reclaimed: r.reclaimed,
  }));
}
