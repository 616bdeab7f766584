/**
 * How a model's stage-4 thresholds are fitted on labelled grey-band pairs (bench meaning, bench
 * msrp; docs/decisions/025, "Stage 4 calibration"). Pure: the caller brings the pairs, each with
 * its label, the cosine of its two vectors and stage 3's score.
 *
 * The rule reads the meaning score as stage 3's score is read, as a probability: a logistic
 * regression of the label on the score (score = w·cosine + (1 − w)·stage 3's score), fitted on
 * the grey pairs, gives P(duplicate | score); meaningThreshold is the score where it reaches
 * `linkProbability` (stage 3's near.duplicate, 0.5: "more likely than not"), distinctThreshold
 * where it falls to `distinctProbability` (stage 3's near.review, 0.4: below it stage 3 asks
 * no one either). A model whose score does not tell the grey band's labels apart (the slope's z
 * below `minZ`, 2: about 1 in 40 for a slope that is really 0) gets no thresholds at all: its
 * crossings would be wherever the noise put them, and its grey pairs stay in review.
 *
 * Pairs a lexical guard holds back (polarity, swaps) are left out of the fit and out of the
 * rule (compare.ts keeps them grey): they are grey for a reason a sentence vector does not see.
 */

export interface CalibrationPair {
  label: boolean;
  cosine: number;
  /** Stage 3's score. */
  near: number;
  guarded: boolean;
}

export interface FitOptions {
  /** Cosine weights tried, the rest being stage 3's score; the best log-likelihood wins. */
  cosineWeights?: readonly number[];
  linkProbability?: number;
  distinctProbability?: number;
  minZ?: number;
  /** Fewer unguarded grey pairs than this: no thresholds (nothing to fit on). */
  minPairs?: number;
}

export const FIT_DEFAULTS = {
  cosineWeights: [1, 0.75, 0.5, 0.25],
  linkProbability: 0.5,
  distinctProbability: 0.4,
  minZ: 2,
  minPairs: 30,
} as const satisfies Required<FitOptions>;

export interface LogisticFit {
  cosineWeight: number;
  /** P(duplicate) = 1 / (1 + e^−(intercept + slope · score)). */
  intercept: number;
  slope: number;
  /** slope / its standard error (the inverse Fisher information's diagonal). */
  z: number;
  logLikelihood: number;
}

export interface FittedRule {
  /** Null: the score does not separate the labels (see `reason`); no stage-4 verdict. */
  thresholds: {
    cosineWeight: number;
    meaningThreshold: number;
    distinctThreshold: number;
  } | null;
  reason: string;
  /** The chosen weight's fit, and every weight's (for the record). */
  fit: LogisticFit | null;
  fits: LogisticFit[];
  /** Unguarded grey pairs fitted on, and how many of them are labelled 1. */
  pairs: number;
  positives: number;
}

/** Newton's method for a one-feature logistic regression; a tiny ridge keeps it finite. */
export function fitLogistic(xs: readonly number[], ys: readonly boolean[]) {
  let a = 0;
  let b = 0;
  const ridge = 1e-6;
  let info = { aa: 0, ab: 0, bb: 0 };
  let ll = 0;
  for (let iter = 0; iter < 100; iter++) {
    let ga = 0;
    let gb = 0;
    info = { aa: ridge, ab: 0, bb: ridge };
    ll = 0;
    for (let i = 0; i < xs.length; i++) {
      const x = xs[i] as number;
      const z = a + b * x;
      const p = 1 / (1 + Math.exp(-z));
      const y = ys[i] ? 1 : 0;
      ga += p - y;
      gb += (p - y) * x;
      const s = p * (1 - p);
      info.aa += s;
      info.ab += s * x;
      info.bb += s * x * x;
      ll += y ? Math.log(Math.max(p, 1e-300)) : Math.log(Math.max(1 - p, 1e-300));
    }
    const det = info.aa * info.bb - info.ab * info.ab;
    const da = (info.bb * ga - info.ab * gb) / det;
    const db = (info.aa * gb - info.ab * ga) / det;
    a -= da;
    b -= db;
    if (Math.abs(da) + Math.abs(db) < 1e-10) break;
  }
  const det = info.aa * info.bb - info.ab * info.ab;
  const se = Math.sqrt(info.aa / det);
  return { intercept: a, slope: b, z: se > 0 ? b / se : 0, logLikelihood: ll };
}

const logit = (p: number) => Math.log(p / (1 - p));
const round3 = (x: number) => Math.round(x * 1e3) / 1e3;

export function meaningScore(p: { cosine: number; near: number }, cosineWeight: number): number {
  return cosineWeight * p.cosine + (1 - cosineWeight) * p.near;
}

/** Fits a model's stage-4 thresholds on labelled grey pairs (see the module's comment). */
export function fitMeaningRule(pairs: readonly CalibrationPair[], options: FitOptions = {}) {
  const o = { ...FIT_DEFAULTS, ...options };
  if (!(o.distinctProbability < o.linkProbability)) {
    throw new RangeError("distinctProbability must be below linkProbability");
  }
  const usable = pairs.filter((p) => !p.guarded);
  const positives = usable.filter((p) => p.label).length;
  const base = { pairs: usable.length, positives };
  if (usable.length < o.minPairs || positives === 0 || positives === usable.length) {
    return {
      ...base,
      thresholds: null,
      fit: null,
      fits: [],
      reason: `${usable.length} unguarded grey pairs (${positives} labelled 1): too few to fit on`,
    } satisfies FittedRule;
  }
  const ys = usable.map((p) => p.label);
  const fits: LogisticFit[] = o.cosineWeights.map((w) => ({
    cosineWeight: w,
    ...fitLogistic(
      usable.map((p) => meaningScore(p, w)),
      ys,
    ),
  }));
  // The best likelihood; a tie goes to the larger cosine weight (the simpler reading).
  const fit = fits.reduce((best, f) =>
    f.logLikelihood > best.logLikelihood + 1e-9 ||
    (Math.abs(f.logLikelihood - best.logLikelihood) <= 1e-9 && f.cosineWeight > best.cosineWeight)
      ? f
      : best,
  );
  if (!(fit.z >= o.minZ)) {
    return {
      ...base,
      thresholds: null,
      fit,
      fits,
      reason:
        `the score does not separate the grey band's labels: slope ${fit.slope.toFixed(2)}, ` +
        `z ${fit.z.toFixed(2)} < ${o.minZ} (cosine weight ${fit.cosineWeight})`,
    } satisfies FittedRule;
  }
  const at = (p: number) => (logit(p) - fit.intercept) / fit.slope;
  return {
    ...base,
    thresholds: {
      cosineWeight: fit.cosineWeight,
      meaningThreshold: round3(at(o.linkProbability)),
      distinctThreshold: round3(at(o.distinctProbability)),
    },
    fit,
    fits,
    reason:
      `P(duplicate) reaches ${o.linkProbability} at score ${at(o.linkProbability).toFixed(3)} ` +
      `and falls to ${o.distinctProbability} at ${at(o.distinctProbability).toFixed(3)} ` +
      `(slope ${fit.slope.toFixed(2)}, z ${fit.z.toFixed(2)}, cosine weight ${fit.cosineWeight})`,
  } satisfies FittedRule;
}
