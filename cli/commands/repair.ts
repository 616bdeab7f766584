import { userInfo } from "node:os";
import { parseArgs } from "node:util";
import { openConfiguredDatabase } from "@/lib/db";
import { repairFromAudit } from "@/workers/repair/repairFromAudit";
import { UsageError } from "../usage";

export const usage = `repair --dry-run [--json]       list current rows that differ from their audit trail
  repair --apply [--json]         rewrite them (in batches, without NOTIFY) and record the run
         [--actor NAME] [--batch N]`;

export async function run(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      "dry-run": { type: "boolean", default: false },
      apply: { type: "boolean", default: false },
      json: { type: "boolean", default: false },
      actor: { type: "string", default: `cli:${userInfo().username}` },
      batch: { type: "string", default: "500" },
    },
  });
  if (values["dry-run"] === values.apply) {
    throw new UsageError("repair needs exactly one of --dry-run or --apply");
  }
  const batchSize = Number(values.batch);
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 10_000) {
    throw new UsageError("--batch must be an integer from 1 to 10000");
  }
  // A dry run only reads: on a directory with no database it must say so, not create one.
  const db = await openConfiguredDatabase({ mustExist: values["dry-run"] });
  try {
    const report = await repairFromAudit(db, {
      dryRun: values["dry-run"],
      actor: values.actor,
      batchSize,
      onProgress: values.json
        ? undefined
        : (p) => process.stderr.write(`\rexamined ${p.examined}/${p.total}, ${p.changed} to fix`),
    });
    if (values.json) {
      console.log(JSON.stringify(report, (_k, v) => (typeof v === "bigint" ? v.toString() : v)));
      return 0;
    }
    process.stderr.write("\n");
    for (const row of report.rows) {
      console.log(`${row.entryKey}  (source ${row.sourceId}, version ${row.version})`);
      for (const [field, { from, to }] of Object.entries(row.diff)) {
        console.log(`    ${field}: ${JSON.stringify(from)} -> ${JSON.stringify(to)}`);
      }
    }
    const verb = report.dryRun ? "would change" : "changed";
    console.log(
      `repair run ${report.runId} (${report.dryRun ? "dry run" : "applied"}): examined ${report.examined}, ${verb} ${report.changed}` +
        (report.skipped ? `, skipped ${report.skipped} written meanwhile (run again)` : ""),
    );
    return 0;
  } finally {
    await db.close();
  }
}
