import { murmur32 } from "./hash";
import type { Analyzed } from "./score";
import { STOP_WORDS } from "./shingles";

/**
 * Stage 3's second lookup key: a few "anchors" per text, 32-bit hashes of the stems of its most
 * distinctive words, each a row of dedup_anchors. A rewrite keeps the names, numbers and long
 * content words of the story while it moves every clause around (MSRP's paraphrases sit 14–16
 * SimHash bits apart, out of reach of the banded lookup), so two texts sharing `minShared` of
 * their anchors are looked up even when their SimHashes differ. See decision 022.
 *
 * - A stem is the first 5 code points of a Latin (or other) word, the first 4 of a Bengali one,
 *   so accused/accuses, officials/official, ঢাকায়/ঢাকার meet. Words of fewer than 4 code points
 *   and stop words are no anchor (too common to say what the story is about).
 * - Numbers of two or more digits are anchors as they are ("1.5", "2003", "৫০" → "50").
 * - Chosen by the longest word first (a long word is a rare word, and rare words are what two
 *   versions of one story keep), then by hash: the order depends on the stem alone, never on
 *   where it stands in the text, so two texts with the same distinctive words pick the same ones.
 */
/** retrieval.anchors' default (thresholds.ts), here so the pure function needs no settings. */
export const DEFAULT_ANCHORS = 6;
/**
 * Words that say when or who-said, not what: in every other news text, so two unrelated stories
 * would share them ("police said on Tuesday"). No anchor, though they still count in the score
 * and the SimHash. Whole words, not stems: "police" must not take "policy" with it.
 */
const ANCHOR_STOP = new Set(
  (
    "monday tuesday wednesday thursday friday saturday sunday " +
    "january february april june july august september october november december " +
    "today yesterday tonight week weeks month months year years " +
    "percent million billion people told added according while during since under against " +
    "three four five first last other being still because around another their there would " +
    "could should about after before where which while these those them they said says " +
    "আজ গত গতকাল বছর বছরের সোমবার মঙ্গলবার বুধবার বৃহস্পতিবার শুক্রবার শনিবার রবিবার " +
    "বলেছে বলেছেন জানান জানিয়েছে জানিয়েছেন তারা তাঁরা তিনি করবে করবেন করেছে করেছেন " +
    "রয়েছে রয়েছেন দেওয়া নেওয়া হলে হলো এখন আরও সব সবাই"
  )
    .normalize("NFC")
    .split(" "),
);

const ANCHOR_SEED = 0x5bd1e995;
const BENGALI = /^\p{Script=Bengali}/u;
const DIGIT = /^\p{N}/u;
const MIN_WORD = 4;
const LATIN_STEM = 5;
const BENGALI_STEM = 4;

/** The anchor stem of a word, or null when the word is no anchor. */
export function anchorStem(word: string): string | null {
  const cps = [...word];
  if (DIGIT.test(word)) {
    // One-digit numbers ("3 dead", "2 per cent") are in every other headline.
    return cps.filter((c) => DIGIT.test(c)).length >= 2 ? word : null;
  }
  if (cps.length < MIN_WORD || STOP_WORDS.has(word) || ANCHOR_STOP.has(word)) return null;
  return cps.slice(0, BENGALI.test(word) ? BENGALI_STEM : LATIN_STEM).join("");
}

/** The anchor of a stem: a signed 32-bit integer (the INTEGER column). */
export function anchorOf(stem: string): number {
  return murmur32(stem, ANCHOR_SEED) | 0;
}

/**
 * Up to `count` distinct anchors of an analysed text, most distinctive first; [] for a text with
 * no content word of 4 code points or more and no number of two digits.
 */
export function anchors(analyzed: Pick<Analyzed, "words">, count = DEFAULT_ANCHORS): number[] {
  const best = new Map<string, number>(); // stem → length of its longest word
  for (const w of analyzed.words) {
    const stem = anchorStem(w);
    if (stem === null) continue;
    const len = [...w].length;
    if ((best.get(stem) ?? 0) < len) best.set(stem, len);
  }
  return [...best]
    .map(([stem, len]) => ({ len, anchor: anchorOf(stem) }))
    .sort((x, y) => y.len - x.len || x.anchor - y.anchor)
    .map((x) => x.anchor)
    .filter((x, i, xs) => xs.indexOf(x) === i) // two stems, one hash: kept once
    .slice(0, Math.max(0, count));
}

/** How many anchors two anchor lists share (each list holds distinct values). */
export function sharedAnchors(a: readonly number[], b: readonly number[]): number {
  if (a.length === 0 || b.length === 0) return 0;
  const inA = new Set(a);
  let n = 0;
  for (const x of b) if (inA.has(x)) n++;
  return n;
}

/**
 * The anchor half of stage 3's retrieval rule: the anchor lookup finds b for a iff they share at
 * least `minShared` of their anchors (0 anchors per item: never). The live lookup reads at most
 * `postingCap` rows per anchor, so in a crowded window it may find less than this says; it never
 * finds more.
 */
export function anchorRetrievable(
  a: readonly number[],
  b: readonly number[],
  minShared: number,
): boolean {
  return sharedAnchors(a, b) >= Math.max(1, minShared);
}
