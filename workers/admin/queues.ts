import { QUEUE_AUDIT_ACTIONS } from "@/lib/dashboard/queueActions";
import type { Database } from "@/lib/db";
import { Prisma } from "@/lib/generated/prisma/client";
import { PAUSED_MARKER_QUEUE, pauseQueueSql, resumeQueueSql } from "@/workers/queue/paused";
import { wakeSql } from "@/workers/queue/wake";
import { auditInsertSql } from "./audit";

/**
 * The Queues page's admin actions: pause and resume a whole queue (every worker stops claiming
 * from it; what is leased finishes). Like the sources' pause, each is one statement with its
 * admin_audit row as a CTE, so the change and its record commit together.
 */
export { QUEUE_AUDIT_ACTIONS };

export interface QueueActionResult {
  /** 1 when the pause (or resume) changed something, 0 when the queue already was so. */
  affected: number;
  auditId: string;
  message: string;
}

/**
 * Whether a queue name is one this system has: jobs in it, claims of it in the last week's
 * stats, or a worker serving it. A typo must be a 404, not a pause of a queue nobody uses.
 */
export async function queueExists(db: Database, queue: string): Promise<boolean> {
  if (queue === PAUSED_MARKER_QUEUE) return false;
  const [row] = await db.prisma.$queryRaw<{ found: boolean }[]>`
    SELECT EXISTS (SELECT 1 FROM jobs WHERE queue = ${queue})
        OR EXISTS (SELECT 1 FROM queue_claim_stats WHERE queue = ${queue})
        OR EXISTS (SELECT 1 FROM queue_workers WHERE ${queue} = ANY (queues)) AS found`;
  return row?.found ?? false;
}

/** The paused queues and since when, by name. */
export async function pausedQueues(db: Database): Promise<{ queue: string; since: Date }[]> {
  const rows = await db.prisma.$queryRaw<{ queue: string; since: Date }[]>`
    SELECT key AS queue, created_at AS since FROM jobs
    WHERE queue = ${PAUSED_MARKER_QUEUE} AND state = 'ready' AND key IS NOT NULL
    ORDER BY key`;
  return rows;
}

async function act(
  db: Database,
  queue: string,
  actor: string,
  action: "pause" | "resume",
): Promise<QueueActionResult | null> {
  if (!(await queueExists(db, queue))) return null;
  const change = action === "pause" ? pauseQueueSql(queue) : resumeQueueSql(queue);
  // On resume, the queue's workers are woken at commit (the marker row's `queue` column is the
  // resumed queue's name, which is what wakeSql notifies), instead of at their next poll.
  const wake = action === "resume" ? Prisma.sql`, (${wakeSql("due")}) AS woke` : Prisma.empty;
  const [row] = await db.prisma.$queryRaw<{ affected: number; audit_id: string }[]>`
    WITH due AS (${change}),
    audit AS (${auditInsertSql({
      actor,
      action: QUEUE_AUDIT_ACTIONS[action],
      target: { queue },
      dryRun: false,
      affected: Prisma.sql`SELECT count(*) FROM due`,
      detail: Prisma.sql`NULL::jsonb`,
    })})
    SELECT (SELECT count(*) FROM due)::int AS affected, (SELECT id FROM audit)::text AS audit_id${wake}`;
  if (!row) throw new Error(`${action} queue: no answer`);
  const done = row.affected > 0;
  return {
    affected: row.affected,
    auditId: row.audit_id,
    message:
      action === "pause"
        ? done
          ? "paused: no new claims; leased jobs finish"
          : "already paused"
        : done
          ? "resumed"
          : "was not paused",
  };
}

/** Pauses a queue; null when there is no such queue. Audited, even when it was already paused. */
export const pauseQueue = (db: Database, queue: string, actor: string) =>
  act(db, queue, actor, "pause");

/** Resumes a queue and wakes its workers; null when there is no such queue. Audited. */
export const resumeQueue = (db: Database, queue: string, actor: string) =>
  act(db, queue, actor, "resume");
