import type { Database } from "@/lib/db";
import { setIngestionElsewhere, setIngestionState } from "@/lib/ingestionStatus";
import { logger } from "@/lib/logger";
import { sleep } from "@/lib/sleep";
import { type Ingestion, startIngestion } from "./ingestion";
import { SourcesFileError, SourcesFileMissingError } from "./sources/sourcesFile";

export interface SuperviseOptions {
  /** Opens the database (getDb: it applies migrations, and retries on the next call). */
  open: () => Promise<Database>;
  /** Whether this process runs ingestion (from configuration alone, so it is known while the
   *  database is still down). */
  inline: boolean;
  start?: (db: Database) => Promise<Ingestion>;
  /** First pause after a failed open, doubled each time up to maxRetryMs. */
  retryMs?: number;
  maxRetryMs?: number;
}

export interface Supervisor {
  /** Settles after the first attempt to open the database, whatever its outcome. */
  firstOpen: Promise<void>;
  /** Settles once ingestion runs (the Ingestion), runs elsewhere or did not start (null). */
  ready: Promise<Ingestion | null>;
  /** Stops retrying, then stops ingestion if it runs. */
  stop(): Promise<void>;
}

/**
 * The server's start of ingestion: open the database, retrying while it does not answer (a
 * PostgreSQL that comes up after the app used to leave ingestion never started), then start
 * ingestion when it runs in this process. Every step is published in ingestionStatus() for
 * /api/health and the Overview. Retries start at 1 s and double to 30 s: a database restarted
 * with the app is back within seconds, and one down for long is asked twice a minute.
 */
export function superviseIngestion(options: SuperviseOptions): Supervisor {
  const log = logger().child({ part: "ingestion" });
  const start = options.start ?? startIngestion;
  const maxRetryMs = options.maxRetryMs ?? 30_000;
  const stopping = new AbortController();
  if (options.inline) setIngestionState("starting");
  else setIngestionElsewhere();

  let firstOpened = () => {};
  const firstOpen = new Promise<void>((resolve) => {
    firstOpened = resolve;
  });
  const run = async (): Promise<Ingestion | null> => {
    let db: Database | null = null;
    for (let pause = options.retryMs ?? 1_000; !stopping.signal.aborted; ) {
      try {
        db = await options.open();
        firstOpened();
        break;
      } catch (err) {
        firstOpened();
        // The driver's message names the host and port: it goes to the log, not to the status.
        log.error({ err, retryInMs: pause }, "database unavailable at start; retrying");
        if (options.inline) {
          setIngestionState("waiting_for_database", {
            code: "database_unavailable",
            reason: `the database did not answer at start; ingestion starts when it does (retrying every ${Math.round(pause / 1000)} s or less)`,
          });
        }
        await sleep(pause, stopping.signal);
        pause = Math.min(pause * 2, maxRetryMs);
      }
    }
    if (!db || stopping.signal.aborted) return null;
    if (!options.inline) {
      log.info("ingestion runs elsewhere (npm run workers); this process serves the dashboard");
      return null;
    }
    setIngestionState("starting");
    try {
      const ingestion = await start(db);
      setIngestionState("running");
      return ingestion;
    } catch (err) {
      log.error({ err }, "ingestion did not start");
      setIngestionState("failed", startFailure(err));
      return null;
    }
  };

  const ready = run();
  void ready.finally(firstOpened);
  return {
    firstOpen,
    ready,
    stop: async () => {
      stopping.abort();
      const ingestion = await ready;
      if (!ingestion) return;
      await ingestion.stop();
      setIngestionState("stopped", {
        code: "ingestion_stopped",
        reason: "ingestion was stopped (the server is shutting down)",
      });
    },
  };
}

function startFailure(err: unknown): { code: string; reason: string } {
  if (err instanceof SourcesFileError) {
    return {
      code: "sources_file_invalid",
      reason: `ingestion did not start: ${err.message} (fix the file and restart)`,
    };
  }
  if (err instanceof SourcesFileMissingError) {
    return { code: "sources_file_missing", reason: `ingestion did not start: ${err.message}` };
  }
  return {
    code: "ingestion_failed",
    reason: "ingestion did not start: the server log says why (restart once it is fixed)",
  };
}
