import type { MeaningAbstention, MeaningDecision } from "@/lib/meaning/compare";
import { judge } from "./judge";
import { DEFAULT_THRESHOLDS, type DedupThresholds } from "./thresholds";

/**
 * One line of the `dedup-pairs` contract. "meaning": stage 4 settled a grey pair, as a
 * duplicate (duplicate true) or as distinct (duplicate false: not a duplicate, no review); its
 * score is then the meaning score (lib/meaning/compare.ts), not stage 3's.
 */
export interface PairVerdict {
  duplicate: boolean;
  stage: "url" | "exact" | "near" | "meaning" | "review" | null;
  score: number;
}

/** What stage 4 needs of a pair stages 1–3 left grey: the texts, stage 3's score, its guard. */
export interface GreyPair {
  a: string;
  b: string;
  /** Stage 3's score, unrounded. */
  near: number;
  guard: "opposed" | "swapped" | null;
}

const round4 = (x: number) => Math.round(x * 1e4) / 1e4;

/**
 * Two texts judged by stages 1–3 as the live stage judges two items with those titles, no
 * summary and no link; for a pair in the grey band ("review"), also what stage 4 reads.
 */
export function judgePair(
  a: string,
  b: string,
  thresholds: DedupThresholds = DEFAULT_THRESHOLDS,
): { verdict: PairVerdict; grey: GreyPair | null } {
  const j = judge({ title: a }, { title: b }, thresholds);
  const verdict: PairVerdict = { duplicate: j.duplicate, stage: j.stage, score: round4(j.score) };
  if (j.stage !== "review") return { verdict, grey: null };
  const guard = j.evidence?.opposed ? "opposed" : j.evidence?.swapped ? "swapped" : null;
  return { verdict, grey: { a, b, near: j.score, guard } };
}

/**
 * Stages 1–3 only. The score is rounded to 4 decimals for the printed line; the decision is
 * made on the unrounded score, so a pair printed as 0.5 may still sit just under a 0.5 threshold.
 */
export function judgeTitles(
  a: string,
  b: string,
  thresholds: DedupThresholds = DEFAULT_THRESHOLDS,
): PairVerdict {
  return judgePair(a, b, thresholds).verdict;
}

/**
 * A grey pair's line once stage 4 has looked at it: settled as duplicate or distinct (stage
 * "meaning", the meaning score), or still grey or unjudged (stages 1–3's "review" line as it was).
 */
export function afterMeaning(
  grey: PairVerdict,
  decision: MeaningDecision | MeaningAbstention,
): PairVerdict {
  if (decision.outcome === "duplicate" || decision.outcome === "distinct") {
    return { duplicate: decision.duplicate, stage: "meaning", score: decision.score };
  }
  return grey;
}
