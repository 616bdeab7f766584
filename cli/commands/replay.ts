import { parseArgs } from "node:util";
import { config } from "@/lib/config";
import { createScratchDatabase } from "@/lib/scratchDatabase";
import { replaySeed000 } from "@/workers/replay/seed000";
import { UsageError } from "../usage";

export const usage = `replay seed-000 [--json]        replay seed 000's eight observations through the writer into a
                                  fresh database (PGlite in a temp dir, or a scratch database on
                                  DATABASE_URL's server) and print what the writer did`;

export async function run(args: string[]): Promise<number> {
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
