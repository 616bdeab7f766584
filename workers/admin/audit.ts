import type { Database } from "@/lib/db";
import { Prisma } from "@/lib/generated/prisma/client";

/**
 * The one writer of admin_audit rows (the Audit page reads them: lib/dashboard/audit.ts). Every
 * admin action (dead letters, sources, repairs, chaos) records itself through auditInsertSql, so
 * the row's shape has one definition; a repair completes its row when it ends (completeAudit).
 */
export interface AuditInsert {
  actor: string;
  /** The action's name, from its operation's list (lib/dashboard/audit.ts KNOWN_AUDIT_ACTIONS). */
  action: string;
  target: Record<string, unknown>;
  dryRun: boolean;
  /** SQL for how many were (or, in a dry run, would be) affected, over the action's CTEs. */
  affected: Prisma.Sql;
  /** SQL building the jsonb detail (over the action's CTEs), or NULL. */
  detail: Prisma.Sql;
}

/**
 * The INSERT of one admin_audit row, to be used as a CTE of the action's own statement: the row
 * and the change commit together or not at all, and the counts are the statement's own (read
 * from its CTEs, so a concurrent change between a count and the write cannot make them differ).
 */
export function auditInsertSql(a: AuditInsert): Prisma.Sql {
  return Prisma.sql`
    INSERT INTO admin_audit (actor, action, target, dry_run, affected, detail)
    VALUES (${a.actor}::text, ${a.action}::text, ${JSON.stringify(a.target)}::jsonb, ${a.dryRun}::boolean,
            (${a.affected})::int, ${a.detail})
    RETURNING id`;
}

/** One audit row on its own, for an action whose change is not a statement (chaos, a repair's start). */
export async function writeAudit(
  db: Database,
  row: {
    actor: string;
    action: string;
    target?: Record<string, unknown>;
    dryRun?: boolean;
    affected?: number;
    detail?: Record<string, unknown>;
  },
): Promise<string> {
  const insert = auditInsertSql({
    actor: row.actor,
    action: row.action,
    target: row.target ?? {},
    dryRun: row.dryRun ?? false,
    affected: Prisma.sql`${row.affected ?? 0}::int`,
    detail: row.detail ? Prisma.sql`${JSON.stringify(row.detail)}::jsonb` : Prisma.sql`NULL::jsonb`,
  });
  const [created] = await db.prisma.$queryRaw<
    { id: bigint }[]
  >`WITH a AS (${insert}) SELECT id FROM a`;
  if (!created) throw new Error("admin audit: the row was not written");
  return created.id.toString();
}

/**
 * What a long action (a repair) did, once it has ended: the count and detail of the row its start
 * wrote. The one update admin_audit gets; a row is otherwise never changed.
 */
export async function completeAudit(
  db: Database,
  id: string,
  outcome: { affected: number; detail: Record<string, unknown> },
): Promise<void> {
  await db.prisma.$executeRaw`
    UPDATE admin_audit SET affected = ${outcome.affected}::int,
                           detail = ${JSON.stringify(outcome.detail)}::jsonb
    WHERE id = ${BigInt(id)}`;
}
