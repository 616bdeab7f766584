/**
 * Stage 4 of the dedup cascade, the rule alone: a pair stage 3 left in its grey band, compared
 * by the two texts' vectors of one model against that model's calibrated thresholds. Pure: no
 * database, no model call; the caller embeds (lib/embed) and stores. The live stage
 * (workers/dedup, through its MeaningComparer) and `dedup-pairs` both decide here.
 */

/** A model's stage-4 thresholds, as calibrated on labelled pairs (lib/meaning/calibrations.ts). */
export interface MeaningRule {
  /** The model id the thresholds were fitted for ("shipped:use-lite@0.2.0"). */
  model: string;
  /** Languages whose texts this model reads: a side in another language gets no verdict. */
  languages: readonly string[];
  /**
   * The meaning score = cosineWeight · cosine + (1 − cosineWeight) · stage 3's score. 1 is the
   * cosine alone. Both parts are kept in the evidence, so the score stays explainable.
   */
  cosineWeight: number;
  /** Meaning score at or above which the pair is linked, stage "meaning". */
  meaningThreshold: number;
  /** Meaning score below which the pair is not a duplicate and goes to no review. */
  distinctThreshold: number;
}

/** The grey-band pair as stage 3 left it, with each side's vector of one model. */
export interface MeaningPair {
  /** Unit vectors (lib/embed's contract), one per side, of the same model and length. */
  a: ArrayLike<number>;
  b: ArrayLike<number>;
  /** The model that made both vectors (EmbedBatch.model.model). */
  model: string;
  /** Stage 3's pair score (lib/dedup pairScore), in [0, 1]. */
  nearScore: number;
  /** Each side's language ("en", "bn"): see textLanguage. */
  languages: readonly [string, string];
  /**
   * A lexical guard of stage 3 holds the pair back (lib/dedup polarity "opposed" or swaps
   * "swapped"): opposite outcomes or other particulars in one frame. A sentence vector sees
   * "rise" and "fall" as near neighbours, so such a pair is never linked here; it may still be
   * dismissed as distinct.
   */
  guard?: "opposed" | "swapped" | null;
}

/** What stage 4 says about one grey pair, and everything it said it from. */
export interface MeaningEvidence {
  model: string;
  cosine: number;
  near: number;
  cosineWeight: number;
  meaningThreshold: number;
  distinctThreshold: number;
  guard?: "opposed" | "swapped";
}

export type MeaningOutcome =
  /** Linked, stage "meaning". */
  | "duplicate"
  /** Not a duplicate: settled, no review. */
  | "distinct"
  /** Between the thresholds (or held by a guard): still grey, it goes to review. */
  | "grey";

export interface MeaningDecision {
  outcome: MeaningOutcome;
  duplicate: boolean;
  distinct: boolean;
  /** The meaning score, rounded to 4 decimals like dedup-pairs' printed score. */
  score: number;
  /** The threshold the score was held against: meaningThreshold, or distinctThreshold when distinct. */
  threshold: number;
  evidence: MeaningEvidence;
}

/** Why stage 4 gave no verdict: the pair stays in review, as without a model. */
export type MeaningAbstention =
  | { outcome: "unjudged"; reason: "other-model"; detail: string }
  | { outcome: "unjudged"; reason: "language"; detail: string };

export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) {
    throw new RangeError(`vectors of different lengths (${a.length} and ${b.length})`);
  }
  if (a.length === 0) throw new RangeError("empty vectors have no cosine");
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as number;
    const y = b[i] as number;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  if (!Number.isFinite(dot) || !Number.isFinite(na) || !Number.isFinite(nb)) {
    throw new RangeError("a vector holds a number that is not finite");
  }
  // The contract says unit vectors; dividing anyway costs nothing and makes a zero vector (an
  // empty text in some models) a cosine of 0 rather than NaN.
  if (na === 0 || nb === 0) return 0;
  return Math.max(-1, Math.min(1, dot / Math.sqrt(na * nb)));
}

const BENGALI = /\p{Script=Bengali}/u;
const LETTER = /\p{L}/gu;

/**
 * A text's language as the meaning stage needs it: "bn" when at least half of its letters are
 * Bengali script (U+0980–U+09FF), else "en". Decision 025: a Bangla headline quoting "DSEX" or
 * "BRAC Bank" is still Bangla to a model that only reads English.
 */
export function textLanguage(text: string): "bn" | "en" {
  // Letters only: vowel signs are marks and ১২৩ are digits, which Latin text has no share of.
  const letters = text.match(LETTER) ?? [];
  if (letters.length === 0) return "en";
  const bengali = letters.filter((c) => BENGALI.test(c)).length;
  return bengali * 2 >= letters.length ? "bn" : "en";
}

function checkRule(rule: MeaningRule): void {
  const { cosineWeight: w, meaningThreshold: hi, distinctThreshold: lo } = rule;
  if (!(w >= 0 && w <= 1)) throw new RangeError(`cosineWeight ${w} is not within [0, 1]`);
  if (!Number.isFinite(hi) || !Number.isFinite(lo) || lo > hi) {
    throw new RangeError(
      `thresholds of ${rule.model}: distinct ${lo} must be a number at or below meaning ${hi}`,
    );
  }
}

const round4 = (x: number) => Math.round(x * 1e4) / 1e4;

/**
 * The stage-4 rule for one grey pair: score ≥ meaningThreshold → duplicate (unless a lexical
 * guard holds it: then grey); score < distinctThreshold → distinct; between → grey. No verdict
 * (an abstention) when the vectors are of another model than the rule's, or a side's language is
 * one the model does not read. The decision is made on the unrounded score.
 */
export function compareMeaning(
  pair: MeaningPair,
  rule: MeaningRule,
): MeaningDecision | MeaningAbstention {
  checkRule(rule);
  if (pair.model !== rule.model) {
    return {
      outcome: "unjudged",
      reason: "other-model",
      detail: `vectors by ${pair.model}, thresholds for ${rule.model}`,
    };
  }
  const foreign = pair.languages.find((l) => !rule.languages.includes(l));
  if (foreign !== undefined) {
    return {
      outcome: "unjudged",
      reason: "language",
      detail: `${rule.model} does not read ${foreign} (it reads ${rule.languages.join(", ")})`,
    };
  }
  if (!(pair.nearScore >= 0 && pair.nearScore <= 1)) {
    throw new RangeError(`stage 3's score ${pair.nearScore} is not within [0, 1]`);
  }
  const c = cosine(pair.a, pair.b);
  const score = rule.cosineWeight * c + (1 - rule.cosineWeight) * pair.nearScore;
  const guard = pair.guard ?? undefined;
  const evidence: MeaningEvidence = {
    model: rule.model,
    cosine: round4(c),
    near: round4(pair.nearScore),
    cosineWeight: rule.cosineWeight,
    meaningThreshold: rule.meaningThreshold,
    distinctThreshold: rule.distinctThreshold,
    ...(guard ? { guard } : {}),
  };
  const outcome: MeaningOutcome =
    score < rule.distinctThreshold
      ? "distinct"
      : score >= rule.meaningThreshold && guard === undefined
        ? "duplicate"
        : "grey";
  return {
    outcome,
    duplicate: outcome === "duplicate",
    distinct: outcome === "distinct",
    score: round4(score),
    threshold: outcome === "distinct" ? rule.distinctThreshold : rule.meaningThreshold,
    evidence,
  };
}
