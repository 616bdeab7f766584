import type { Database } from "@/lib/db";
import { Prisma } from "@/lib/generated/prisma/client";
import { auditInsertSql } from "@/workers/admin/audit";
import { JOBS_CHANNEL } from "../wakeQueues";
import { AUDIT_ACTIONS, checkActor } from "./audit";
import { deadLetterWhere } from "./filter";
import { resolveSelection, type Selection, SelectionError } from "./selection";

/** Requeued jobs become due this many per second by default, so a bulk requeue trickles in. */
export const DEFAULT_RATE_PER_SECOND = 10;

/** At most this many superseded ids are answered and audited one by one (the count is exact). */
const SUPERSEDED_LISTED = 100;

/** Why a matching dead letter was not requeued. */
export const REFUSALS = {
  /** Its source's circuit breaker is open: it would fail again at once (use force). */
  breakerOpen: "breaker open",
  /** Another dead letter with the same queue and key, newer, is requeued in this call. (One
   *  whose key a live job already holds is not refused: it is superseded, see below.) */
  alreadyQueued: "already queued",
  /** Chosen, but requeued or discarded by someone else while this call ran. */
  changedMeanwhile: "no longer dead",
} as const;

export interface RequeueOptions extends Selection {
  /** Who acts (audited). */
  actor: string;
  /** Count what would happen, change nothing (the dry run is audited too). */
  dryRun?: boolean;
  /** Requeue even when the source's breaker is open. */
  force?: boolean;
  /** Requeued jobs are spread out: the n-th becomes due (n-1)/ratePerSecond s from now. */
  ratePerSecond?: number;
}

export interface RequeueResult {
  dryRun: boolean;
  /** Dead letters matching the filter. */
  matched: number;
  /** Requeued (or, in a dry run, that would be). */
  requeued: number;
  /** Their ids, in the order they become due. */
  ids: string[];
  /** Not requeued, by reason (see REFUSALS). */
  refused: Record<string, number>;
  /** Resolved instead of requeued: a live job holds its key (archived, or in a dry run would be). */
  superseded: number;
  /** Dead letter id → the live job holding its key (the first 100). */
  supersededBy: Record<string, string>;
  cap: number;
  /** Eligible but beyond the cap: left as dead letters for another call. */
  capped: number;
  moreMatched: boolean;
  ratePerSecond: number;
  /** Seconds from now until the last requeued job is due. */
  spreadSeconds: number;
  /** The admin_audit row written for this call. */
  auditId: string;
}

interface Row {
  matched: number;
  chosen: number;
  requeued: number;
  ids: string[] | null;
  refused: Record<string, number>;
  capped: number;
  superseded: number;
  superseded_by: Record<string, string> | null;
  audit_id: string;
  woke: number;
}

/**
 * Puts dead letters back on their queue (one, a selection by ids, or all matching a filter) in
 * one statement that also writes its admin_audit row. Each keeps its id and history (job_failures
 * stay, requeues + 1) and starts over: state 'ready', attempts 0. Its last error and fingerprint
 * are kept (what it last died of; a new failure overwrites them, a success deletes the job).
 * A dead letter whose key a live (ready or leased) job holds is superseded by it: that job is
 * the same work, wanted again (the frontier makes a source's recurring fetch job anew with the
 * same key when one dies), so requeueing can never succeed and refusing would leave it dead for
 * ever. It is archived as "superseded by job N" (docs/decisions/016), in the audit row, whatever
 * the breaker. Refused: a source whose breaker is open (unless `force`), a newer dead letter of
 * the same key requeued in this call ("already queued"). At most `cap` per call, spread out at `ratePerSecond`. Concurrent calls on the same
 * dead letter make one job: the UPDATE only takes rows still 'dead', and a racing second call
 * waits on the row lock, re-checks and finds it 'ready'. Wakes the queues' workers.
 */
