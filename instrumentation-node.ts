import { ConfigError, config } from "@/lib/config";
import { type Database, getDb } from "@/lib/db";
import { logger } from "@/lib/logger";
import { ingestionRunsInline, startIngestion } from "@/workers/ingestion";

/** Node runtime start: open the database (applying migrations), then start what runs inline. */
export async function startServer(): Promise<void> {
  try {
    config();
  } catch (err) {
    // Left to Next, a throw here keeps the server up answering 500 to every request; nothing
    // recovers from a bad setting without a restart, so stop with its name instead.
    if (!(err instanceof ConfigError)) throw err;
    console.error(`wirewatch: ${err.message}`);
    process.exit(1);
  }
  const log = logger();
  const started = performance.now();
  let db: Database;
  try {
    db = await getDb();
    log.info(
      { database: db.kind, location: db.location, ms: Math.round(performance.now() - started) },
      "database ready",
    );
  } catch (err) {
    // Keep serving: /api/health answers 503 with the reason and getDb() retries on the next
    // call, so a PostgreSQL that comes up after the app recovers without a restart.
    log.error({ err }, "database unavailable at start");
    return;
  }

  if (!ingestionRunsInline(db)) {
    log.info("ingestion runs elsewhere (npm run workers); this process serves the dashboard");
    return;
  }
  // Not awaited: the server takes requests while the collectors start; the first polls and the
  // simulator's backlog arrive within seconds.
  startIngestion(db).then(
    (ingestion) => {
      const stop = async () => {
        await ingestion.stop().catch((err) => log.error({ err }, "stopping ingestion failed"));
      };
      process.once("SIGTERM", () => void stop());
      process.once("SIGINT", () => void stop());
    },
    (err) => log.error({ err }, "ingestion did not start"),
  );
}
