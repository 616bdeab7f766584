import { parseArgs } from "node:util";
import { config } from "@/lib/config";
import { startSimulator } from "./server";

// `npm run simulator [-- --port 4100 --seed 1 --rate 8]`: the newsroom simulator on its own,
// for the dashboard in development and for `npm run -s cli -- sim …`. Prints its sources as a
// wirewatch.config.json body so they can be pasted as they are.

const USAGE = `usage: npm run simulator -- [--port N] [--seed N] [--rate STORIES_PER_MINUTE]
                              [--story-rate OPERATIONS_PER_MINUTE]
                              [--sources N [--feeds-per-host N] [--poll-interval SECONDS]
                               [--fleet-port N] [--bind-any] [--write-sources FILE]]
  --port            port on 127.0.0.1 (default: $SIMULATOR_PORT or 4100; 0 picks a free one)
  --seed            the same seed replays the same news (default 1)
  --rate            original stories per minute across all outlets (default 8)
  --story-rate      story API operations per minute (default 6; 0 = only through the control API)
  --sources         also serve a fleet of N feeds on loopback hosts 127.1.0.1… (README: Fleet)
  --feeds-per-host  fleet feeds per loopback address (default 100)
  --poll-interval   pollIntervalSeconds the fleet's sources ask for (default 300)
  --fleet-port      the one port every fleet host listens on (default: a free one)
  --bind-any        one fleet listener on 0.0.0.0 instead of one per address: reachable from
                    the network, for systems that refuse thousands of loopback listeners
  --write-sources   write the fleet's sources to FILE as a wirewatch.config.json body`;

// wirewatch reads at most this many sources from one file (workers/sources/sourcesFile.ts).
const SOURCES_FILE_LIMIT = 10_000;

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
        sources: { type: "string" },
        "feeds-per-host": { type: "string" },
        "poll-interval": { type: "string" },
        "fleet-port": { type: "string" },
        "bind-any": { type: "boolean" },
        "write-sources": { type: "string" },
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
  const fleetSize = numberOption("sources", values.sources as string | undefined, 0);
  const fleetFlags = ["feeds-per-host", "poll-interval", "fleet-port", "bind-any", "write-sources"];
  if (fleetSize === 0 && fleetFlags.some((f) => values[f] !== undefined)) {
    console.error(
      `simulator: --${fleetFlags.find((f) => values[f] !== undefined)} needs --sources N\n\n${USAGE}`,
    );
    process.exit(2);
  }
  const fleet =
    fleetSize > 0
      ? {
          sources: fleetSize,
          feedsPerHost: numberOption(
            "feeds-per-host",
            values["feeds-per-host"] as string | undefined,
            100,
          ),
          pollIntervalSeconds: numberOption(
            "poll-interval",
            values["poll-interval"] as string | undefined,
            300,
          ),
          port: numberOption("fleet-port", values["fleet-port"] as string | undefined, 0),
          bind: values["bind-any"] ? ("any" as const) : ("per-host" as const),
        }
      : undefined;
  const sim = await startSimulator({
    port,
    seed: numberOption("seed", values.seed as string | undefined, 1),
    ratePerMinute: numberOption("rate", values.rate as string | undefined, 8),
    stories: {
      ratePerMinute: numberOption("story-rate", values["story-rate"] as string | undefined, 6),
    },
    ...(fleet ? { fleet } : {}),
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
  if (sim.fleet) {
    const f = sim.fleet;
    console.log(
      `fleet: ${f.size} feeds on ${f.hosts} hosts ${f.hostAddress(0)}…${f.hostAddress(f.hosts - 1)} port ${f.port}` +
        (f.bind === "any"
          ? " (bound to 0.0.0.0: reachable from the network)"
          : " (one listener per address)") +
        `  (counters: ${sim.url}/_control/fleet, ${sim.url}/_control/hosts)`,
    );
    const file = values["write-sources"] as string | undefined;
    if (file) {
      const written = await f.writeSources(file).catch((err: Error) => {
        console.error(`simulator: cannot write ${file}: ${err.message}`);
        return sim.stop().then(() => process.exit(1));
      });
      console.log(`fleet: wrote ${written} sources to ${file}`);
      if (f.size > SOURCES_FILE_LIMIT) {
        console.error(
          `simulator: wirewatch reads at most ${SOURCES_FILE_LIMIT} sources from a file; ${file} has ${f.size}`,
        );
      }
    }
  }
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
