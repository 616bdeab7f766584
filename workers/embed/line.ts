import type { Database } from "@/lib/db";
import type { Embedder } from "@/lib/embed/types";
import { logger } from "@/lib/logger";
import { type MeaningCalibration, withCalibration } from "@/lib/meaning/calibrations";
import { activeSearchModel } from "@/lib/search/hybrid";
import { ensureModelIndex } from "@/lib/search/vectors";
import { MEANING_STAGE, meaningStage } from "@/workers/dedup/meaningStage";
import { meaningRuleOf } from "@/workers/dedup/vectorComparer";
import type { Stage } from "@/workers/line/stage";
import { type Backfill, type BackfillOptions, startBackfill } from "./backfill";
import { ModelRegistry } from "./models";
import { embedStage, vectorEnsurer } from "./stage";
import { EMBED_STAGE, type EmbedTarget, EmbedTargets } from "./targets";

export interface MeaningLineOptions {
  /** The configured model's embedder (lib/embed: shipped by default). */
  embedder: Embedder;
  /**
   * An embedder for another stored model, by id, when this process can make one (the shipped
   * and lexical models always; an operator's model when it is still configured): the search
   * model is kept current during a backfill only if it can be embedded with.
   */
  embedderFor?: (model: string) => Embedder | null;
  /**
   * Stage 4's calibration of the configured model (an operator's file,
   * WIREWATCH_MEANING_CALIBRATION); default: the one lib/meaning ships for it, if any.
   */
  calibration?: MeaningCalibration;
  /** The model search must use (WIREWATCH_SEARCH_MODEL); else the newest complete one. */
  searchModel?: string;
  backfill?: Omit<BackfillOptions, "modelIds" | "onComplete">;
  /**
   * Stages the survivors are handed on to after the last of these (extract): from stage 4 when
   * it runs, else from embed.
   */
  handsOn?: readonly string[];
}

export interface MeaningLine {
  /** embed, then meaning (stage 4) when the model has calibrated thresholds; the last hands on. */
  stages: Stage[];
  /** What dedup hands its survivors on to. */
  entry: string;
  /** Stage 4 runs (the model has calibrated thresholds): items in review wait for its verdict. */
  meaningRuns: boolean;
  targets: EmbedTargets;
  /** Starts the backfill walk (after the queue worker runs the stages). */
  start(): void;
  backfill(): Backfill | null;
  stop(): Promise<void>;
}

/**
 * The part of the processing line that gives items meaning (seed 002): embed (every survivor of
 * dedup stages 1–3, by the configured model and, during a backfill, by the model search uses),
 * then stage 4 of the cascade for the items left in review. The configured model is registered
 * here (a new one starts 'backfilling'), its pgvector index made where pgvector exists.
 */
export async function meaningLine(db: Database, options: MeaningLineOptions): Promise<MeaningLine> {
  const log = logger().child({ part: "meaning" });
  const registry = new ModelRegistry(db);
  // The model's stage-4 calibration (lib/meaning, or the operator's file) is stored with it.
  const primary: EmbedTarget = {
    model: await registry.register(withCalibration(options.embedder.info, options.calibration)),
    embedder: options.embedder,
  };
  await ensureModelIndex(db, primary.model.id, primary.model.info.dims);
  const targets = new EmbedTargets(primary);
  const extras = new Map<string, Embedder>();

  // The search model, kept current while the configured one backfills.
  const refresh = async () => {
    const search = await activeSearchModel(db, options.searchModel);
    if (!search || search.model === primary.model.info.model) {
      targets.set(null);
      return;
    }
    const embedder = extras.get(search.model) ?? options.embedderFor?.(search.model) ?? null;
    if (!embedder) {
      log.warn(
        { search: search.model, configured: primary.model.info.model },
        "search model cannot be embedded with in this process: items arriving during the backfill are found by it only after the switch",
      );
      targets.set(null);
      return;
    }
    extras.set(search.model, embedder);
    targets.set({ model: await registry.register(embedder.info), embedder });
  };
  await refresh();

  const stage4 =
    meaningRuleOf(primary.model) !== null
      ? meaningStage(db, {
          target: primary,
          ensureVectors: vectorEnsurer(db, primary),
          handsOn: options.handsOn ?? [],
        })
      : null;
  if (!stage4) {
    log.info(
      { model: primary.model.info.model },
      "stage 4 (meaning) is off: the model has no calibrated threshold; grey-band pairs go to review",
    );
  }
  const embed = embedStage(db, {
    targets,
    registry,
    handsOn: stage4 ? [MEANING_STAGE] : (options.handsOn ?? []),
  });
  let backfill: Backfill | null = null;
  return {
    stages: stage4 ? [embed, stage4] : [embed],
    entry: EMBED_STAGE,
    meaningRuns: stage4 !== null,
    targets,
    start: () => {
      backfill = startBackfill(db, {
        ...options.backfill,
        modelIds: () => targets.ids(),
        onComplete: refresh,
      });
    },
    backfill: () => backfill,
    stop: async () => {
      await backfill?.stop();
      for (const e of extras.values()) if (e !== options.embedder) await e.close();
    },
  };
}
