import { readFileSync } from "node:fs";
import { config } from "@/lib/config";
import type { Database } from "@/lib/db";
import { DatabaseCallLedger } from "@/lib/embed/ledger";
import { LEXICAL_MODEL, LexicalEmbedder } from "@/lib/embed/lexical";
import { configuredEmbedder } from "@/lib/embed/registry";
import { SHIPPED_MODEL, ShippedEmbedder } from "@/lib/embed/shipped";
import type { CallLedger, Embedder } from "@/lib/embed/types";
import { logger } from "@/lib/logger";
import { type MeaningCalibration, parseCalibration } from "@/lib/meaning/calibrations";
import type { MeaningLineOptions } from "./line";

export interface ConfiguredMeaning {
  options: MeaningLineOptions;
  ledger: CallLedger & { close(): Promise<void> };
}

/**
 * The meaning line as the settings say (WIREWATCH_EMBEDDING_MODEL and friends, lib/embed): the
 * configured embedder with its calls in the cost ledger, and the models this process can always
 * embed with (the shipped one, the lexical fallback) for keeping a search model current during a
 * backfill. Null, said loudly, when the configured model cannot be built: ingestion goes on and
 * the line ends at dedup.
 */
export function configuredMeaning(db: Database): ConfiguredMeaning | null {
  const log = logger().child({ part: "meaning" });
  const ledger = new DatabaseCallLedger(db);
  let embedder: Embedder;
  try {
    embedder = configuredEmbedder({ ledger });
  } catch (err) {
    log.error(
      { err, model: config().WIREWATCH_EMBEDDING_MODEL },
      "the embedding model cannot be built: items are not embedded and search is keyword only",
    );
    void ledger.close();
    return null;
  }
  let calibration: MeaningCalibration | undefined;
  const file = config().WIREWATCH_MEANING_CALIBRATION;
  if (file) {
    try {
      calibration = parseCalibration(readFileSync(file, "utf8"), file);
      if (calibration.model !== embedder.info.model) {
        throw new Error(
          `it is for ${calibration.model}, the configured model is ${embedder.info.model}`,
        );
      }
    } catch (err) {
      // Stage 4 with thresholds of another model, or none read, would link on noise: off, loudly.
      log.error(
        { err, file },
        "WIREWATCH_MEANING_CALIBRATION cannot be used: stage 4 is off, grey-band pairs go to review",
      );
      calibration = undefined;
    }
  }
  log.info({ model: embedder.info.model, kind: embedder.info.kind }, "embedding model");
  return {
    ledger,
    options: {
      embedder,
      embedderFor: (model) =>
        model === SHIPPED_MODEL.model
          ? new ShippedEmbedder()
          : model === LEXICAL_MODEL.model
            ? new LexicalEmbedder()
            : null,
      searchModel: config().WIREWATCH_SEARCH_MODEL,
      ...(calibration ? { calibration } : {}),
    },
  };
}
