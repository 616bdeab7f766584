import { murmur32 } from "./hash";
import { normalizeText, words } from "./normalize";
import { type Shingles, STOP_WORDS, shinglesOfWords } from "./shingles";

/**
 * A text as the score reads it, computed once per text so that a pair costs only the
 * comparison: its words and weighted shingles, and the per-text parts of the pair features.
 */
export interface Analyzed {
  words: string[];
  shingles: Shingles;
  lexicon: Lexicon;
}

/** What pairFeatures compares, split out of the words and shingles of one text. */
export interface Lexicon {
  /** `w:` and `c:` shingles apart, with their total weights. */
  word: Map<string, number>;
  wordSum: number;
  char: Map<string, number>;
  charSum: number;
  /** Counts of the content (non stop) words and of their stems; the stem of each distinct one. */
  content: Map<string, number>;
  contentN: number;
  stems: Map<string, number>;
  contentStems: string[];
  /** Counts of the adjacent word pairs and triples ("a b", "a b c"). */
  bigrams: Map<string, number>;
  trigrams: Map<string, number>;
  /** Hashes of the stems of every word and of the content words, in text order (for the LCS). */
  wordSeq: Int32Array;
  stemSeq: Int32Array;
  numbers: Set<string>;
  /** Whether a negator word is in the text. */
  negated: boolean;
  /** Words in the text. */
  length: number;
}

const NUMBER = /^\p{N}/u;
const BENGALI = /^\p{Script=Bengali}/u;
const SEQ_SEED = 0x1b873593;
/** Words of a text the LCS reads at most (its cost is their product): a title and summary. */
export const LCS_WORDS = 64;

// Negators a sentence can carry as a word of its own ("n't" is split to "t" by normalizeText).
// Bangla mostly negates with a suffix (করেনি), which a word list cannot see; its free-standing
// না / নয় / নেই are here. A mismatch weighs against a link (it is a feature, not a guard).
const NEGATORS = new Set(
  "not no never nor neither without cannot t none nothing nobody না নয় নেই নাই"
    .split(" ")
    .map((w) => words(normalizeText(w))[0] ?? w),
);

/** A word's stem for the stem features: its first 5 code points, 4 for Bengali (anchors' rule). */
function stemOf(w: string): string {
  if (NUMBER.test(w)) return w;
  const n = BENGALI.test(w) ? 4 : 5;
  let out = "";
  let i = 0;
  for (const c of w) {
    if (i++ === n) break;
    out += c;
  }
  return out;
}

function inc(m: Map<string, number>, k: string) {
  m.set(k, (m.get(k) ?? 0) + 1);
}

function lexicon(ws: string[], sh: Shingles): Lexicon {
  const word = new Map<string, number>();
  const char = new Map<string, number>();
  let wordSum = 0;
  let charSum = 0;
  for (const [k, w] of sh) {
    const kind = k.charCodeAt(0);
    if (kind === 119 /* w */) {
      word.set(k, w);
      wordSum += w;
    } else if (kind === 99 /* c */) {
      char.set(k, w);
      charSum += w;
    }
  }
  const content = new Map<string, number>();
  const stems = new Map<string, number>();
  const bigrams = new Map<string, number>();
  const numbers = new Set<string>();
  const trigrams = new Map<string, number>();
  const stemSeq: number[] = [];
  const contentStems: string[] = [];
  const n = Math.min(ws.length, LCS_WORDS);
  const wordSeq = new Int32Array(n);
  let contentN = 0;
  let negated = false;
  for (let i = 0; i < ws.length; i++) {
    const w = ws[i] as string;
    if (i < n) wordSeq[i] = murmur32(stemOf(w), SEQ_SEED) | 0;
    if (i > 0) inc(bigrams, `${ws[i - 1]} ${w}`);
    if (i > 1) inc(trigrams, `${ws[i - 2]} ${ws[i - 1]} ${w}`);
    if (NEGATORS.has(w)) negated = true;
    if (NUMBER.test(w)) numbers.add(w);
    if (STOP_WORDS.has(w)) continue;
    contentN++;
    const s = stemOf(w);
    if (!content.has(w)) contentStems.push(s);
    inc(content, w);
    inc(stems, s);
    if (stemSeq.length < LCS_WORDS) stemSeq.push(murmur32(s, SEQ_SEED) | 0);
  }
  return {
    word,
    wordSum,
    char,
    charSum,
    content,
    contentN,
    stems,
    contentStems,
    bigrams,
    trigrams,
    wordSeq,
    stemSeq: Int32Array.from(stemSeq),
    numbers,
    negated,
    length: ws.length,
  };
}

export function analyze(text: string): Analyzed {
  const ws = words(normalizeText(text));
  const shingles = shinglesOfWords(ws);
  return { words: ws, shingles, lexicon: lexicon(ws, shingles) };
}

