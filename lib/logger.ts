import pino from "pino";
import { config } from "./config";

const globalForLogger = globalThis as unknown as { wirewatchLogger?: pino.Logger };

/** The process's one logger (JSON lines on stderr, so CLI output on stdout stays clean). */
export function logger(): pino.Logger {
  globalForLogger.wirewatchLogger ??= pino(
    { name: "wirewatch", level: config().LOG_LEVEL },
    pino.destination(2),
  );
  return globalForLogger.wirewatchLogger;
}
