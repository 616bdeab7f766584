import { WEBSUB_AUDIT_ACTIONS } from "@/lib/dashboard/websubActions";
import type { Database } from "@/lib/db";
import { logger } from "@/lib/logger";
import { writeAudit } from "@/workers/admin/audit";

/**
 * What WebSub records on the Audit page (admin_audit), as a source's changes are recorded: the
 * subscription's turns an operator should be able to find later (the hub's denial, a subscription
 * that failed, a push refused for its signature), by the actor "websub". The counts and the last
 * error stay on the subscription's row (websub_subscriptions); the metrics count every one.
 * The actions are named in lib/dashboard/websubActions.ts, where the Audit page's filter reads them.
 */
export { WEBSUB_AUDIT_ACTIONS };

export type WebSubAuditAction = (typeof WEBSUB_AUDIT_ACTIONS)[keyof typeof WEBSUB_AUDIT_ACTIONS];

export const WEBSUB_ACTOR = "websub";

/**
 * How long a row stands for the same thing happening again. A hub with a stale secret refuses
 * every push it makes (a busy feed: one a minute), and a failing subscription is retried every
 * hour; one row per 10 minutes per source and reason, and one failure a day per source, say it
 * without burying the admins' own rows. The counts are on the subscription's row meanwhile.
 */
export const QUIET_MINUTES: Partial<Record<WebSubAuditAction, number>> = {
  [WEBSUB_AUDIT_ACTIONS.pushRefused]: 10,
  [WEBSUB_AUDIT_ACTIONS.failed]: 24 * 60,
};

export interface WebSubAuditRow {
  action: WebSubAuditAction;
  sourceId: string;
  hub: string | null;
  /** What happened, for the Audit page's detail; `reason` also keys the quiet period. */
  detail: { reason?: string } & Record<string, unknown>;
}

/**
 * Writes one audit row, unless the same action (and reason) for the same source was written
 * within its quiet period. The check reads admin_audit's last minutes by admin_audit_at_idx (a
 * table of admin actions: a handful of rows), so it costs a few rows. Two processes at once may
 * both write one: a duplicate row, nothing lost. Never throws: an audit row is not worth failing
 * a push or an upkeep round for; a failure is logged.
 */
export async function auditWebSub(db: Database, row: WebSubAuditRow): Promise<void> {
  try {
    const quiet = QUIET_MINUTES[row.action];
    if (quiet !== undefined) {
      const reason = row.detail.reason ?? null;
      const [recent] = await db.prisma.$queryRaw<{ n: number }[]>`
        SELECT count(*)::int AS n FROM admin_audit
        WHERE at > now() - make_interval(mins => ${quiet}::int)
          AND action = ${row.action} AND target->>'sourceId' = ${row.sourceId}
          AND (${reason}::text IS NULL OR detail->>'reason' = ${reason}::text)`;
      if ((recent?.n ?? 0) > 0) return;
    }
    await writeAudit(db, {
      actor: WEBSUB_ACTOR,
      action: row.action,
      target: { sourceId: row.sourceId, ...(row.hub ? { hub: row.hub } : {}) },
      affected: 1,
      detail: row.detail,
    });
  } catch (err) {
    logger().warn(
      { err, action: row.action, source: row.sourceId },
      "websub: audit row not written",
    );
  }
}
