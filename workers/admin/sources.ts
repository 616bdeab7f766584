import { type ActionResult, PAUSED_REASON, SOURCE_AUDIT_ACTIONS } from "@/lib/dashboard/sources";
import type { Database } from "@/lib/db";
import { Prisma } from "@/lib/generated/prisma/client";
import { dropWaitingSql } from "@/workers/queue/dropWaiting";
import { makeDueSql } from "@/workers/queue/makeDue";
import { wakeSql } from "@/workers/queue/wake";
import { syncFrontier } from "@/workers/stages/frontier";
import { auditInsertSql } from "./audit";

/**
 * The Sources page's admin actions. Each is one statement with its admin_audit row (a CTE), so
 * the change and its record commit together, and the count recorded is the statement's own.
 */

const sourceAudit = (actor: string, action: string, sourceId: string, affected: Prisma.Sql) =>
  auditInsertSql({
    actor,
    action,
    target: { sourceId },
    dryRun: false,
    affected,
    detail: Prisma.sql`NULL::jsonb`,
  });

async function exists(db: Database, id: string): Promise<boolean> {
  return (await db.prisma.source.count({ where: { id } })) > 0;
}

/**
 * Makes the source's waiting poll (fetch job) or catch-up (story-api) due now and wakes its
 * consumers. A leased job is already running; the breaker still decides whether a fetch goes out.
 */
export async function fetchSourceNow(
  db: Database,
  id: string,
  actor: string,
): Promise<ActionResult | null> {
  if (!(await exists(db, id))) return null;
  const [row] = await db.prisma.$queryRaw<{ affected: number; audit_id: string }[]>`
    WITH due AS (${makeDueSql(
      Prisma.sql`source_id = ${id} AND (queue = 'fetch' OR (queue = 'story' AND key LIKE 'catchup:%'))`,
    )}),
    audit AS (${sourceAudit(actor, SOURCE_AUDIT_ACTIONS.fetchNow, id, Prisma.sql`SELECT count(*) FROM due`)})
    SELECT (SELECT count(*) FROM due)::int AS affected,
           (SELECT id FROM audit)::text AS audit_id,
           (${wakeSql("due")}) AS woke`;
  if (!row) throw new Error("fetch now: no answer");
  return {
    affected: row.affected,
    auditId: row.audit_id,
    message:
      row.affected > 0
        ? `${row.affected} job(s) due now (poll or catch-up)`
        : "no waiting poll or catch-up (running, paused, or a stream)",
  };
}

/**
 * Pauses a source: the reason is set (creating its state row if fetching never did) unless it is
 * already disabled, and its waiting fetch/stream jobs are deleted at once so the frontier stops
 * without waiting for the next sync.
 */
export async function pauseSource(
  db: Database,
  id: string,
  actor: string,
): Promise<ActionResult | null> {
  if (!(await exists(db, id))) return null;
  const [row] = await db.prisma.$queryRaw<
    { affected: number; dropped: number; audit_id: string; reason: string | null }[]
  >`
    WITH paused AS (
      INSERT INTO source_state (source_id, disabled_reason, disabled_at, updated_at)
      VALUES (${id}, ${PAUSED_REASON}, now(), now())
      ON CONFLICT (source_id) DO UPDATE
        SET disabled_reason = excluded.disabled_reason, disabled_at = now(), updated_at = now()
        WHERE source_state.disabled_reason IS NULL
      RETURNING source_id
    ),
    dropped AS (${dropWaitingSql(
      Prisma.sql`source_id = ${id}
                 AND (queue IN ('fetch', 'stream') OR (queue = 'story' AND key LIKE 'catchup:%'))`,
    )}),
    audit AS (${sourceAudit(actor, SOURCE_AUDIT_ACTIONS.pause, id, Prisma.sql`SELECT count(*) FROM paused`)})
    SELECT (SELECT count(*) FROM paused)::int AS affected,
           (SELECT count(*) FROM dropped)::int AS dropped,
           (SELECT id FROM audit)::text AS audit_id,
           (SELECT disabled_reason FROM source_state WHERE source_id = ${id}) AS reason`;
  if (!row) throw new Error("pause: no answer");
  return {
    affected: row.affected,
    auditId: row.audit_id,
    message:
      row.affected > 0
        ? `paused; ${row.dropped} waiting job(s) removed`
        : `already disabled (${row.reason ?? "unknown"})`,
  };
}

/**
 * Resumes a source paused by an admin (a source disabled by a 404/410 stays disabled), then
 * syncs the frontier so its jobs are back at once, due now.
 */
export async function resumeSource(
  db: Database,
  id: string,
  actor: string,
): Promise<ActionResult | null> {
  if (!(await exists(db, id))) return null;
  const [row] = await db.prisma.$queryRaw<{ affected: number; audit_id: string }[]>`
    WITH resumed AS (
      UPDATE source_state
      SET disabled_reason = NULL, disabled_at = NULL, updated_at = now()
      WHERE source_id = ${id} AND disabled_reason = ${PAUSED_REASON}
      RETURNING source_id
    ),
    audit AS (${sourceAudit(actor, SOURCE_AUDIT_ACTIONS.resume, id, Prisma.sql`SELECT count(*) FROM resumed`)})
    SELECT (SELECT count(*) FROM resumed)::int AS affected, (SELECT id FROM audit)::text AS audit_id`;
  if (!row) throw new Error("resume: no answer");
  if (row.affected > 0) await syncFrontier(db);
  return {
    affected: row.affected,
    auditId: row.audit_id,
    message: row.affected > 0 ? "resumed" : "not paused by an admin",
  };
}
