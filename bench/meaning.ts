/**
 * Stage 4's quality, measured per model:
 *
 *   npm run -s bench -- meaning [--models shipped,lexical] [--model ID] [--folds 10] [--seed 13]
 *     [--file PATH] [--test-file PATH] [--sim-seed 2026] [--sim-count 300] [--limit N] [--json]
 *     [--write-calibration FILE]
 *
 * (a) Retrieval: recall@1 and recall@10 of each query's own target among all the set's targets,
 *     ranked by cosine (a tie counts against the query), on MSRP's positive pairs (English
 *     paraphrase), on Bangla↔Bangla paraphrase and Bangla→English translation pairs generated
 *     from the simulator's corpus (bench/meaningPairs.ts, seeded) and on hand-written ones
 *     (bench/data/*.tsv, not from the simulator).
 * (b) Pair AUC on every MSRP pair: the cosine as a paraphrase score, and its best accuracy.
 * (c) Stage 4's calibration (lib/meaning/fit.ts): the MSRP pairs the shipped stages 1–3 leave in
 *     review are split into k folds; the rule is fitted on k − 1 folds' grey pairs and measured
 *     on the held-out fold (every pair of it: accuracy / F1 with stage 4 off and on, and what it
 *     did with the grey ones). Then it is fitted on all of them: the calibration that ships
 *     (lib/meaning/calibrations.ts; --write-calibration writes it for an operator's model). With
 *     --test-file (MSRP's held-out test part, same format) that calibration is measured once
 *     there. The shipped SCORE_WEIGHTS were fitted on all of MSRP's training part, so stage 3
 *     is in-sample on it here; bench msrp cross-validates stages 3 and 4 together.
 *
 * --model ID adds a model (an operator's: whatever lib/embed's registry accepts). The lexical
 * fallback is measured in (a) and (b) only as a baseline: it never gives a stage-4 verdict.
 * Embedding is the cost: USE-lite does 25–75 texts/s here, ~9,000 texts; --limit keeps a run short.
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { DEFAULT_THRESHOLDS, judge } from "@/lib/dedup";
import { cosine } from "@/lib/embed";
import { LEXICAL_NEVER, type MeaningCalibration } from "@/lib/meaning/calibrations";
import { compareMeaning, type MeaningRule, textLanguage } from "@/lib/meaning/compare";
import { type CalibrationPair, fitMeaningRule } from "@/lib/meaning/fit";
import { embedAll, vectorLookup } from "./meaningModels";
import { handWrittenSets, type RetrievalSet, simulatorSets } from "./meaningPairs";
import { type Metrics, type MsrpPair, metrics, parseMsrp, shuffled } from "./msrp";

const DEFAULT_FILE = path.resolve(
  import.meta.dirname,
  "../../shared/corpora/msrp/msr_paraphrase_train.txt",
);
/** A model "can do" cross-lingual retrieval when it finds the translation first for half the queries. */
const CROSS_LINGUAL_RECALL = 0.5;

function usageError(message: string): Error {
  const err = new Error(message);
  err.name = "UsageError";
  return err;
}

export interface Recall {
  pairs: number;
  recallAt1: number;
  recallAt10: number;
}

/**
 * recall@1 and @10 of each query's own target among every target, by cosine. A target with the
 * same text as the query's own is skipped (the same sentence twice in a corpus is not a miss);
 * any other target scoring as high as the own one ranks before it, so a model that gives many
 * texts one vector (USE-lite on Bengali: every word its unknown piece) gets no credit for ties.
 */
export function recall(
  pairs: readonly { query: string; target: string }[],
  vectorOf: (text: string) => Float32Array,
): Recall {
  const qs = pairs.map((p) => vectorOf(p.query));
  const ts = pairs.map((p) => vectorOf(p.target));
  let at1 = 0;
  let at10 = 0;
  qs.forEach((q, i) => {
    const own = cosine(q, ts[i] as Float32Array);
    let before = 0;
    for (let j = 0; j < ts.length && before < 10; j++) {
      if (j === i || pairs[j]?.target === pairs[i]?.target) continue;
      if (cosine(q, ts[j] as Float32Array) >= own) before++;
    }
    if (before < 1) at1++;
    if (before < 10) at10++;
  });
  const n = pairs.length;
  return { pairs: n, recallAt1: n ? at1 / n : 0, recallAt10: n ? at10 / n : 0 };
}

