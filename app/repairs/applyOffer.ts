import type { RepairRunView } from "@/lib/dashboard/repairs";

/** What the Apply button offers, from the runs newest first. */
export type ApplyOffer =
  | { kind: "no-dry-run" }
  | { kind: "nothing"; dry: RepairRunView }
  | { kind: "rows"; dry: RepairRunView };

/**
 * Apply follows the newest finished run: after a dry run that found 0 rows, or an apply that has
 * rewritten what its dry run found, there is nothing to repair and Apply is not offered (a run
 * over every row to change none would only add a history entry and an audit row).
 */
export function applyOffer(runs: readonly RepairRunView[]): ApplyOffer {
  const latest = runs.find((r) => r.status === "finished");
  const dry = runs.find((r) => r.dryRun && r.status === "finished");
  if (!latest || !dry) return { kind: "no-dry-run" };
  if (!latest.dryRun || dry.rowsChanged === 0) return { kind: "nothing", dry };
  return { kind: "rows", dry };
}
