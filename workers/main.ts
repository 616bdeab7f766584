import { ConfigError, config } from "@/lib/config";
import { getDb } from "@/lib/db";
import { ingestionStatus } from "@/lib/ingestionStatus";
import { logger } from "@/lib/logger";
import { serveMetrics } from "@/lib/metrics";
import { assertNamedSourcesFileExists } from "./sources/sourcesFile";
import { superviseIngestion } from "./superviseIngestion";

// `npm run workers`: ingestion in its own process, for PostgreSQL deployments where the web app
// runs with WIREWATCH_WORKERS=off. SIGTERM/SIGINT stop collecting, then close the database.
// `-- --metrics-port N [--metrics-host H]` serves this process's own metrics at /metrics
// (lib/metrics: counters only; the web app exports the database-derived ones).

async function main(): Promise<void> {
  const log = logger();
  // A named sources file that is missing stops the process before anything opens.
  await assertNamedSourcesFileExists(config().WIREWATCH_CONFIG);
  // A database that is down at start is waited for (retried with growing pauses), as in the app.
  const supervisor = superviseIngestion({ open: getDb, inline: true });
  let metrics: Awaited<ReturnType<typeof serveMetrics>> | null = null;
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, "stopping workers");
    await supervisor.stop();
    metrics?.close();
    await (await getDb().catch(() => null))?.close();
    process.exit(0);
  };
  process.once("SIGTERM", () => void stop("SIGTERM"));
  process.once("SIGINT", () => void stop("SIGINT"));
  const ingestion = await supervisor.ready;
  if (stopping) return;
  const status = ingestionStatus();
  if (!ingestion) {
    // A worker process that cannot run says why and stops, so its supervisor (systemd, k8s)
    // shows it failed instead of a process that looks alive and collects nothing.
    throw new Error(status?.mode === "inline" && status.reason ? status.reason : "did not start");
  }
  const arg = (name: string) =>
    process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : undefined;
  metrics = process.argv.includes("--metrics-port")
    ? await serveMetrics(Number(arg("--metrics-port")), arg("--metrics-host"))
    : null;
  const db = await getDb();
  log.info({ database: db.kind, location: db.location }, "workers running");
}

main().catch((err: unknown) => {
  console.error(
    `workers: ${err instanceof ConfigError ? err.message : ((err as Error).message ?? err)}`,
  );
  process.exit(1);
});
