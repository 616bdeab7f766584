import { REPAIR_ACTIONS, repairSlot } from "@/lib/dashboard/repairs";
import type { Database } from "@/lib/db";
import { logger } from "@/lib/logger";
import { repairFromAudit } from "@/workers/repair/repairFromAudit";
import { completeAudit, writeAudit } from "./audit";

/** Repairs from the dashboard: one at a time per process, in the background. */

export class RepairBusyError extends Error {
  constructor(readonly runId: string | null) {
    super(`a repair is already running${runId ? ` (run ${runId})` : ""}; one at a time`);
    this.name = "RepairBusyError";
  }
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
  if (repairSlot.wirewatchRepair) throw new RepairBusyError(repairSlot.wirewatchRepair.runId);
  const slot: { runId: string | null } = { runId: null };
  repairSlot.wirewatchRepair = slot;
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
        if (repairSlot.wirewatchRepair === slot) repairSlot.wirewatchRepair = undefined;
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
    const auditId = await writeAudit(db, {
      actor,
      action: dryRun ? REPAIR_ACTIONS.dryRun : REPAIR_ACTIONS.apply,
      target: { runId: slot.runId },
      dryRun,
      affected: 0,
      detail: { status: "running" },
    });
    void running.then(async (report) => {
      const ended = await db.prisma.repairRun.findUnique({ where: { id: run.id } });
      await completeAudit(db, auditId, {
        affected: report?.changed ?? 0,
        detail: {
          status: ended?.status ?? (report ? "finished" : "failed"),
          examined: report?.examined ?? ended?.rowsExamined ?? 0,
          changed: report?.changed ?? ended?.rowsChanged ?? 0,
          skipped: report?.skipped ?? 0,
          ...(failure ? { error: String((failure as Error).message ?? failure) } : {}),
        },
      }).catch((err) => logger().error({ err }, "repair: audit row not updated"));
      if (failure) logger().error({ err: failure, runId: slot.runId }, "repair failed");
    });
    return { runId: slot.runId, auditId };
  } catch (err) {
    if (repairSlot.wirewatchRepair === slot && slot.runId === null)
      repairSlot.wirewatchRepair = undefined;
    throw err;
  }
}
