import { judge } from "./judge";
import { DEFAULT_THRESHOLDS, type DedupThresholds } from "./thresholds";

/** One line of the `dedup-pairs` contract. "meaning" is the stage issue 14 adds; never made here yet. */
export interface PairVerdict {
  duplicate: boolean;
  stage: "url" | "exact" | "near" | "meaning" | "review" | null;
  score: number;
}

/**
 * Two texts judged as the live stage judges two items with those titles, no summary and no
 * link. The score is rounded to 4 decimals for the printed line; the decision is made on the
 * unrounded score, so a pair printed as 0.5 may still sit just under a 0.5 threshold.
 */
export function judgeTitles(
  a: string,
  b: string,
  thresholds: DedupThresholds = DEFAULT_THRESHOLDS,
): PairVerdict {
  const j = judge({ title: a }, { title: b }, thresholds);
  return { duplicate: j.duplicate, stage: j.stage, score: Math.round(j.score * 1e4) / 1e4 };
}
