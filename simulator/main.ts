import { parseArgs } from "node:util";
import { config } from "@/lib/config";
import { startSimulator } from "./server";

// `npm run simulator [-- --port 4100 --seed 1 --rate 8]`: the newsroom simulator on its own,
// for the dashboard in development and for `npm run -s cli -- sim …`. Prints its sources as a
// wirewatch.config.json body so they can be pasted as they are.

const USAGE = `usage: npm run simulator -- [--port N] [--seed N] [--rate STORIES_PER_MINUTE]
                              [--story-rate OPERATIONS_PER_MINUTE]
  --port        port on 127.0.0.1 (default: $SIMULATOR_PORT or 4100; 0 picks a free one)
  --seed        the same seed replays the same news (default 1)
  --rate        original stories per minute across all outlets (default 8)
  --story-rate  story API operations per minute (default 6; 0 = only through the control API)`;

function numberOption(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) {
    console.error(`simulator: --${name} must be a number ≥ 0, not "${raw}"\n\n${USAGE}`);
    process.exit(2);
  }
  return value;
}

async function main(): Promise<void> {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      options: {
        port: { type: "string" },
        seed: { type: "string" },
        rate: { type: "string" },
        "story-rate": { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (err) {
    console.error(`simulator: ${(err as Error).message}\n\n${USAGE}`);
    process.exit(2);
  }
  if (values.help) {
    console.log(USAGE);
    return;
  }
  const port = numberOption("port", values.port as string | undefined, config().SIMULATOR_PORT);
  const sim = await startSimulator({
    port,
    seed: numberOption("seed", values.seed as string | undefined, 1),
    ratePerMinute: numberOption("rate", values.rate as string | undefined, 8),
    stories: {
      ratePerMinute: numberOption("story-rate", values["story-rate"] as string | undefined, 6),
    },
  }).catch((err: NodeJS.ErrnoException) => {
    const why = err.code === "EADDRINUSE" ? `port ${port} is in use (try --port 0)` : err.message;
    console.error(`simulator: cannot start: ${why}`);
    process.exit(1);
  });

  console.log(
    `newsroom simulator on ${sim.url}  (control API: ${sim.url}/_control/faults, story API: ${sim.url}/stories-api)`,
  );
  console.log(
    `OpenAI-compatible API base: ${sim.url}/v1  (chat/completions as ${sim.chat.model}, embeddings; faults: sim fault llm …, sim fault embeddings …)`,
  );
  console.log(JSON.stringify({ sources: sim.sources() }, null, 2));

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`simulator: ${signal}, stopping`);
    sim.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error(`simulator: stop failed: ${(err as Error).message}`);
        process.exit(1);
      },
    );
  };
  process.on("SIGINT", () => stop("SIGINT"));
  process.on("SIGTERM", () => stop("SIGTERM"));
}

await main();
