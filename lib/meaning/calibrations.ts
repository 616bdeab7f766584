import { z } from "zod";
import type { ModelInfo } from "@/lib/embed/types";
import type { MeaningRule } from "./compare";

/**
 * Stage 4's thresholds per model id, with how they were fitted. Written from the output of
 * `npm run -s bench -- meaning` (lib/meaning/fit.ts's rule on MSRP's grey band, decision 025
 * "Stage 4 calibration"); the live stage stores them in embedding_models when it registers the
 * model (withCalibration), `dedup-pairs` reads them here.
 *
 * A model with no entry has no calibration: its grey pairs stay in review (an operator's ONNX
 * or HTTP model until it is measured with `npm run -s bench -- meaning --model <id>
 * --write-calibration FILE`). An entry whose `rule` is null was measured and gives no verdict.
 */

/** What a calibration says about its fit: enough to judge it, and to repeat it. */
export const calibrationRecordSchema = z
  .object({
    /** The labelled pairs: their file and how many. */
    corpus: z.string(),
    pairs: z.number().int().nonnegative(),
    /** Stage 1–3 as the fit saw them (the shipped defaults: SCORE_WEIGHTS, DEFAULT_THRESHOLDS). */
    stages: z.string(),
    greyPairs: z.number().int().nonnegative(),
    /** Grey pairs no lexical guard holds: what the rule is fitted on and applies to. */
    unguardedGreyPairs: z.number().int().nonnegative(),
    unguardedPositives: z.number().int().nonnegative(),
    method: z.string(),
    /** Why these thresholds, or why none. */
    reason: z.string(),
    fit: z
      .object({
        cosineWeight: z.number(),
        intercept: z.number(),
        slope: z.number(),
        z: z.number(),
      })
      .nullable(),
    crossValidation: z.object({
      folds: z.number().int().positive(),
      seed: z.number().int(),
      /** Folds whose training part gave the model thresholds. */
      foldsWithThresholds: z.number().int().nonnegative(),
      /** Mean ± sd over the held-out folds, stage 4 off and on. */
      off: z.object({ accuracy: z.string(), f1: z.string() }),
      on: z.object({ accuracy: z.string(), f1: z.string() }),
      /** Grey pairs per held-out fold stage 4 linked, dismissed, left in review (sums). */
      linked: z.number().int().nonnegative(),
      dismissed: z.number().int().nonnegative(),
      dismissedPositives: z.number().int().nonnegative(),
      leftInReview: z.number().int().nonnegative(),
    }),
    /** MSRP's held-out test pairs, measured once with the thresholds above (absent: not run). */
    test: z
      .object({
        corpus: z.string(),
        pairs: z.number().int().positive(),
        off: z.object({ accuracy: z.number(), f1: z.number() }),
        on: z.object({ accuracy: z.number(), f1: z.number() }),
      })
      .optional(),
    /** Retrieval recall@1 of a Bangla query for its English translation (hand-written pairs). */
    crossLingualRecallAt1: z.number().optional(),
    measuredAt: z.string(),
    command: z.string(),
  })
  .strict();

export type CalibrationRecord = z.infer<typeof calibrationRecordSchema>;

export const meaningCalibrationSchema = z
  .object({
    model: z.string().min(1),
    languages: z.array(z.string()).min(1),
    /** Null: measured, and it gives no stage-4 verdict (record.reason says why). */
    rule: z
      .object({
        cosineWeight: z.number().min(0).max(1),
        meaningThreshold: z.number(),
        distinctThreshold: z.number(),
      })
      .refine((r) => r.distinctThreshold <= r.meaningThreshold, {
        message: "distinctThreshold must not be above meaningThreshold",
      })
      .nullable(),
    record: calibrationRecordSchema,
  })
  .strict();

export type MeaningCalibration = z.infer<typeof meaningCalibrationSchema>;

/** Reads a calibration file (`bench meaning --write-calibration FILE`), refusing a wrong one. */
export function parseCalibration(json: string, file = "calibration"): MeaningCalibration {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (err) {
    throw new Error(`${file}: not JSON (${(err as Error).message})`);
  }
  const parsed = meaningCalibrationSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(
      `${file}: not a meaning calibration: ${issue?.path.join(".") || "(top)"}: ${issue?.message}`,
    );
  }
  return parsed.data;
}