/** Σ over the keys of a of min(a, b): the weight the two have in common. */
function common(a: Map<string, number>, b: Map<string, number>): number {
  let both = 0;
  for (const [k, w] of a) {
    const v = b.get(k);
    if (v !== undefined) both += Math.min(w, v);
  }
  return both;
}

/** Length of the longest common subsequence of two hashed word sequences. */
function lcs(a: Int32Array, b: Int32Array): number {
  const m = b.length;
  if (a.length === 0 || m === 0) return 0;
  let prev = new Uint8Array(m + 1);
  let cur = new Uint8Array(m + 1);
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    for (let j = 1; j <= m; j++) {
      cur[j] =
        x === b[j - 1]
          ? (prev[j - 1] as number) + 1
          : Math.max(prev[j] as number, cur[j - 1] as number);
    }
    [prev, cur] = [cur, prev];
  }
  return prev[m] as number;
}

/** The share of numbers on either side that the other side lacks; 0 unless both have numbers. */
function numberMismatch(na: Set<string>, nb: Set<string>): number {
  if (na.size === 0 || nb.size === 0) return 0;
  let diff = 0;
  for (const n of na) if (!nb.has(n)) diff++;
  for (const n of nb) if (!na.has(n)) diff++;
  return diff / (na.size + nb.size);
}

/** Distinct content words of a whose stem b lacks. */
function extra(a: Lexicon, b: Lexicon): number {
  let n = 0;
  for (const s of a.contentStems) if (!b.stems.has(s)) n++;
  return n;
}

/**
 * The pair-local features of two texts, each symmetric (a "min"/"max" is over the two
 * directions: the share of the first's found in the second and the other way round) and
 * language-neutral (words, their prefixes and their character 4-grams; no dictionary but the
 * stop words and a few negators).
 */
export interface PairFeatures {
  /** Weighted Dice of the words (stop words weigh 0.15, numbers 1.5). */
  word: number;
  /** Weighted Dice of the in-word character 4-grams: inflected forms still overlap. */
  char: number;
  /** Share of numbers not on both sides (0 when either side has none). */
  numbers: number;
  /** Weighted word coverage, the less and the more covered side. */
  wordMin: number;
  wordMax: number;
  /** Weighted character 4-gram coverage. */
  charMin: number;
  charMax: number;
  /** Coverage of the content words, counted. */
  contentMin: number;
  contentMax: number;
  /** Coverage of the content words' stems (first 5 code points, 4 for Bengali). */
  stemMin: number;
  stemMax: number;
  /** Coverage of the pairs of adjacent words. */
  bigramMin: number;
  bigramMax: number;
  /** Longest common subsequence of the words (their stems) over the longer and the shorter text. */
  lcsMin: number;
  lcsMax: number;
  /** Longest common subsequence of the content stems over the longer side's. */
  lcsStems: number;
  /** Words of the shorter text over words of the longer. */
  lengthRatio: number;
  /** 1 when both sides have numbers; 1 when only one side has. */
  numbersBoth: number;
  numbersOne: number;
  /** 1 when exactly one side carries a negator word. */
  negation: number;
  /** ln(1 + content words whose stem the other side lacks), the fewer and the more of the two. */
  extraMin: number;
  extraMax: number;
  /** Coverage of the runs of three words. */
  trigramMin: number;
  trigramMax: number;
}

export const FEATURES = Object.freeze([
  "word",
  "char",
  "numbers",
  "wordMin",
  "wordMax",
  "charMin",
  "charMax",
  "contentMin",
  "contentMax",
  "stemMin",
  "stemMax",
  "bigramMin",
  "bigramMax",
  "lcsMin",
  "lcsMax",
  "lcsStems",
  "lengthRatio",
  "numbersBoth",
  "numbersOne",
  "negation",
  "extraMin",
  "extraMax",
  "trigramMin",
  "trigramMax",
] as const) satisfies readonly (keyof PairFeatures)[];

const share = (x: number, of: number) => (of > 0 ? x / of : 0);

/** Whether a comes first in a fixed order of texts, so a pair is computed alike both ways. */
function first(a: Analyzed, b: Analyzed): boolean {
  const x = a.words;
  const y = b.words;
  if (x.length !== y.length) return x.length < y.length;
  for (let i = 0; i < x.length; i++) {
    if (x[i] !== y[i]) return (x[i] as string) < (y[i] as string);
  }
  return true;
}

