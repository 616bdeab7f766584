import { ConfigError } from "@/lib/config";
import { getDb } from "@/lib/db";
import { logger } from "@/lib/logger";
import { startIngestion } from "./ingestion";

// `npm run workers`: ingestion in its own process, for PostgreSQL deployments where the web app
// runs with WIREWATCH_WORKERS=off. SIGTERM/SIGINT stop collecting, then close the database.

async function main(): Promise<void> {
  const log = logger();
  const db = await getDb();
  const ingestion = await startIngestion(db);
  log.info({ database: db.kind, location: db.location }, "workers running");
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, "stopping workers");
    await ingestion.stop();
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