/**
 * USE-lite (shipped:use-lite@0.2.0, lib/embed/shipped.ts): measured, no verdict. In the grey
 * band the shipped stages 1–3 leave on MSRP (417 pairs, 239 unguarded, 95 of those labelled 1),
 * its cosine tells the labels apart no better than chance (AUC 0.549; the logistic slope's z is
 * 0.6–1.7 in every fold, 0.9 on all of them), alone or blended with stage 3's score: any
 * threshold fitted there would sit wherever the noise put it. Its grey pairs stay in review.
 */
const SHIPPED_USE_LITE: MeaningCalibration = {
  model: "shipped:use-lite@0.2.0",
  languages: ["en"],
  rule: null,
  record: {
    corpus: "MSRP msr_paraphrase_train.txt",
    pairs: 4076,
    stages: "shipped stages 1-3 (DEFAULT_THRESHOLDS, SCORE_WEIGHTS fitted on all of MSRP train)",
    greyPairs: 417,
    unguardedGreyPairs: 239,
    unguardedPositives: 95,
    method:
      "logistic regression of the label on w·cosine + (1-w)·stage-3 score over the unguarded " +
      "grey pairs, w in {1, 0.75, 0.5, 0.25} by likelihood; thresholds where P reaches 0.5 " +
      "(meaning) and 0.4 (distinct); none unless the slope's z >= 2",
    reason:
      "the score does not separate the grey band's labels: slope 4.27, z 1.20 < 2 (cosine " +
      "weight 0.25; the cosine alone: slope 1.02, z 0.91)",
    fit: { cosineWeight: 0.25, intercept: -2.6546, slope: 4.2687, z: 1.2016 },
    crossValidation: {
      folds: 10,
      seed: 13,
      foldsWithThresholds: 0,
      off: { accuracy: "0.746 ± 0.020", f1: "0.818 ± 0.018" },
      on: { accuracy: "0.746 ± 0.020", f1: "0.818 ± 0.018" },
      linked: 0,
      dismissed: 0,
      dismissedPositives: 0,
      leftInReview: 417,
    },
    crossLingualRecallAt1: 0.025,
    measuredAt: "2026-12-01",
    command: "npm run -s bench -- meaning",
  },
};

/** The calibrations shipped with the code, by model id. */
export const CALIBRATIONS: Readonly<Record<string, MeaningCalibration>> = Object.freeze({
  [SHIPPED_USE_LITE.model]: SHIPPED_USE_LITE,
});

/** The lexical fallback never gives a stage-4 verdict: it compares spelling, not meaning. */
export const LEXICAL_NEVER =
  "the lexical fallback compares spelling, not meaning: it gives no stage-4 verdict by design";

export function calibrationFor(model: string): MeaningCalibration | undefined {
  return CALIBRATIONS[model];
}

/** The rule compare.ts applies, or null when the calibration gives no verdict. */
export function ruleOf(c: MeaningCalibration | undefined): MeaningRule | null {
  if (!c?.rule) return null;
  return { model: c.model, languages: c.languages, ...c.rule };
}

/**
 * The ModelInfo to register (embedding_models): the shipped calibration's thresholds and record
 * on it. A model with no calibration, or one that gives no verdict, gets none: its grey pairs
 * stay in review. Lexical models never get thresholds.
 */
export function withCalibration(info: ModelInfo, c = calibrationFor(info.model)): ModelInfo {
  const { meaningThreshold: _m, distinctThreshold: _d, calibration: _c, ...rest } = info;
  if (info.kind === "lexical") return { ...rest, calibration: { reason: LEXICAL_NEVER } };
  if (!c) return rest;
  if (c.model !== info.model) {
    throw new Error(`a calibration of ${c.model} cannot be stored for ${info.model}`);
  }
  const calibration = { ...c.record, ...(c.rule ? { cosineWeight: c.rule.cosineWeight } : {}) };
  if (!c.rule) return { ...rest, calibration };
  return {
    ...rest,
    meaningThreshold: c.rule.meaningThreshold,
    distinctThreshold: c.rule.distinctThreshold,
    calibration,
  };
}
