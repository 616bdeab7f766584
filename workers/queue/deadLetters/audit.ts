import { DEAD_LETTER_AUDIT_ACTIONS } from "@/lib/dashboard/audit";
import type { Database } from "@/lib/db";

/** The admin_audit actions of dead-letter operations (named in lib/ for the Audit page). */
export { DEAD_LETTER_AUDIT_ACTIONS as AUDIT_ACTIONS };
export type DeadLetterAuditAction =
  (typeof DEAD_LETTER_AUDIT_ACTIONS)[keyof typeof DEAD_LETTER_AUDIT_ACTIONS];

/** Who acts: required, so every audit row names a person or a program. */
export function checkActor(actor: unknown): string {
  if (typeof actor !== "string" || actor.trim() === "") {
    throw new Error("dead letters: an actor (who is acting) is required");
  }
  if (actor.length > 200) throw new Error("dead letters: actor longer than 200 characters");
  return actor.trim();
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
    WHERE action IN (${DEAD_LETTER_AUDIT_ACTIONS.requeue}, ${DEAD_LETTER_AUDIT_ACTIONS.discard})
      AND (${before ?? null}::bigint IS NULL OR id < ${before ?? null}::bigint)
    ORDER BY id DESC
    LIMIT ${Math.max(1, Math.min(500, Math.trunc(limit)))}`;
  return rows.map(({ dry_run, ...r }) => ({ ...r, dryRun: dry_run }));
}
