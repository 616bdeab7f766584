import { ConfigError, config } from "@/lib/config";
import { trackSearchLatency } from "@/lib/dashboard/searchLatency";
import { getDb } from "@/lib/db";
import { logger } from "@/lib/logger";
import { registerMetrics } from "@/lib/metrics";
import { ingestionRunsInline } from "@/workers/ingestion";
import {
  assertNamedSourcesFileExists,
  SourcesFileMissingError,
} from "@/workers/sources/sourcesFile";
import { type Supervisor, superviseIngestion } from "@/workers/superviseIngestion";

/**
 * Node runtime start: check the settings, then open the database (applying migrations) and
 * start what runs inline, retrying while the database does not answer.
 */
export async function startServer(): Promise<Supervisor> {
  try {
    const settings = config();
    // Only the process that runs ingestion reads the sources file; a worker process checks its
    // own at its start (workers/main.ts).
    if (ingestionRunsInline(settings))
      await assertNamedSourcesFileExists(settings.WIREWATCH_CONFIG);
  } catch (err) {
    // Left to Next, a throw here keeps the server up answering 500 to every request; nothing
    // recovers from a bad setting without a restart, so stop with its name instead.
    if (!(err instanceof ConfigError || err instanceof SourcesFileMissingError)) throw err;
    console.error(`wirewatch: ${err.message}`);
    process.exit(1);
  }
  const log = logger();
  // The Meaning page's search latency is this process's: heard from its first search on.
  trackSearchLatency();
  // The public read path's counters and store state (lib/metrics/readPath.ts) are this process's
  // too, and the Read path page shows them: counted from the first request, not the first scrape.
  registerMetrics();
  const started = performance.now();
  const supervisor = superviseIngestion({
    open: async () => {
      const db = await getDb();
      log.info(
        { database: db.kind, location: db.location, ms: Math.round(performance.now() - started) },
        "database ready",
      );
      return db;
    },
    inline: ingestionRunsInline(),
  });
  // Next waits for register() before it serves, so the first attempt is awaited: no request
  // pays for a fresh PGlite's migrations. A database that is down does not hold the server up:
  // /api/health answers 503 with the reason meanwhile. Ingestion itself starts in the
  // background; the simulator's backlog arrives within seconds.
  await supervisor.firstOpen;
  const stop = async () => {
    await supervisor.stop().catch((err) => log.error({ err }, "stopping ingestion failed"));
  };
  process.once("SIGTERM", () => void stop());
  process.once("SIGINT", () => void stop());
  return supervisor;
}
