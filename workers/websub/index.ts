import type { Database } from "@/lib/db";
import { logger } from "@/lib/logger";
import { type MaintainOptions, maintainSubscriptions } from "./maintain";

export interface WebSub {
  /** One upkeep round now (tests, and start-up). */
  runOnce(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Every minute: a round of subscription upkeep. A minute because renewals fall due at 80 % of a
 * lease of days, and a new feed's subscription is not urgent (it is polled meanwhile); the round
 * is a handful of queries when nothing is due. A round that fails (database away) is logged and
 * the next one tries again.
 */
export const UPKEEP_EVERY_MS = 60_000;

export function startWebSub(
  db: Database,
  options: Omit<MaintainOptions, "now">,
  everyMs = UPKEEP_EVERY_MS,
): WebSub {
  const log = logger().child({ part: "websub" });
  let running: Promise<void> | null = null;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const runOnce = () => {
    running ??= maintainSubscriptions(db, options)
      .then((summary) => {
        if (summary.checked + summary.renewed + summary.unsubscribed + summary.failed > 0) {
          log.info(summary, "websub upkeep");
        }
      })
      .catch((err: unknown) => log.warn({ err }, "websub upkeep failed; next round retries"))
      .finally(() => {
        running = null;
      });
    return running;
  };
  const loop = () => {
    if (stopped) return;
    void runOnce().finally(() => {
      if (stopped) return;
      timer = setTimeout(loop, everyMs);
      timer.unref();
    });
  };
  loop();
  log.info({ callback: options.callbackBase }, "websub: subscribing feeds that advertise a hub");
  return {
    runOnce,
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
