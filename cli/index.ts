import { parseArgs } from "node:util";
import { config } from "@/lib/config";
import { getDb } from "@/lib/db";
import { createScratchDatabase } from "@/lib/scratchDatabase";
import { repairFromAudit } from "@/workers/repair/repairFromAudit";
import { replaySeed000 } from "@/workers/replay/seed000";

const USAGE = `usage: npm run -s cli -- <command>

  replay seed-000 [--json]        replay seed 000's eight observations through the writer into a
                                  fresh database (PGlite in a temp dir, or a scratch database on
                                  DATABASE_URL's server) and print what the writer did
  repair --dry-run [--json]       list current rows that differ from their audit trail
  repair --apply [--json]         rewrite them (in batches, without NOTIFY) and record the run
         [--actor NAME] [--batch N]`;

class UsageError extends Error {}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case "replay":
      return replay(rest);
    case "repair":
      return repair(rest);
    case undefined:
    case "help":
    case "--help":
      console.log(USAGE);
      return command === undefined ? 2 : 0;
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

async function replay(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { json: { type: "boolean", default: false } },
  });
  if (positionals[0] !== "seed-000" || positionals.length > 1) {
    throw new UsageError("replay knows one scenario: seed-000");
  }
  const scratch = await createScratchDatabase("ww_replay", config().DATABASE_URL);
  try {
    const steps = await replaySeed000(scratch.db);
    if (values.json) {
      console.log(JSON.stringify(steps));
    } else {
      console.log(
        `seed 000 replayed on ${scratch.db.kind} (${scratch.db.location}, dropped afterwards)`,
      );
      console.table(steps);
    }
  } finally {
    await scratch.dispose();
  }
  return 0;
}

async function repair(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      "dry-run": { type: "boolean", default: false },
      apply: { type: "boolean", default: false },
      json: { type: "boolean", default: false },
      actor: { type: "string", default: `cli:${process.env.USER ?? "unknown"}` },
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
  const db = await getDb();
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

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    if (err instanceof UsageError) {
      console.error(`cli: ${err.message}\n\n${USAGE}`);
      process.exitCode = 2;
    } else {
      console.error(`cli: ${(err as Error).message ?? err}`);
      process.exitCode = 1;
    }
  },
);
