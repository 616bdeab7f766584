import type { Database } from "@/lib/db";
import { defaultJobRetryPolicy, expiryDelaySeconds, type JobRetryPolicy } from "./retryPolicy";

/** The masked message of an expired lease, for its fingerprint. */
export const LEASE_EXPIRED_MESSAGE = "lease ran out";

export interface SweepResult {
  /** Jobs whose lease ran out and that are due again. */
  returned: number;
  /** Jobs whose lease ran out on their last attempt: parked as dead letters. */
  parked: number;
  /** How long each swept lease had been held (leased_at to now, ms). */
  leaseAgesMs: number[];
}

/**
 * Expiry delays by attempt, computed here (lib/backoff) and indexed in SQL by the row's attempt:
 * 32 steps of a doubling schedule pass any cap; later attempts take the cap.
 */
const DELAY_STEPS = 32;

/**
 * Returns jobs whose lease ran out (by the database clock) to their queue: the first expiry is
 * due at once, later ones after a growing delay (expiryDelaySeconds), so a job
 * that kills its worker every time degrades into patient retries and, after its last attempt,
 * a dead letter. Each expiry is recorded as an 'expired' lease event (with the lease's age) and a
 * 'lease_expired' failure in the job's history. Safe to run from every worker at once: SKIP
 * LOCKED, and a heartbeat or completion that lands first wins (the row no longer matches).
 */
export async function sweep(
  db: Database,
  retry: JobRetryPolicy = defaultJobRetryPolicy,
  limit = 1000,
  /** Only this queue's jobs (each queue is swept with its own retry policy); all when null. */
  queue: string | null = null,
): Promise<SweepResult> {
  const delays = Array.from({ length: DELAY_STEPS }, (_, i) => expiryDelaySeconds(retry, i + 1));
  const rows = await db.prisma.$queryRaw<{ state: string; n: number; ages: number[] }[]>`
    WITH expired AS (
      SELECT id, lease_owner, leased_at FROM jobs
      WHERE state = 'leased' AND lease_expires_at < now()
        AND (${queue}::text IS NULL OR queue = ${queue}::text)
      ORDER BY lease_expires_at
      LIMIT ${limit}
      FOR UPDATE SKIP LOCKED
    ), swept AS (
      UPDATE jobs j
      SET state = CASE WHEN j.attempts >= j.max_attempts THEN 'dead' ELSE 'ready' END,
          dead_at = CASE WHEN j.attempts >= j.max_attempts THEN now() END,
          run_at = now() + make_interval(secs =>
            coalesce((${delays}::float8[])[j.attempts], ${retry.maxDelaySeconds}::float8)),
          lease_expired = true,
          lease_token = NULL, lease_owner = NULL, leased_at = NULL, lease_expires_at = NULL,
          first_failed_at = coalesce(j.first_failed_at, now()), last_failed_at = now(),
          last_error = jsonb_build_object(
            'code', 'lease_expired',
            'message', 'lease held by ' || coalesce(expired.lease_owner, '?') || ' ran out after '
                       || round(extract(epoch FROM now() - expired.leased_at)) || ' s'),
          -- fingerprint(queue, {code: 'lease_expired', message: 'lease ran out'}) of jobError.ts
          fingerprint = left(encode(sha256(convert_to(
            concat_ws('|', j.queue, 'lease_expired', '', ${LEASE_EXPIRED_MESSAGE}::text), 'UTF8')), 'hex'), 16)
      FROM expired
      WHERE j.id = expired.id
      RETURNING j.id, j.queue, j.attempts, j.state, j.last_error, j.fingerprint,
                expired.lease_owner,
                floor(extract(epoch FROM now() - expired.leased_at) * 1000)::int AS lease_age_ms
    ), recorded AS (
      INSERT INTO lease_events (job_id, queue, attempt, worker_id, kind, lease_age_ms)
      SELECT id, queue, attempts, lease_owner, 'expired', lease_age_ms FROM swept
    ), history AS (
      INSERT INTO job_failures (job_id, queue, attempt, worker_id, kind, error, fingerprint)
      SELECT id, queue, attempts, lease_owner, 'lease_expired', last_error, fingerprint FROM swept
    )
    SELECT state, count(*)::int AS n, array_agg(lease_age_ms) AS ages FROM swept GROUP BY state`;
  const count = (state: string) => rows.find((r) => r.state === state)?.n ?? 0;
  return {
    returned: count("ready"),
    parked: count("dead"),
    leaseAgesMs: rows.flatMap((r) => r.ages),
  };
}