/** ROC AUC of a score for the labels (ties count half), and the best single cut's accuracy. */
export function pairAuc(rows: readonly { score: number; label: boolean }[]): {
  auc: number;
  bestAccuracy: number;
} {
  const sorted = [...rows].sort((a, b) => a.score - b.score);
  const positives = rows.filter((r) => r.label).length;
  const negatives = rows.length - positives;
  // Mann-Whitney: the positives' mean rank, ties sharing theirs.
  let rankSum = 0;
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j < sorted.length && sorted[j]?.score === sorted[i]?.score) j++;
    const rank = (i + 1 + j) / 2;
    for (let k = i; k < j; k++) if (sorted[k]?.label) rankSum += rank;
    i = j;
  }
  const auc =
    positives && negatives
      ? (rankSum - (positives * (positives + 1)) / 2) / (positives * negatives)
      : 0;
  // Every cut between distinct scores: above it "paraphrase".
  let best = Math.max(positives, negatives);
  let tpAbove = positives;
  let fpAbove = negatives;
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j < sorted.length && sorted[j]?.score === sorted[i]?.score) j++;
    for (let k = i; k < j; k++) {
      if (sorted[k]?.label) tpAbove--;
      else fpAbove--;
    }
    best = Math.max(best, tpAbove + (negatives - fpAbove));
    i = j;
  }
  return { auc, bestAccuracy: rows.length ? best / rows.length : 0 };
}

/** An MSRP pair as the shipped stages 1–3 judge it (dedup-pairs' rule). */
interface Judged extends MsrpPair {
  duplicate: boolean;
  grey: boolean;
  near: number;
  guard: "opposed" | "swapped" | null;
}

export function judgeMsrp(p: MsrpPair): Judged {
  const j = judge({ title: p.a }, { title: p.b }, DEFAULT_THRESHOLDS);
  const guard = j.evidence?.opposed ? "opposed" : j.evidence?.swapped ? "swapped" : null;
  return {
    ...p,
    duplicate: j.duplicate,
    grey: j.stage === "review",
    near: j.score,
    guard: j.stage === "review" ? guard : null,
  };
}

interface GreyOutcome {
  linked: number;
  dismissed: number;
  dismissedPositives: number;
  leftInReview: number;
}

/** A set of judged pairs with stage 4 off and on (a rule, or none), and what it did to the grey. */
export function withStageFour(
  pairs: readonly Judged[],
  rule: MeaningRule | null,
  vectorOf: (text: string) => Float32Array,
): { off: Metrics; on: Metrics; grey: GreyOutcome } {
  const grey: GreyOutcome = { linked: 0, dismissed: 0, dismissedPositives: 0, leftInReview: 0 };
  const on = pairs.map((p) => {
    if (!p.grey) return { label: p.label, predicted: p.duplicate };
    const d = rule
      ? compareMeaning(
          {
            a: vectorOf(p.a),
            b: vectorOf(p.b),
            model: rule.model,
            nearScore: p.near,
            languages: [textLanguage(p.a), textLanguage(p.b)],
            guard: p.guard,
          },
          rule,
        )
      : null;
    if (d?.outcome === "duplicate") grey.linked++;
    else if (d?.outcome === "distinct") {
      grey.dismissed++;
      if (p.label) grey.dismissedPositives++;
    } else grey.leftInReview++;
    return { label: p.label, predicted: d?.outcome === "duplicate" };
  });
  return {
    off: metrics(pairs.map((p) => ({ label: p.label, predicted: p.duplicate }))),
    on: metrics(on),
    grey,
  };
}

const mean = (xs: number[]) => (xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : 0);
const sd = (xs: number[]) => {
  const m = mean(xs);
  return Math.sqrt(xs.reduce((s, x) => s + (x - m) ** 2, 0) / Math.max(1, xs.length - 1));
};
const f3 = (x: number) => x.toFixed(3);
const pm = (xs: number[]) => `${f3(mean(xs))} ± ${f3(sd(xs))}`;

