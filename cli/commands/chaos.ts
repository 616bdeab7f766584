import { config } from "@/lib/config";
import { openDatabase } from "@/lib/db";
import { logger } from "@/lib/logger";
import { runStoryChaos } from "@/workers/stories/chaos/storyChaos";
import { UsageError } from "../usage";

export const usage =
  "chaos stories --runs N --seed S [--json]   randomized chaos runs of the story-API copy (needs DATABASE_URL)";

/**
 * `chaos stories`: N seeded chaos runs of the story-API copy against the PostgreSQL in
 * DATABASE_URL. Prints {"runs","mismatches","duplicateNotifications","resurrections","seed"};
 * every failing run's seed and problems go to stderr (replay one with --runs 1 --seed <its seed>).
 * Exit code 1 when any run failed.
 */
export async function run(args: string[]): Promise<number> {
  const [what, ...rest] = args;
  if (what !== "stories")
    throw new UsageError(`chaos: unknown target "${what ?? ""}" (try: chaos stories)`);
  let runs = 100;
  let seed = 1;
  let json = false;
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i];
    const value = () => {
      const v = Number(rest[++i]);
      if (!Number.isSafeInteger(v) || v < 0) throw new UsageError(`${arg} takes a whole number`);
      return v;
    };
    if (arg === "--runs") runs = value();
    else if (arg === "--seed") seed = value();
    else if (arg === "--json") json = true;
    else throw new UsageError(`chaos stories: unknown option "${arg}"`);
  }
  if (runs < 1) throw new UsageError("--runs must be at least 1");
  const url = process.env.DATABASE_URL;
  if (!url) {
    throw new Error(
      "chaos stories runs against PostgreSQL: set DATABASE_URL (racing handlers need a real server; the embedded database is one connection)",
    );
  }
  // Each run logs its reloads and its simulated crashes; the report says what matters.
  if (config().LOG_LEVEL === "info") logger().level = "error";
  const db = await openDatabase({ url, poolSize: 20 });
  const started = Date.now();
  try {
    const report = await runStoryChaos(db, {
      runs,
      seed,
      onRun: (r) => {
        if (r.problems.length > 0) {
          console.error(
            `run ${r.run} FAILED (seed ${r.seed}, ${r.mode} mode, source ${r.source}; replay: chaos stories --runs 1 --seed ${r.seed}):\n  ${r.problems.join("\n  ")}`,
          );
        } else if (!json && (r.run + 1) % 50 === 0) {
          console.error(`${r.run + 1}/${runs} runs…`);
        }
      },
    });
    const { failed, ...summary } = report;
    if (json) console.log(JSON.stringify(summary));
    else {
      console.log(
        `${summary.runs} runs (seeds ${seed}–${seed + runs - 1}) in ${((Date.now() - started) / 1000).toFixed(1)} s: ` +
          `${summary.mismatches} mismatches, ${summary.duplicateNotifications} duplicate notifications, ` +
          `${summary.resurrections} resurrections${failed.length ? `; failing seeds: ${failed.map((f) => f.seed).join(", ")}` : ""}`,
      );
    }
    return failed.length > 0 ? 1 : 0;
  } finally {
    await db.close();
  }
}
