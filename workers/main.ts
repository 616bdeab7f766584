import { ConfigError } from "@/lib/config";
import { getDb } from "@/lib/db";
import { logger } from "@/lib/logger";
import { serveMetrics } from "@/lib/metrics";
import { startIngestion } from "./ingestion";

// `npm run workers`: ingestion in its own process, for PostgreSQL deployments where the web app
// runs with WIREWATCH_WORKERS=off. SIGTERM/SIGINT stop collecting, then close the database.
// `-- --metrics-port N [--metrics-host H]` serves this process's own metrics at /metrics
// (lib/metrics.ts: counters only; the web app exports the database-derived ones).

async function main(): Promise<void> {
  const log = logger();
  const db = await getDb();
  const ingestion = await startIngestion(db);
  const arg = (name: string) =>
    process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : undefined;
  const metrics = process.argv.includes("--metrics-port")
    ? await serveMetrics(Number(arg("--metrics-port")), arg("--metrics-host"))
    : null;
  log.info({ database: db.kind, location: db.location }, "workers running");
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, "stopping workers");
    await ingestion.stop();
    metrics?.close();
    await db.close();
    process.exit(0);
  };
  process.once("SIGTERM", () => void stop("SIGTERM"));
  process.once("SIGINT", () => void stop("SIGINT"));
}

main().catch((err: unknown) => {
  console.error(
    `workers: ${err instanceof ConfigError ? err.message : ((err as Error).message ?? err)}`,
  );
  process.exit(1);
});