export async function requeueDeadLetters(
  db: Database,
  options: RequeueOptions,
): Promise<RequeueResult> {
  const actor = checkActor(options.actor);
  const { filter, cap, target } = resolveSelection("requeue", options);
  const rate = options.ratePerSecond ?? DEFAULT_RATE_PER_SECOND;
  if (!Number.isFinite(rate) || rate <= 0 || rate > 100_000) {
    throw new SelectionError("requeue: ratePerSecond must be a number above 0 (at most 100000)");
  }
  const dryRun = options.dryRun ?? false;
  const force = options.force ?? false;
  const audited = { ...target, cap, ratePerSecond: rate, force };
  // A live job with the same key can appear between this statement's snapshot and its UPDATE
  // (an enqueue, or a concurrent requeue of another dead letter with that key): the unique index
  // then refuses the UPDATE. Running the statement again sees that job and supersedes by it.
  for (let attempt = 1; ; attempt++) {
    try {
      return await requeueOnce(db, actor, filter, cap, rate, dryRun, force, audited);
    } catch (err) {
      if (attempt >= 3 || !isLiveKeyConflict(err)) throw err;
    }
  }
}

/** Requeues one dead letter by id (see requeueDeadLetters). */
export function requeueDeadLetter(
  db: Database,
  id: string,
  options: Omit<RequeueOptions, "filter" | "all" | "cap">,
): Promise<RequeueResult> {
  return requeueDeadLetters(db, { ...options, filter: { ids: [id] } });
}

