import type { Database } from "@/lib/db";
import { logger } from "@/lib/logger";
import { repairFromAudit } from "@/workers/repair/repairFromAudit";

/**
 * Repairs from the dashboard: start one in this process in the background, and read runs and
 * their field-by-field diffs back from repair_runs / repair_changes, which the run writes as it
 * goes (rows_examined after every batch of 500), so the page polls the database for progress.
 */

export const REPAIR_ACTIONS = { dryRun: "repairs.dry_run", apply: "repairs.apply" } as const;

export interface RepairRunView {
  id: string;
  actor: string;
  dryRun: boolean;
  /** running, finished, failed. */
  status: string;
  startedAt: string;
  finishedAt: string | null;
  rowsTotal: number;
  rowsExamined: number;
  rowsChanged: number;
  /** repair_changes rows: drifted rows found (and, when applied, how many were written). */
  changes: number;
  error: string | null;
  /** True while this process is running it (a "running" row no process runs was interrupted). */
  active: boolean;
}

export interface RepairChangeView {
  id: string;
  entryKey: string;
  applied: boolean;
  diff: Record<string, { from: unknown; to: unknown }>;
}

const state = globalThis as unknown as { wirewatchRepair?: { runId: string | null } };

export class RepairBusyError extends Error {
  constructor(readonly runId: string | null) {
    super(`a repair is already running${runId ? ` (run ${runId})` : ""}; one at a time`);
    this.name = "RepairBusyError";
  }
}

/** The run this process is running now, if any. */
export function activeRepairRunId(): string | null {
  return state.wirewatchRepair?.runId ?? null;
}

/**
 * Starts a repair (dry run or apply) in the background and returns its run id once the run's
 * row exists. One at a time per process: a second start while one runs is refused. Every start
 * writes an admin_audit row (repairs.dry_run / repairs.apply) naming the run; when the run ends
 * the same row gets the count it changed (or would change) and how it ended.
 */
export async function startRepair(
  db: Database,
  { dryRun, actor }: { dryRun: boolean; actor: string },
): Promise<{ runId: string; auditId: string }> {
  if (state.wirewatchRepair) throw new RepairBusyError(state.wirewatchRepair.runId);
  const slot: { runId: string | null } = { runId: null };
  state.wirewatchRepair = slot;
  try {
    const before = await db.prisma.repairRun.aggregate({ _max: { id: true } });
    const floor = before._max.id ?? 0n;
    let failure: unknown = null;
    const running = repairFromAudit(db, { dryRun, actor })
      .catch((err) => {
        failure = err;
        return null;
      })
      .finally(() => {
        if (state.wirewatchRepair === slot) state.wirewatchRepair = undefined;
      });
    // repairFromAudit counts the rows, then creates its run row; wait for that row (it is the
    // newest of this actor, and no other run starts meanwhile in this process).
    let run: { id: bigint } | null = null;
    for (let waited = 0; !run; waited += 25) {
      run = await db.prisma.repairRun.findFirst({
        where: { id: { gt: floor }, actor, dryRun },
        orderBy: { id: "desc" },
        select: { id: true },
      });
      if (run) break;
      if (failure) throw failure;
      if (waited > 30_000) throw new Error("repair: the run did not start within 30 s");
      await new Promise((r) => setTimeout(r, 25));
    }
    slot.runId = run.id.toString();
    const audit = await db.prisma.adminAudit.create({
      data: {
        actor,
        action: dryRun ? REPAIR_ACTIONS.dryRun : REPAIR_ACTIONS.apply,
        target: { runId: slot.runId },
        dryRun,
        affected: 0,
        detail: { status: "running" },
      },
      select: { id: true },
    });
    void running.then(async (report) => {
      const ended = await db.prisma.repairRun.findUnique({ where: { id: run.id } });
      await db.prisma.adminAudit
        .update({
          where: { id: audit.id },
          data: {
            affected: report?.changed ?? 0,
            detail: {
              status: ended?.status ?? (report ? "finished" : "failed"),
              examined: report?.examined ?? ended?.rowsExamined ?? 0,
              changed: report?.changed ?? ended?.rowsChanged ?? 0,
              skipped: report?.skipped ?? 0,
              ...(failure ? { error: String((failure as Error).message ?? failure) } : {}),
            },
          },
        })
        .catch((err) => logger().error({ err }, "repair: audit row not updated"));
      if (failure) logger().error({ err: failure, runId: slot.runId }, "repair failed");
    });
    return { runId: slot.runId, auditId: audit.id.toString() };
  } catch (err) {
    if (state.wirewatchRepair === slot && slot.runId === null) state.wirewatchRepair = undefined;
    throw err;
  }
}

type RunRow = {
  id: bigint;
  actor: string;
  dryRun: boolean;
  status: string;
  startedAt: Date;
  finishedAt: Date | null;
  rowsTotal: number;
  rowsExamined: number;
  rowsChanged: number;
  error: string | null;
  _count: { changes: number };
};

const toView = (r: RunRow): RepairRunView => ({
  id: r.id.toString(),
  actor: r.actor,
  dryRun: r.dryRun,
  status: r.status,
  startedAt: r.startedAt.toISOString(),
  finishedAt: r.finishedAt?.toISOString() ?? null,
  rowsTotal: r.rowsTotal,
  rowsExamined: r.rowsExamined,
  rowsChanged: r.rowsChanged,
  changes: r._count.changes,
  error: r.error,
  active: activeRepairRunId() === r.id.toString(),
});

const runSelect = {
  id: true,
  actor: true,
  dryRun: true,
  status: true,
  startedAt: true,
  finishedAt: true,
  rowsTotal: true,
  rowsExamined: true,
  rowsChanged: true,
  error: true,
  _count: { select: { changes: true } },
} as const;

/** Runs newest first, keyset-paged by id. */
export async function listRepairRuns(
  db: Database,
  { limit = 20, before }: { limit?: number; before?: string } = {},
): Promise<{ runs: RepairRunView[]; nextBefore: string | null; activeRunId: string | null }> {
  const take = Math.max(1, Math.min(100, Math.trunc(limit)));
  const rows = await db.prisma.repairRun.findMany({
    where: before ? { id: { lt: BigInt(before) } } : {},
    orderBy: { id: "desc" },
    take: take + 1,
    select: runSelect,
  });
  const page = rows.slice(0, take).map(toView);
  return {
    runs: page,
    nextBefore: rows.length > take ? (page[page.length - 1]?.id ?? null) : null,
    activeRunId: activeRepairRunId(),
  };
}

/** One run and a page of its changes (by id, after `after`); null when there is no such run. */
export async function getRepairRun(
  db: Database,
  id: string,
  { after, limit = 100 }: { after?: string; limit?: number } = {},
): Promise<{ run: RepairRunView; changes: RepairChangeView[]; nextAfter: string | null } | null> {
  const run = await db.prisma.repairRun.findUnique({
    where: { id: BigInt(id) },
    select: runSelect,
  });
  if (!run) return null;
  const take = Math.max(1, Math.min(500, Math.trunc(limit)));
  const rows = await db.prisma.repairChange.findMany({
    where: { runId: run.id, ...(after ? { id: { gt: BigInt(after) } } : {}) },
    orderBy: { id: "asc" },
    take: take + 1,
  });
  const changes = rows.slice(0, take).map((c) => ({
    id: c.id.toString(),
    entryKey: c.entryKey,
    applied: c.applied,
    diff: c.diff as RepairChangeView["diff"],
  }));
  return {
    run: toView(run),
    changes,
    nextAfter: rows.length > take ? (changes[changes.length - 1]?.id ?? null) : null,
  };
}