export function pairFeatures(a: Analyzed, b: Analyzed): PairFeatures {
  const [A, B] = first(a, b) ? [a.lexicon, b.lexicon] : [b.lexicon, a.lexicon];
  const w = common(A.word, B.word);
  const c = common(A.char, B.char);
  const u = common(A.content, B.content);
  const s = common(A.stems, B.stems);
  const g = common(A.bigrams, B.bigrams);
  const mm = (both: number, sa: number, sb: number): [number, number] => {
    const x = share(both, sa);
    const y = share(both, sb);
    return x < y ? [x, y] : [y, x];
  };
  const [wordMin, wordMax] = mm(w, A.wordSum, B.wordSum);
  const [charMin, charMax] = mm(c, A.charSum, B.charSum);
  const [contentMin, contentMax] = mm(u, A.contentN, B.contentN);
  const [stemMin, stemMax] = mm(s, A.contentN, B.contentN);
  const [bigramMin, bigramMax] = mm(g, Math.max(0, A.length - 1), Math.max(0, B.length - 1));
  const la = A.wordSeq.length;
  const lb = B.wordSeq.length;
  const l = lcs(A.wordSeq, B.wordSeq);
  const ls = lcs(A.stemSeq, B.stemSeq);
  const [trigramMin, trigramMax] = mm(
    common(A.trigrams, B.trigrams),
    Math.max(0, A.length - 2),
    Math.max(0, B.length - 2),
  );
  const ea = extra(A, B);
  const eb = extra(B, A);
  const na = A.numbers.size > 0;
  const nb = B.numbers.size > 0;
  return {
    word: share(2 * w, A.wordSum + B.wordSum),
    char: share(2 * c, A.charSum + B.charSum),
    numbers: numberMismatch(A.numbers, B.numbers),
    wordMin,
    wordMax,
    charMin,
    charMax,
    contentMin,
    contentMax,
    stemMin,
    stemMax,
    bigramMin,
    bigramMax,
    lcsMin: share(l, Math.max(la, lb)),
    lcsMax: share(l, Math.min(la, lb)),
    lcsStems: share(ls, Math.max(A.stemSeq.length, B.stemSeq.length)),
    lengthRatio: share(Math.min(A.length, B.length), Math.max(A.length, B.length)),
    numbersBoth: na && nb ? 1 : 0,
    numbersOne: na !== nb ? 1 : 0,
    negation: A.negated !== B.negated ? 1 : 0,
    extraMin: Math.log1p(Math.min(ea, eb)),
    extraMax: Math.log1p(Math.max(ea, eb)),
    trigramMin,
    trigramMax,
  };
}

/**
 * The score is a logistic model over the pair features: 1 / (1 + e^−(bias + Σ weight·feature)),
 * a probability-like score in (0, 1) that the two are one story. Fitted on MSRP's 4,076 training
 * pairs (bench/msrp.ts `--fit`, decision 022), after ten-fold cross-validation of the same fit.
 * Two texts equal after normalisation score exactly 1; two sharing no word and no 4-gram, 0.
 */
export type ScoreWeights = { bias: number } & { [K in keyof PairFeatures]: number };

export const SCORE_WEIGHTS: ScoreWeights = Object.freeze({
  bias: -3.916,
  word: 0.8201,
  char: 1.0396,
  numbers: -0.3169,
  wordMin: 1.1739,
  wordMax: 0.668,
  charMin: 1.2188,
  charMax: 1.3552,
  contentMin: -0.668,
  contentMax: -0.9674,
  stemMin: 0.3806,
  stemMax: 0.3443,
  bigramMin: 1.7067,
  bigramMax: -1.279,
  lcsMin: 4.6383,
  lcsMax: 2.1428,
  lcsStems: -2.3419,
  lengthRatio: 1.3492,
  numbersBoth: -0.1864,
  numbersOne: -0.1046,
  negation: -1.1625,
  extraMin: 0.0275,
  extraMax: -0.7989,
  trigramMin: 0.1481,
  trigramMax: -3.1091,
});

/** The model's score of a pair's features, in (0, 1). */
export function blend(f: PairFeatures, w: ScoreWeights = SCORE_WEIGHTS): number {
  let z = w.bias;
  for (const k of FEATURES) z += w[k] * f[k];
  return 1 / (1 + Math.exp(-z));
}

function asAnalyzed(x: string | Analyzed): Analyzed {
  return typeof x === "string" ? analyze(x) : x;
}

function sameWords(a: string[], b: string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * The score of two different texts from their features: the model's, or 0 when they have
 * nothing in common (no word, no 4-gram of a content word) to link on.
 */
export function featureScore(f: PairFeatures, w: ScoreWeights = SCORE_WEIGHTS): number {
  return f.word === 0 && f.char === 0 ? 0 : blend(f, w);
}

/** Lexical similarity of two texts in [0, 1]: 1 for texts equal after normalisation. */
export function pairScore(a: string | Analyzed, b: string | Analyzed): number {
  const A = asAnalyzed(a);
  const B = asAnalyzed(b);
  if (A.words.length > 0 && sameWords(A.words, B.words)) return 1;
  return featureScore(pairFeatures(A, B));
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
  for (const k of A.lexicon.bigrams.keys()) {
    if (phrases.length >= EVIDENCE_LIMIT) break;
    if (B.lexicon.bigrams.has(k)) phrases.push(k);
  }
  return {
    shared: uniq(A.words, (w) => inB.has(w)),
    sharedPhrases: phrases,
    onlyA: uniq(A.words, (w) => !inB.has(w)),
    onlyB: uniq(B.words, (w) => !inA.has(w)),
  };
}
