import type { Database } from "@/lib/db";
import { fingerprint } from "./jobError";
import { defaultJobRetryPolicy, type JobRetryPolicy, retryDelaySeconds } from "./retryPolicy";
import type { ClaimedJob, JobError } from "./types";

export type FailOutcome = "retrying" | "dead" | "not_held";

export interface FailOptions {
  retry?: JobRetryPolicy;
  /** Park as a dead letter now, whatever attempts are left (an error retrying cannot fix). */
  park?: boolean;
}

/**
 * Records a failed attempt, in one fenced statement: the job is due again after a growing delay
 * (retryDelaySeconds: base · 2^(attempt-1), capped), or, when its attempts
 * are used up or `park` is set, parked as a dead letter with the full error and its fingerprint.
 * The attempt is also appended to job_failures (the job's history). 'not_held' when the caller's
 * lease was taken over: nothing changed.
 */
export async function fail(
  db: Database,
  workerId: string,
  job: Pick<ClaimedJob, "lease" | "queue">,
  error: JobError,
  options: FailOptions = {},
): Promise<FailOutcome> {
  const { lease } = job;
  const delaySeconds = retryDelaySeconds(options.retry ?? defaultJobRetryPolicy, lease.attempt);
  const rows = await db.prisma.$queryRaw<{ state: "ready" | "dead" }[]>`
    WITH failed AS (
      UPDATE jobs j
      SET state = CASE WHEN ${options.park ?? false} OR j.attempts >= j.max_attempts
                       THEN 'dead' ELSE 'ready' END,
          run_at = CASE WHEN ${options.park ?? false} OR j.attempts >= j.max_attempts THEN j.run_at
                   ELSE now() + make_interval(secs => ${delaySeconds}::float8) END,
          dead_at = CASE WHEN ${options.park ?? false} OR j.attempts >= j.max_attempts
                         THEN now() END,
          lease_token = NULL, lease_owner = NULL, leased_at = NULL, lease_expires_at = NULL,
          first_failed_at = coalesce(j.first_failed_at, now()), last_failed_at = now(),
          last_error = ${JSON.stringify(error)}::jsonb,
          fingerprint = ${fingerprint(job.queue, error)}
      WHERE j.id = ${lease.id}::bigint AND j.attempts = ${lease.attempt}
        AND j.lease_token = ${lease.token}::uuid AND j.state = 'leased'
      RETURNING j.id, j.queue, j.attempts, j.state, j.fingerprint
    ), history AS (
      INSERT INTO job_failures (job_id, queue, attempt, worker_id, kind, error, fingerprint)
      SELECT id, queue, attempts, ${workerId}, 'error', ${JSON.stringify(error)}::jsonb, fingerprint
      FROM failed
    )
    SELECT state FROM failed`;
  const state = rows[0]?.state;
  return state === "dead" ? "dead" : state === "ready" ? "retrying" : "not_held";
}
