import type { Database } from "@/lib/db";

/**
 * Repairs on the dashboard: runs and their field-by-field diffs read back from repair_runs /
 * repair_changes, which a run (started by workers/admin/repairs.ts) writes as it goes
 * (rows_examined after every batch of 500), so the page polls the database for progress.
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

/**
 * The repair this process is running, if any: set by the run's start (workers/admin/repairs.ts),
 * read by the views below (a "running" row no process runs was interrupted). On globalThis so
 * route handlers and instrumentation in one Next.js process see one value.
 */
export const repairSlot = globalThis as unknown as { wirewatchRepair?: { runId: string | null } };

/** The run this process is running now, if any. */
export function activeRepairRunId(): string | null {
  return repairSlot.wirewatchRepair?.runId ?? null;
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