function calibrationPairs(
  grey: readonly Judged[],
  vectorOf: (t: string) => Float32Array,
): CalibrationPair[] {
  return grey.map((p) => ({
    label: p.label,
    cosine: cosine(vectorOf(p.a), vectorOf(p.b)),
    near: p.near,
    guarded: p.guard !== null,
  }));
}

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      models: { type: "string", default: "shipped,lexical" },
      model: { type: "string" },
      folds: { type: "string", default: "10" },
      seed: { type: "string", default: "13" },
      file: { type: "string", default: DEFAULT_FILE },
      "test-file": { type: "string" },
      "sim-seed": { type: "string", default: "2026" },
      "sim-count": { type: "string", default: "300" },
      limit: { type: "string" },
      json: { type: "boolean", default: false },
      "write-calibration": { type: "string" },
    },
    strict: true,
  });
  const int = (name: string, v: string | undefined, min: number) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min) throw usageError(`--${name} must be an integer ≥ ${min}`);
    return n;
  };
  const k = int("folds", values.folds, 2);
  const seed = int("seed", values.seed, Number.MIN_SAFE_INTEGER);
  const simSeed = int("sim-seed", values["sim-seed"], Number.MIN_SAFE_INTEGER);
  const simCount = int("sim-count", values["sim-count"], 10);
  const limit = values.limit === undefined ? undefined : int("limit", values.limit, 2 * k);
  const modelIds = [
    ...values.models
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean),
    ...(values.model ? [values.model] : []),
  ];
  if (modelIds.length === 0) throw usageError("--models lists no model");
  const readMsrp = (file: string, flag: string) => {
    try {
      return parseMsrp(readFileSync(file, "utf8"));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code) {
        throw usageError(`cannot read the MSRP file ${file} (${flag} PATH)`);
      }
      throw err;
    }
  };
  const all = shuffled(readMsrp(values.file, "--file"), seed);
  const train = limit === undefined ? all : all.slice(0, limit);
  const test = values["test-file"] ? readMsrp(values["test-file"], "--test-file") : null;
  const log = (s: string) => {
    if (!values.json) console.log(s);
  };

  const sets: RetrievalSet[] = [
    {
      name: "msrp",
      label: "MSRP positive pairs: English news sentence vs its paraphrase",
      languages: "en-en",
      source: "msrp",
      pairs: train.filter((p) => p.label).map((p) => ({ query: p.a, target: p.b })),
    },
    ...simulatorSets(simSeed, simCount),
    ...handWrittenSets(),
  ];
  const judged = train.map(judgeMsrp);
  const grey = judged.filter((p) => p.grey);
  const folds = Array.from({ length: k }, (_, f) => judged.filter((_, i) => i % k === f));
  const testJudged = test?.map(judgeMsrp) ?? [];

  const texts = new Set<string>();
  for (const p of train) texts.add(p.a).add(p.b);
  for (const s of sets) for (const p of s.pairs) texts.add(p.query).add(p.target);
  for (const p of testJudged) if (p.grey) texts.add(p.a).add(p.b);

  console.error(
    `meaning: ${train.length} MSRP pairs (${grey.length} grey), ${sets.length} retrieval sets, ` +
      `${texts.size} texts, models ${modelIds.join(", ")}`,
  );
  const share = (ps: readonly MsrpPair[]) =>
    f3(ps.filter((p) => p.label).length / Math.max(1, ps.length));
  const unguarded = grey.filter((p) => p.guard === null);
  const guarded = grey.filter((p) => p.guard !== null);
  log("retrieval sets (recall@k: the query's own target among all the set's targets, by cosine):");
  for (const s of sets)
    log(`  ${s.name.padEnd(11)} ${String(s.pairs.length).padStart(5)}  ${s.label}`);
  log(
    `MSRP for (b) and (c): ${train.length} training pairs (${share(train)} labelled 1), ` +
      `${grey.length} in stage 3's grey band (shipped stages 1–3): ${unguarded.length} unguarded ` +
      `(${share(unguarded)} labelled 1), ${guarded.length} held by a polarity or swap guard ` +
      `(${share(guarded)} labelled 1)`,
  );

  const results: Record<string, unknown>[] = [];
  let toWrite: MeaningCalibration | null = null;
  for (const id of modelIds) {
    const embedded = await embedAll(id, texts, "meaning");
    const { model } = embedded;
    const vectorOf = vectorLookup(embedded);
    const rate = texts.size / Math.max(embedded.seconds, 1e-9);
    log(
      `\n${model.model} (${model.kind}, ${model.languages.join("+")}${model.crossLingual ? ", cross-lingual" : ""}): ` +
        `${texts.size} texts in ${embedded.seconds.toFixed(1)} s (${rate.toFixed(0)}/s)`,
    );
    log("  (a) retrieval      r@1    r@10   pairs");
    const retrieval: Record<string, Recall> = {};
    for (const s of sets) {
      const r = recall(s.pairs, vectorOf);
      retrieval[s.name] = r;
      log(`      ${s.name.padEnd(12)} ${f3(r.recallAt1)}  ${f3(r.recallAt10)}  ${r.pairs}`);
    }
    const crossLingual = retrieval["hand-bn-en"]?.recallAt1 ?? 0;
    const canCross = crossLingual >= CROSS_LINGUAL_RECALL;
    log(
      `      cross-lingual (Bangla → English, hand-written): ${canCross ? "yes" : "NO"} ` +
        `(r@1 ${f3(crossLingual)}; "yes" from ${CROSS_LINGUAL_RECALL}; the model says ` +
        `crossLingual: ${model.crossLingual})`,
    );
    const aucAll = pairAuc(
      judged.map((p) => ({ label: p.label, score: cosine(vectorOf(p.a), vectorOf(p.b)) })),
    );
    const aucGrey = pairAuc(
      unguarded.map((p) => ({ label: p.label, score: cosine(vectorOf(p.a), vectorOf(p.b)) })),
    );
    const labelledOne = judged.filter((p) => p.label).length / Math.max(1, judged.length);
    log(
      `  (b) MSRP pair AUC ${f3(aucAll.auc)} (best single cut: accuracy ${f3(aucAll.bestAccuracy)}; ` +
        `all "paraphrase": ${f3(labelledOne)}); in the unguarded grey band: AUC ${f3(aucGrey.auc)}`,
    );
    const result: Record<string, unknown> = {
      model: model.model,
      kind: model.kind,
      languages: model.languages,
      crossLingual: { declared: model.crossLingual, measured: canCross, recallAt1: crossLingual },
      textsPerSecond: rate,
      retrieval,
      auc: { all: aucAll, unguardedGrey: aucGrey },
    };

    // (c) Stage 4: CV over the grey band, then the fit on all of it.
    const calibrated = model.kind === "meaning";
    log(
      calibrated
        ? `  (c) stage 4 on MSRP's grey band, ${k} folds (seed ${seed}): fitted on ${k - 1}, measured on the held-out one`
        : `  (c) stage 4: none (${LEXICAL_NEVER}); the fit below is for comparison only`,
    );
    const foldRows = folds.map((held, f) => {
      const trainGrey = folds
        .filter((_, g) => g !== f)
        .flatMap((fold) => fold.filter((p) => p.grey));
      const fitted = fitMeaningRule(calibrationPairs(trainGrey, vectorOf));
      const rule: MeaningRule | null = fitted.thresholds
        ? { model: model.model, languages: model.languages, ...fitted.thresholds }
        : null;
      const m = withStageFour(held, calibrated ? rule : null, vectorOf);
      const what = fitted.thresholds
        ? `weight ${fitted.thresholds.cosineWeight}, meaning ≥ ${fitted.thresholds.meaningThreshold}, ` +
          `distinct < ${fitted.thresholds.distinctThreshold} (z ${fitted.fit?.z.toFixed(2)})`
        : `no thresholds (${fitted.fit ? `z ${fitted.fit.z.toFixed(2)}` : fitted.reason})`;
      log(
        `      fold ${String(f + 1).padStart(2)}  ${what}; off acc ${f3(m.off.accuracy)} F1 ${f3(m.off.f1)}, ` +
          `on acc ${f3(m.on.accuracy)} F1 ${f3(m.on.f1)}; grey linked ${m.grey.linked}, ` +
          `dismissed ${m.grey.dismissed} (${m.grey.dismissedPositives} labelled 1), left ${m.grey.leftInReview}`,
      );
      return { fitted, ...m };
    });
    const sum = (key: keyof GreyOutcome) => foldRows.reduce((s, r) => s + r.grey[key], 0);
    const cv = {
      folds: k,
      seed,
      foldsWithThresholds: foldRows.filter((r) => r.fitted.thresholds).length,
      off: {
        accuracy: pm(foldRows.map((r) => r.off.accuracy)),
        f1: pm(foldRows.map((r) => r.off.f1)),
      },
      on: {
        accuracy: pm(foldRows.map((r) => r.on.accuracy)),
        f1: pm(foldRows.map((r) => r.on.f1)),
      },
      linked: sum("linked"),
      dismissed: sum("dismissed"),
      dismissedPositives: sum("dismissedPositives"),
      leftInReview: sum("leftInReview"),
    };
    const withT = foldRows.flatMap((r) => (r.fitted.thresholds ? [r.fitted.thresholds] : []));
    log(
      `      mean ± sd  off acc ${cv.off.accuracy} F1 ${cv.off.f1}; on acc ${cv.on.accuracy} F1 ${cv.on.f1}; ` +
        `${cv.foldsWithThresholds} of ${k} folds fitted thresholds` +
        (withT.length
          ? ` (meaning ${pm(withT.map((t) => t.meaningThreshold))}, distinct ${pm(withT.map((t) => t.distinctThreshold))})`
          : ""),
    );
    const final = fitMeaningRule(calibrationPairs(grey, vectorOf));
    log(`      fitted on all ${grey.length} grey pairs: ${final.reason}`);
    // Where each fit's probability crosses 0.5 and 0.4, gate or not: what a fit on noise would say.
    const crossing = (f: (typeof final.fits)[number], p: number) =>
      ((Math.log(p / (1 - p)) - f.intercept) / f.slope).toFixed(3);
    for (const f of final.fits) {
      log(
        `        cosine weight ${f.cosineWeight}: slope ${f.slope.toFixed(2)}, z ${f.z.toFixed(2)}, ` +
          `log-likelihood ${f.logLikelihood.toFixed(2)}; P 0.5 at ${crossing(f, 0.5)}, 0.4 at ${crossing(f, 0.4)}`,
      );
    }
    const finalRule: MeaningRule | null =
      calibrated && final.thresholds
        ? { model: model.model, languages: model.languages, ...final.thresholds }
        : null;
    let testRecord: MeaningCalibration["record"]["test"];
    if (test) {
      const m = withStageFour(testJudged, finalRule, vectorOf);
      testRecord = {
        corpus: path.basename(values["test-file"] as string),
        pairs: testJudged.length,
        off: { accuracy: m.off.accuracy, f1: m.off.f1 },
        on: { accuracy: m.on.accuracy, f1: m.on.f1 },
      };
      log(
        `      MSRP test (${testJudged.length} pairs, once): off acc ${f3(m.off.accuracy)} F1 ${f3(m.off.f1)}, ` +
          `on acc ${f3(m.on.accuracy)} F1 ${f3(m.on.f1)}; grey linked ${m.grey.linked}, dismissed ${m.grey.dismissed}`,
      );
    } else {
      log("      MSRP test: not measured (--test-file PATH: MSRP's held-out test part)");
    }
    const calibration: MeaningCalibration | null = calibrated
      ? {
          model: model.model,
          languages: model.languages,
          rule: final.thresholds,
          record: {
            corpus: `MSRP ${path.basename(values.file)}${limit ? ` (first ${limit} after the shuffle)` : ""}`,
            pairs: train.length,
            stages:
              "shipped stages 1-3 (DEFAULT_THRESHOLDS, SCORE_WEIGHTS fitted on all of MSRP train)",
            greyPairs: grey.length,
            unguardedGreyPairs: final.pairs,
            unguardedPositives: final.positives,
            method:
              "logistic regression of the label on w·cosine + (1-w)·stage-3 score over the " +
              "unguarded grey pairs, w in {1, 0.75, 0.5, 0.25} by likelihood; thresholds where " +
              "P reaches 0.5 (meaning) and 0.4 (distinct); none unless the slope's z >= 2",
            reason: final.reason,
            fit: final.fit
              ? {
                  cosineWeight: final.fit.cosineWeight,
                  intercept: final.fit.intercept,
                  slope: final.fit.slope,
                  z: final.fit.z,
                }
              : null,
            crossValidation: cv,
            ...(testRecord ? { test: testRecord } : {}),
            crossLingualRecallAt1: crossLingual,
            measuredAt: new Date().toISOString().slice(0, 10),
            command: `npm run -s bench -- meaning ${args.join(" ")}`.trim(),
          },
        }
      : null;
    if (calibration) {
      log(`      calibration: ${JSON.stringify(calibration)}`);
      if (id === (values.model ?? "shipped")) toWrite = calibration;
    }
    result.calibration = calibration;
    result.crossValidation = cv;
    result.folds = foldRows.map((r) => ({
      thresholds: r.fitted.thresholds,
      z: r.fitted.fit?.z ?? null,
      off: r.off,
      on: r.on,
      grey: r.grey,
    }));
    result.fittedOnAll = { thresholds: final.thresholds, reason: final.reason, fits: final.fits };
    result.test = testRecord ?? null;
    results.push(result);
  }
  if (values["write-calibration"]) {
    if (!toWrite) {
      throw usageError(
        `--write-calibration: ${values.model ?? "shipped"} is not a meaning model measured here`,
      );
    }
    writeFileSync(values["write-calibration"], `${JSON.stringify(toWrite, null, 2)}\n`);
    console.error(
      `meaning: calibration of ${toWrite.model} written to ${values["write-calibration"]}`,
    );
  }
  if (values.json) {
    console.log(
      JSON.stringify({
        msrp: {
          pairs: train.length,
          grey: grey.length,
          folds: k,
          seed,
          test: test?.length ?? null,
        },
        sets: sets.map((s) => ({
          name: s.name,
          label: s.label,
          languages: s.languages,
          source: s.source,
          pairs: s.pairs.length,
        })),
        models: results,
      }),
    );
  }
}
