import type { Database } from "@/lib/db";
import { Prisma } from "@/lib/generated/prisma/client";
import { auditInsertSql } from "@/workers/admin/audit";
import { AUDIT_ACTIONS, checkActor } from "./audit";
import { deadLetterWhere } from "./filter";
import { resolveSelection, type Selection } from "./selection";

export interface DiscardOptions extends Selection {
  actor: string;
  dryRun?: boolean;
}

export interface DiscardResult {
  dryRun: boolean;
  matched: number;
  /** Archived (or, in a dry run, that would be). */
  discarded: number;
  ids: string[];
  cap: number;
  capped: number;
  moreMatched: boolean;
  /** Chosen but requeued or discarded by someone else while this call ran. */
  changedMeanwhile: number;
  auditId: string;
}

/**
 * Discards dead letters (one, by ids, or by filter): they become state 'archived' with
 * archived_at, like those past their TTL. Nothing is deleted: the row keeps its payload, error
 * and history, leaves every dead-letter view and count, and no longer blocks anything (archived
 * keys are not live). Oldest first, at most `cap` per call; one statement with its audit row.
 */
export async function discardDeadLetters(
  db: Database,
  options: DiscardOptions,
): Promise<DiscardResult> {
  const actor = checkActor(options.actor);
  const { filter, cap, target } = resolveSelection("discard", options);
  const dryRun = options.dryRun ?? false;
  const audit = auditInsertSql({
    actor,
    action: AUDIT_ACTIONS.discard,
    target: { ...target, cap },
    dryRun,
    affected: dryRun
      ? Prisma.sql`SELECT count(*) FROM chosen`
      : Prisma.sql`SELECT count(*) FROM discarded`,
    detail: Prisma.sql`jsonb_build_object(
      'matched', (SELECT count(*) FROM matched),
      'cap', ${cap}::int,
      'capped', (SELECT count(*) FROM matched) - (SELECT count(*) FROM chosen),
      'changedMeanwhile', CASE WHEN ${dryRun}::boolean THEN 0
                               ELSE (SELECT count(*) FROM chosen) - (SELECT count(*) FROM discarded) END)`,
  });
  const rows = await db.prisma.$queryRaw<
    {
      matched: number;
      chosen: number;
      discarded: number;
      ids: string[] | null;
      audit_id: string;
    }[]
  >`
    WITH matched AS (
      SELECT j.id, j.dead_at FROM jobs j WHERE ${deadLetterWhere(filter)}
    ), chosen AS (
      SELECT id FROM matched ORDER BY dead_at, id LIMIT ${cap}::int
    ), discarded AS (
      UPDATE jobs t SET state = 'archived', archived_at = now()
      FROM chosen c
      WHERE t.id = c.id AND t.state = 'dead' AND NOT ${dryRun}::boolean
      RETURNING t.id
    ), audit AS (${audit})
    SELECT (SELECT count(*) FROM matched)::int AS matched,
           (SELECT count(*) FROM chosen)::int AS chosen,
           (SELECT count(*) FROM discarded)::int AS discarded,
           CASE WHEN ${dryRun}::boolean THEN (SELECT array_agg(id::text ORDER BY id) FROM chosen)
                ELSE (SELECT array_agg(id::text ORDER BY id) FROM discarded) END AS ids,
           (SELECT id::text FROM audit) AS audit_id`;
  const row = rows[0];
  if (!row) throw new Error("discard: no answer from the database");
  const capped = row.matched - row.chosen;
  return {
    dryRun,
    matched: row.matched,
    discarded: dryRun ? row.chosen : row.discarded,
    ids: row.ids ?? [],
    cap,
    capped,
    moreMatched: capped > 0,
    changedMeanwhile: dryRun ? 0 : row.chosen - row.discarded,
    auditId: row.audit_id,
  };
}

/** Discards one dead letter by id (see discardDeadLetters). */
export function discardDeadLetter(
  db: Database,
  id: string,
  options: Omit<DiscardOptions, "filter" | "all" | "cap">,
): Promise<DiscardResult> {
  return discardDeadLetters(db, { ...options, filter: { ids: [id] } });
}
