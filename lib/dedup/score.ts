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

/** Weighted overlap of one shingle kind: Σ min / Σ of each side, as Dice and as containment. */
function overlap(a: Shingles, b: Shingles, kind: string): { dice: number; contain: number } {
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
  if (sa === 0 && sb === 0) return { dice: 1, contain: 1 };
  if (sa === 0 || sb === 0) return { dice: 0, contain: 0 };
  return { dice: (2 * both) / (sa + sb), contain: both / Math.min(sa, sb) };
}

const NUMBER = /^\p{N}/u;

/** The share of numbers on either side that the other side does not have (0 when none). */
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
  word: number;
  wordContain: number;
  bigram: number;
  char: number;
  charContain: number;
  numbers: number;
}

export function pairFeatures(a: Analyzed, b: Analyzed): PairFeatures {
  const w = overlap(a.shingles, b.shingles, "w:");
  const c = overlap(a.shingles, b.shingles, "c:");
  return {
    word: w.dice,
    wordContain: w.contain,
    bigram: overlap(a.shingles, b.shingles, "b:").dice,
    char: c.dice,
    charContain: c.contain,
    numbers: numberMismatch(a.words, b.words),
  };
}

/**
 * How the features blend into one score. Chosen by cross-validation on MSRP (bench/msrp.ts,
 * decision 022); the weights sum to 1 so that two identical texts score exactly 1.
 */
export interface ScoreWeights {
  word: number;
  wordContain: number;
  bigram: number;
  char: number;
  charContain: number;
  /** Subtracted per unit of number mismatch: "7 dead" and "70 dead" are different news. */
  numbers: number;
}

export const SCORE_WEIGHTS: ScoreWeights = {
  word: 0.25,
  wordContain: 0.15,
  bigram: 0.1,
  char: 0.35,
  charContain: 0.15,
  numbers: 0.3,
};

export function blend(f: PairFeatures, w: ScoreWeights = SCORE_WEIGHTS): number {
  const s =
    w.word * f.word +
    w.wordContain * f.wordContain +
    w.bigram * f.bigram +
    w.char * f.char +
    w.charContain * f.charContain -
    w.numbers * f.numbers;
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
