import { CLAIM_WAIT_BUCKETS_MS } from "@/lib/claimWaits";
import type { Database } from "@/lib/db";
import { Prisma } from "@/lib/generated/prisma/client";
import { notPausedSql } from "./paused";
import { queueQuery } from "./sql";
import type { ClaimedJob } from "./types";

interface Row {
  id: string;
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
 * other's jobs and never take the same job. Each claim counts an attempt and draws a fresh lease
 * token, in one statement that also adds the claims to queue_claim_stats (one row per queue and
 * minute: count, reclaims, wait sum/max/histogram) and writes a lease_events row only for a
 * reclaimed job, the rare and informative case (docs/decisions/017: a row per claim was 6.5–7.8
 * ms of a 26–29 ms claim of 1,000 and most of its WAL).
 *
 * The UPDATE finds its rows by ctid (a Tid Scan, one heap fetch per job). Joined by id, the
 * planner priced 1,000 primary-key probes above a seq scan of a 20,000-row table and chose a hash
 * join over all of it (14.5 ms against 8.4 ms by ctid, EXPLAIN ANALYZE on PostgreSQL 15; the
 * claim.plan test checks the plan). The ctids are stable: the rows are locked by this statement
 * from the SELECT to the end, so nothing else can move them.
 *
 * One lease token per claim statement, not per job (the sub-SELECT runs once): fencing is by
 * id, attempt and token together, so a token shared by the jobs of one claim fences each as well,
 * while a token drawn per row was 1.1 ms of an 8.5 ms claim of 1,000.
 *
 * A paused queue (./paused.ts) claims nothing: one probe of the live-key index per statement.
 *
 * The stats row is shared by every claimer of the queue in that minute; its lock is held from the
 * upsert to the commit, after the jobs are taken, so concurrent claims serialise only on that
 * last step.
 */
export async function claim(
  db: Database,
  queue: string,
  workerId: string,
  limit: number,
  leaseSeconds: number,
): Promise<ClaimedJob[]> {
  if (limit <= 0) return [];
  const rows = await queueQuery<Row>(db, claimStatement(queue, workerId, limit, leaseSeconds));
  const jobs = new Array<ClaimedJob>(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i] as Row;
    jobs[i] = {
      lease: { id: r.id, attempt: r.attempts, token: r.lease_token },
      queue,
      key: r.key,
      payload: r.payload,
      sourceId: r.source_id,
      priority: r.priority,
      maxAttempts: r.max_attempts,
      waitMs: r.wait_ms,
      reclaimed: r.reclaimed,
    };
  }
  return jobs;
}

/** The claim statement itself, for claim() and for the test that EXPLAINs its plan. */
export function claimStatement(
  queue: string,
  workerId: string,
  limit: number,
  leaseSeconds: number,
): Prisma.Sql {
  return Prisma.sql`
    WITH picked AS MATERIALIZED (
      SELECT id, ctid, lease_expired AS was_expired FROM jobs
      WHERE queue = ${queue} AND state = 'ready' AND run_at <= now() AND ${notPausedSql(queue)}
      ORDER BY priority DESC, run_at
      LIMIT ${limit}
      FOR UPDATE SKIP LOCKED
    ), claimed AS (
      UPDATE jobs j
      SET state = 'leased', attempts = j.attempts + 1, lease_token = (SELECT gen_random_uuid()),
          lease_owner = ${workerId}, leased_at = now(),
          lease_expires_at = now() + make_interval(secs => ${leaseSeconds}::float8),
          lease_expired = false
      WHERE j.ctid = ANY (ARRAY(SELECT ctid FROM picked))
      RETURNING j.id, j.queue, j.key, j.payload, j.source_id, j.priority, j.run_at, j.attempts,
                j.max_attempts, j.lease_token,
                greatest(0, floor(extract(epoch FROM now() - j.run_at) * 1000))::int AS wait_ms
    ), out AS (
      SELECT c.*, p.was_expired FROM claimed c JOIN picked p USING (id)
    ), reclaims AS (
      INSERT INTO lease_events (job_id, queue, attempt, worker_id, kind, wait_ms)
      SELECT id, queue, attempts, ${workerId}, 'reclaimed', wait_ms FROM out WHERE was_expired
    ), buckets AS (
      -- Bucket i holds waits <= edge i and above edge i-1; width_bucket counts the edges <= its
      -- operand, so (wait - 1) counts those below an integer wait.
      SELECT width_bucket(wait_ms - 1, ${CLAIM_WAIT_BUCKETS_MS as number[]}::int[]) AS b,
             count(*) AS n
      FROM out GROUP BY 1
    ), stats AS (
      INSERT INTO queue_claim_stats AS s
        (queue, minute, claims, reclaimed, wait_ms_sum, wait_ms_max, wait_buckets)
      SELECT ${queue}, date_trunc('minute', now()), count(*), count(*) FILTER (WHERE was_expired),
             coalesce(sum(wait_ms), 0), coalesce(max(wait_ms), 0),
             ARRAY(SELECT coalesce(b.n, 0) FROM generate_series(0, ${CLAIM_WAIT_BUCKETS_MS.length}) g
                   LEFT JOIN buckets b ON b.b = g ORDER BY g)
      FROM out HAVING count(*) > 0
      ON CONFLICT (queue, minute) DO UPDATE
      SET claims = s.claims + excluded.claims, reclaimed = s.reclaimed + excluded.reclaimed,
          wait_ms_sum = s.wait_ms_sum + excluded.wait_ms_sum,
          wait_ms_max = greatest(s.wait_ms_max, excluded.wait_ms_max),
          wait_buckets = ARRAY(SELECT coalesce(a, 0) + coalesce(e, 0)
                               FROM unnest(s.wait_buckets, excluded.wait_buckets)
                                    WITH ORDINALITY AS u(a, e, i) ORDER BY i)
    )
    SELECT id::text AS id, key, payload, source_id, priority, attempts, max_attempts,
           lease_token::text AS lease_token, wait_ms, was_expired AS reclaimed
    FROM out ORDER BY priority DESC, run_at, out.id`;
}
