import { ConfigError, config } from "@/lib/config";
import { getDb } from "@/lib/db";
import { logger } from "@/lib/logger";

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
  try {
    const db = await getDb();
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

  // Inline workers start here, after the database is ready (a later issue): when enabled by
  // configuration, start them from workers/ and stop them on shutdown.
}
