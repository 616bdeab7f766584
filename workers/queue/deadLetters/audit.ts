import type { Database } from "@/lib/db";
import { Prisma } from "@/lib/generated/prisma/client";

/** The admin_audit actions of dead-letter operations. */
export const AUDIT_ACTIONS = {
  requeue: "dead_letters.requeue",
  discard: "dead_letters.discard",
} as const;
export type DeadLetterAuditAction = (typeof AUDIT_ACTIONS)[keyof typeof AUDIT_ACTIONS];

/** Who acts: required, so every audit row names a person or a program. */
export function checkActor(actor: unknown): string {
  if (typeof actor !== "string" || actor.trim() === "") {
    throw new Error("dead letters: an actor (who is acting) is required");
  }
  if (actor.length > 200) throw new Error("dead letters: actor longer than 200 characters");
  return actor.trim();
}

export interface AuditInsert {
  actor: string;
  action: DeadLetterAuditAction;
  target: Record<string, unknown>;
  dryRun: boolean;
  /** SQL for how many were (or, in a dry run, would be) affected, over the action's CTEs. */
  affected: Prisma.Sql;
  /** SQL building the jsonb detail, over the action's CTEs. */
  detail: Prisma.Sql;
}

/**
 * The INSERT of one admin_audit row, to be used as a CTE of the action's own statement: the row
 * and the change commit together or not at all, and the counts are the statement's own.
 */
export function auditInsertSql(a: AuditInsert): Prisma.Sql {
  return Prisma.sql`
    INSERT INTO admin_audit (actor, action, target, dry_run, affected, detail)
    VALUES (${a.actor}::text, ${a.action}::text, ${JSON.stringify(a.target)}::jsonb, ${a.dryRun}::boolean,
            (${a.affected})::int, ${a.detail})
    RETURNING id`;
}

export interface AuditEntry {
  id: string;
  at: Date;
  actor: string;
  action: string;
  target: Record<string, unknown>;
  dryRun: boolean;
  affected: number;
  detail: Record<string, unknown> | null;
}

/** The latest dead-letter admin actions, newest first (for the dashboard's history). */
export async function listDeadLetterAudit(
  db: Database,
  { limit = 50, before }: { limit?: number; before?: string } = {},
): Promise<AuditEntry[]> {
  const rows = await db.prisma.$queryRaw<(Omit<AuditEntry, "dryRun"> & { dry_run: boolean })[]>`
    SELECT id::text AS id, at, actor, action, target, dry_run, affected, detail
    FROM admin_audit
    WHERE action IN (${AUDIT_ACTIONS.requeue}, ${AUDIT_ACTIONS.discard})
      AND (${before ?? null}::bigint IS NULL OR id < ${before ?? null}::bigint)
    ORDER BY id DESC
    LIMIT ${Math.max(1, Math.min(500, Math.trunc(limit)))}`;
  return rows.map(({ dry_run, ...r }) => ({ ...r, dryRun: dry_run }));
}
