import type { Database } from "@/lib/db";
import { logger } from "@/lib/logger";
import type { Stage } from "@/workers/line/stage";
import {
  type ExtractBackfill,
  type ExtractBackfillOptions,
  startExtractBackfill,
} from "./backfill";
import { setRunningExtractorId } from "./running";
import { type ExtractStageOptions, extractStage } from "./stage";

export interface ExtractLineOptions extends Omit<ExtractStageOptions, "afterMeaning"> {
  /** The backfill's pace (its chain and stage 4 come from here). */
  backfill?: Omit<ExtractBackfillOptions, "extractorId" | "afterMeaning" | "maxAttempts">;
}

export interface ExtractLine {
  stage: Stage;
  /** Starts the backfill walk (after the queue worker runs the stage). */
  start(): void;
  backfill(): ExtractBackfill | null;
  /** Stops the walk; the Extractor is its owner's to close. */
  stop(): Promise<void>;
}

/**
 * Extraction on the processing line (seed 002): the extract stage after dedup, embed and stage 4,
 * and the backfill that re-extracts what another chain made. `afterMeaning`: stage 4 runs before
 * it (workers/embed/line.ts meaningRuns).
 */
export function extractLine(
  db: Database,
  options: ExtractLineOptions & { afterMeaning: boolean },
): ExtractLine {
  const stage = extractStage(db, options);
  let backfill: ExtractBackfill | null = null;
  logger()
    .child({ part: "extract" })
    .info(
      {
        extractor: options.extractor.id,
        providers: options.extractor.providers.map((p) => `${p.name}:${p.model}`),
      },
      "extraction chain",
    );
  return {
    stage,
    start: () => {
      setRunningExtractorId(options.extractor.id);
      backfill = startExtractBackfill(db, {
        ...options.backfill,
        extractorId: options.extractor.id,
        afterMeaning: options.afterMeaning,
        maxAttempts: stage.maxAttempts,
      });
    },
    backfill: () => backfill,
    stop: async () => {
      setRunningExtractorId(null);
      await backfill?.stop();
    },
  };
}
