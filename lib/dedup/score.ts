import { normalizeText, words } from "./normalize";
import { type Shingles, shinglesOfWords } from "./shingles";

/** A text as the score reads it: its words and weighted shingles, computed once. */
export interface Analyzed {
  words: string[];
  shingles: Shingles;
}

export function analyze(text: string): Analyzed {
  const ws = words(normalizeText(text));
  return { words: ws, shingles: shinglesOfWords(ws) };
}

/**
 * Weighted Dice overlap of one shingle kind: 2·Σ min / (Σ a + Σ b). 0 when neither side has any:
 * two texts of stop words only have nothing in common worth linking (equal ones are "exact").
 */
function dice(a: Shingles, b: Shingles, kind: string): number {
  let sa = 0;
  let sb = 0;
  let both = 0;
  for (const [k, w] of a) {
    if (!k.startsWith(kind)) continue;
    sa += w;
    const v = b.get(k);
    if (v !== undefined) both += Math.min(w, v);
  }
  for (const [k, w] of b) if (k.startsWith(kind)) sb += w;
  return sa + sb === 0 ? 0 : (2 * both) / (sa + sb);
}

const NUMBER = /^\p{N}/u;

/** The share of numbers on either side that the other side lacks; 0 unless both have numbers. */
function numberMismatch(a: string[], b: string[]): number {
  const na = new Set(a.filter((w) => NUMBER.test(w)));
  const nb = new Set(b.filter((w) => NUMBER.test(w)));
  if (na.size === 0 || nb.size === 0) return 0;
  let diff = 0;
  for (const n of na) if (!nb.has(n)) diff++;
  for (const n of nb) if (!na.has(n)) diff++;
  return diff / (na.size + nb.size);
}

export interface PairFeatures {
  /** Weighted Dice of the words (stop words weigh 0.15, numbers 1.5). */
  word: number;
  /** Weighted Dice of the in-word character 4-grams: inflected forms still overlap. */
  char: number;
  /** Share of numbers not on both sides (0 when either side has none). */
  numbers: number;
}

export function pairFeatures(a: Analyzed, b: Analyzed): PairFeatures {
  return {
    word: dice(a.shingles, b.shingles, "w:"),
    char: dice(a.shingles, b.shingles, "c:"),
    numbers: numberMismatch(a.words, b.words),
  };
}

/**
 * score = word·f.word + (1 − word)·f.char − numbers·f.numbers, clamped to [0, 1]: two texts
 * equal after normalisation score exactly 1. The two weights are the median of ten MSRP folds'
 * choices for the score alone (bench/msrp.ts, decision 022): every fold put the word overlap at
 * 0 or 0.1 once the character 4-grams were there, so the shipped score is the 4-gram overlap of
 * the content words, less a tenth of the number mismatch. The word weight stays a knob.
 */
export interface ScoreWeights {
  /** Share of the word overlap in the blend; the character overlap has the rest. */
  word: number;
  /** Subtracted per unit of number mismatch: "7 dead" and "70 dead" are different news. */
  numbers: number;
}

export const SCORE_WEIGHTS: ScoreWeights = Object.freeze({ word: 0, numbers: 0.1 });

export function blend(f: PairFeatures, w: ScoreWeights = SCORE_WEIGHTS): number {
  const s = w.word * f.word + (1 - w.word) * f.char - w.numbers * f.numbers;
  return Math.min(1, Math.max(0, s));
}

function asAnalyzed(x: string | Analyzed): Analyzed {
  return typeof x === "string" ? analyze(x) : x;
}

/** Lexical similarity of two texts in [0, 1]: 1 for texts equal after normalisation. */
export function pairScore(a: string | Analyzed, b: string | Analyzed): number {
  return blend(pairFeatures(asAnalyzed(a), asAnalyzed(b)));
}

export const EVIDENCE_LIMIT = 20;

/** What a person needs to see why two texts were (or were not) linked, bounded for the page. */
export interface Evidence {
  /** Words both texts have, in the order of the first. */
  shared: string[];
  /** Adjacent word pairs both have (the phrases they share). */
  sharedPhrases: string[];
  /** Words only the first has / only the second has. */
  onlyA: string[];
  onlyB: string[];
  /** Opposite outcomes the two take sides on ("rise", "fall"), which held a link back. */
  opposed?: [string, string];
  /** The particulars or names only each side has, which held a link back (lib/dedup/swaps.ts). */
  swapped?: { kind: "particulars"; a: string[]; b: string[] };
}

export function evidence(a: string | Analyzed, b: string | Analyzed): Evidence {
  const A = asAnalyzed(a);
  const B = asAnalyzed(b);
  const inA = new Set(A.words);
  const inB = new Set(B.words);
  const uniq = (ws: string[], keep: (w: string) => boolean) =>
    [...new Set(ws)].filter(keep).slice(0, EVIDENCE_LIMIT);
  const phrases: string[] = [];
  for (const k of A.shingles.keys()) {
    if (phrases.length >= EVIDENCE_LIMIT) break;
    if (k.startsWith("b:") && B.shingles.has(k)) phrases.push(k.slice(2));
  }
  return {
    shared: uniq(A.words, (w) => inB.has(w)),
    sharedPhrases: phrases,
    onlyA: uniq(A.words, (w) => !inB.has(w)),
    onlyB: uniq(B.words, (w) => !inA.has(w)),
  };
}
