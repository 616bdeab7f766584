import type { Database } from "@/lib/db";
import { QUEUE_AUDIT_ACTIONS } from "./queueActions";
import { REPAIR_ACTIONS } from "./repairs";
import { SOURCE_AUDIT_ACTIONS } from "./sources";
import { WEBSUB_AUDIT_ACTIONS } from "./websubActions";

/** The admin_audit log for the Audit page: newest first, keyset-paged by id. */

/** The dead-letter operations' actions (workers/queue/deadLetters). */
export const DEAD_LETTER_AUDIT_ACTIONS = {
  requeue: "dead_letters.requeue",
  discard: "dead_letters.discard",
} as const;

/** The chaos route's actions (app/api/chaos writes them with workers/admin/audit.ts writeAudit). */
export const CHAOS_AUDIT_ACTIONS = { set: "chaos.set", clear: "chaos.clear" } as const;

/** The Dedup page's actions (workers/admin/dedup.ts, dedupRerun.ts). */
export const DEDUP_AUDIT_ACTIONS = {
  undo: "dedup.undo",
  reviewConfirm: "dedup.review_confirm",
  reviewReject: "dedup.review_reject",
  thresholds: "dedup.thresholds",
  rerunDryRun: "dedup.rerun_dry_run",
  rerunApply: "dedup.rerun_apply",
} as const;

/**
 * Every action written, offered as the Audit page's filter choices (others can be typed), read
 * from each operation's own names so a new action cannot be left out of the filter.
 */
export const KNOWN_AUDIT_ACTIONS: readonly string[] = [
  ...Object.values(DEAD_LETTER_AUDIT_ACTIONS),
  ...Object.values(REPAIR_ACTIONS),
  ...Object.values(SOURCE_AUDIT_ACTIONS),
  ...Object.values(CHAOS_AUDIT_ACTIONS),
  ...Object.values(DEDUP_AUDIT_ACTIONS),
  ...Object.values(QUEUE_AUDIT_ACTIONS),
  ...Object.values(WEBSUB_AUDIT_ACTIONS),
];

export interface AuditRow {
  id: string;
  at: string;
  actor: string;
  action: string;
  target: unknown;
  dryRun: boolean;
  affected: number;
  detail: unknown;
}

/**
 * A page of the log, newest first. `action` matches exactly, or by prefix when it ends in `.`
 * or `*` ("dead_letters.*"). Walks the primary key backwards from `before`, so each page costs
 * its LIMIT (plus the rows a filter skips), not the table.
 */
export async function listAudit(
  db: Database,
  { action, before, limit = 50 }: { action?: string; before?: string; limit?: number } = {},
): Promise<{ entries: AuditRow[]; nextBefore: string | null }> {
  const take = Math.max(1, Math.min(200, Math.trunc(limit)));
  const wanted = action?.trim() || undefined;
  const prefix = wanted?.endsWith("*")
    ? wanted.slice(0, -1)
    : wanted?.endsWith(".")
      ? wanted
      : null;
  const rows = await db.prisma.adminAudit.findMany({
    where: {
      ...(before ? { id: { lt: BigInt(before) } } : {}),
      ...(wanted ? { action: prefix !== null ? { startsWith: prefix } : wanted } : {}),
    },
    orderBy: { id: "desc" },
    take: take + 1,
  });
  const entries = rows.slice(0, take).map((r) => ({
    id: r.id.toString(),
    at: r.at.toISOString(),
    actor: r.actor,
    action: r.action,
    target: r.target,
    dryRun: r.dryRun,
    affected: r.affected,
    detail: r.detail,
  }));
  return {
    entries,
    nextBefore: rows.length > take ? (entries[entries.length - 1]?.id ?? null) : null,
  };
}
