/**
 * Whether this process's ingestion is running, for /api/health and the Overview's banner.
 * Kept on globalThis (like the database) so instrumentation, which starts ingestion, and the
 * route handlers, which report it, read one value in a Next.js server.
 *
 *   inline     this process runs ingestion (WIREWATCH_WORKERS=inline, or auto on PGlite):
 *              healthy only while `running`
 *   elsewhere  `npm run workers` processes run it (off, or auto on PostgreSQL): this process
 *              serves the dashboard, and its health does not depend on theirs (each worker
 *              process stops, logging why, when it cannot run; the Queues page lists them)
 */

export type IngestionMode = "inline" | "elsewhere";

export const INGESTION_STATES = [
  /** opening the database, reading the sources file, starting the collectors */
  "starting",
  /** the database did not answer at start; retried with growing pauses until it does */
  "waiting_for_database",
  "running",
  /** did not start (a bad sources file, or an error shown in `reason`) */
  "failed",
  /** stopped on SIGTERM/SIGINT */
  "stopped",
] as const;
export type IngestionState = (typeof INGESTION_STATES)[number];

export type IngestionStatus =
  | { mode: "elsewhere"; since: Date }
  | {
      mode: "inline";
      state: IngestionState;
      since: Date;
      /** Stable code of what is wrong (sources_file_invalid, database_unavailable …); null when fine. */
      code: string | null;
      /** For an operator: what is wrong and what to do. Never a database address or driver text. */
      reason: string | null;
    };

const holder = globalThis as unknown as { wirewatchIngestion?: IngestionStatus };

/** This process's ingestion, or null when nothing started it (a script, a test). */
export function ingestionStatus(): IngestionStatus | null {
  return holder.wirewatchIngestion ?? null;
}

export function setIngestionElsewhere(): IngestionStatus {
  holder.wirewatchIngestion = { mode: "elsewhere", since: new Date() };
  return holder.wirewatchIngestion;
}

export function setIngestionState(
  state: IngestionState,
  problem: { code: string; reason: string } | null = null,
): IngestionStatus {
  holder.wirewatchIngestion = {
    mode: "inline",
    state,
    since: new Date(),
    code: problem?.code ?? null,
    reason: problem?.reason ?? null,
  };
  return holder.wirewatchIngestion;
}

/** For tests: forget the status, as in a fresh process. */
export function resetIngestionStatus(): void {
  holder.wirewatchIngestion = undefined;
}

/** Whether the status is a problem: only inline ingestion that is not running is. */
export function ingestionUnhealthy(status: IngestionStatus | null): boolean {
  return status?.mode === "inline" && status.state !== "running";
}