async function requeueOnce(
  db: Database,
  actor: string,
  filter: Parameters<typeof deadLetterWhere>[0],
  cap: number,
  rate: number,
  dryRun: boolean,
  force: boolean,
  target: Record<string, unknown>,
): Promise<RequeueResult> {
  const audit = auditInsertSql({
    actor,
    action: AUDIT_ACTIONS.requeue,
    target,
    dryRun,
    affected: dryRun
      ? Prisma.sql`(SELECT count(*) FROM chosen) + (SELECT count(*) FROM supersedable)`
      : Prisma.sql`(SELECT count(*) FROM requeued) + (SELECT count(*) FROM superseded)`,
    detail: Prisma.sql`jsonb_build_object(
      'matched', (SELECT count(*) FROM matched),
      'refused', (SELECT refused FROM refusals),
      'superseded', (SELECT coalesce(jsonb_agg(jsonb_build_object(
                       'id', id::text, 'by', live_id::text,
                       'reason', 'superseded by job ' || live_id::text) ORDER BY id), '[]'::jsonb)
                     FROM (SELECT id, live_id FROM supersedable ORDER BY id
                           LIMIT ${SUPERSEDED_LISTED}) l),
      'cap', ${cap}::int,
      'capped', (SELECT count(*) FROM eligible) - (SELECT count(*) FROM chosen),
      'ratePerSecond', ${rate}::float8)`,
  });
  const rows = await db.prisma.$queryRaw<Row[]>`
    WITH matched AS (
      SELECT j.id, j.queue, j.key, j.dead_at,
             coalesce(s.breaker_state = 'open', false) AS breaker_open,
             CASE WHEN j.key IS NOT NULL THEN (
               SELECT l.id FROM jobs l
               WHERE l.queue = j.queue AND l.key = j.key AND l.state IN ('ready', 'leased')
               LIMIT 1
             ) END AS live_id,
             row_number() OVER (PARTITION BY j.queue, j.key ORDER BY j.id DESC) AS key_rank
      FROM jobs j
      LEFT JOIN source_state s ON s.source_id = j.source_id
      WHERE ${deadLetterWhere(filter)}
    ), supersedable AS (
      SELECT id, live_id FROM matched WHERE live_id IS NOT NULL
    ), superseded AS (
      UPDATE jobs t SET state = 'archived', archived_at = now()
      FROM supersedable s
      WHERE t.id = s.id AND t.state = 'dead' AND NOT ${dryRun}::boolean
      RETURNING t.id, s.live_id
    ), classified AS (
      SELECT id, dead_at,
             CASE WHEN breaker_open AND NOT ${force}::boolean THEN ${REFUSALS.breakerOpen}::text
                  WHEN key IS NOT NULL AND key_rank > 1 THEN ${REFUSALS.alreadyQueued}::text
             END AS refusal
      FROM matched WHERE live_id IS NULL
    ), eligible AS (
      SELECT id, row_number() OVER (ORDER BY dead_at, id) AS pos
      FROM classified WHERE refusal IS NULL
    ), chosen AS (
      SELECT id, pos FROM eligible WHERE pos <= ${cap}::int
    ), requeued AS (
      UPDATE jobs t
      SET state = 'ready', attempts = 0, dead_at = NULL, lease_expired = false,
          requeues = t.requeues + 1,
          run_at = now() + make_interval(secs => (c.pos - 1) / ${rate}::float8),
          enqueued_at = now() + make_interval(secs => (c.pos - 1) / ${rate}::float8)
      FROM chosen c
      WHERE t.id = c.id AND t.state = 'dead' AND NOT ${dryRun}::boolean
      RETURNING t.id, t.queue, c.pos
    ), refusals AS (
      SELECT coalesce(jsonb_object_agg(refusal, n), '{}'::jsonb)
             || CASE WHEN ${dryRun}::boolean OR (SELECT count(*) FROM chosen) = (SELECT count(*) FROM requeued)
                     THEN '{}'::jsonb
                     ELSE jsonb_build_object(${REFUSALS.changedMeanwhile}::text,
                            (SELECT count(*) FROM chosen) - (SELECT count(*) FROM requeued)) END
             AS refused
      FROM (SELECT refusal, count(*) AS n FROM classified WHERE refusal IS NOT NULL
            GROUP BY refusal) r
    ), audit AS (${audit})
    SELECT (SELECT count(*) FROM matched)::int AS matched,
           (SELECT count(*) FROM chosen)::int AS chosen,
           (SELECT count(*) FROM requeued)::int AS requeued,
           CASE WHEN ${dryRun}::boolean THEN (SELECT array_agg(id::text ORDER BY pos) FROM chosen)
                ELSE (SELECT array_agg(id::text ORDER BY pos) FROM requeued) END AS ids,
           (SELECT refused FROM refusals) AS refused,
           ((SELECT count(*) FROM eligible) - (SELECT count(*) FROM chosen))::int AS capped,
           (CASE WHEN ${dryRun}::boolean THEN (SELECT count(*) FROM supersedable)
                 ELSE (SELECT count(*) FROM superseded) END)::int AS superseded,
           (SELECT jsonb_object_agg(id::text, live_id::text)
            FROM (SELECT id, live_id FROM supersedable ORDER BY id
                  LIMIT ${SUPERSEDED_LISTED}) l) AS superseded_by,
           (SELECT id::text FROM audit) AS audit_id,
           (SELECT count(*) FROM (SELECT pg_notify(${JOBS_CHANNEL}, queue)
                                  FROM (SELECT DISTINCT queue FROM requeued) q) n)::int AS woke`;
  const row = rows[0];
  if (!row) throw new Error("requeue: no answer from the database");
  const requeued = dryRun ? row.chosen : row.requeued;
  return {
    dryRun,
    matched: row.matched,
    requeued,
    ids: row.ids ?? [],
    refused: row.refused,
    superseded: row.superseded,
    supersededBy: row.superseded_by ?? {},
    cap,
    capped: row.capped,
    moreMatched: row.capped > 0,
    ratePerSecond: rate,
    spreadSeconds: requeued > 0 ? (requeued - 1) / rate : 0,
    auditId: row.audit_id,
  };
}

/** The unique index on live keys refused the UPDATE (see the retry above). */
function isLiveKeyConflict(err: unknown): boolean {
  const seen = new Set<unknown>();
  const text = (e: unknown): string => {
    if (e === null || typeof e !== "object" || seen.has(e)) return String(e ?? "");
    seen.add(e);
    const o = e as { message?: unknown; meta?: unknown; cause?: unknown; code?: unknown };
    return [String(o.message ?? ""), String(o.code ?? ""), safeJson(o.meta), text(o.cause)].join(
      " ",
    );
  };
  const all = text(err);
  return /jobs_live_key_idx|23505|UniqueConstraintViolation/.test(all);
}

function safeJson(v: unknown): string {
  try {
    return JSON.stringify(v) ?? "";
  } catch {
    return "";
  }
}
