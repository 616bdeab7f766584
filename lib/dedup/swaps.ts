import { anchorStem } from "./anchors";

/**
 * Two headlines built on one frame with other particulars: "Floods cut off 26 villages in
 * Madaripur" / "Floods cut off 49 villages in Barguna", "নেত্রকোনার ২৯ পৌরসভায় নির্বাচনের তফসিল
 * ঘোষণা" / "মৌলভীবাজারের ১০ পৌরসভায় …". Most of their words are shared, so a lexical score calls
 * them one story; a reader sees two. What gives them away is a swap: each side has a particular
 * the other lacks (a word whose stem the other side has nowhere) *and* a figure the other lacks.
 * An edit of one story changes a figure ("kills 7" → "kills 9": the toll rose) or a word
 * ("knocks out" → "cuts"), rarely both: those still link. (A rule for names alone, capitalised
 * words inside a sentence, cost MSRP 0.03 of accuracy: paraphrases swap "Wednesday" for a date or
 * a title for a name. Not shipped.)
 */
export interface Swap {
  kind: "particulars";
  /** What only the first text has, and what only the second has. */
  a: string[];
  b: string[];
}

const NUMBER = /^\p{N}/u;

/** Each distinct content word (not a figure) with its anchor stem, and the set of the stems. */
function stemsOf(words: readonly string[]): { words: [string, string][]; stems: Set<string> } {
  const seen = new Set<string>();
  const out: [string, string][] = [];
  const stems = new Set<string>();
  for (const w of words) {
    if (seen.has(w)) continue;
    seen.add(w);
    if (NUMBER.test(w)) continue;
    const s = anchorStem(w);
    if (s === null) continue;
    out.push([w, s]);
    stems.add(s);
  }
  return { words: out, stems };
}

/** Content words (anchor stems) of `a` whose stem `other` has nowhere. */
function unmatched(a: [string, string][], other: Set<string>): string[] {
  const out: string[] = [];
  for (const [w, s] of a) if (!other.has(s)) out.push(w);
  return out;
}

function figures(words: readonly string[]): Set<string> {
  return new Set(words.filter((w) => NUMBER.test(w)));
}

/**
 * The swap that sets two texts apart, or null. `a`/`b` are the normalised words (Analyzed.words).
 */
export function swapped(a: readonly string[], b: readonly string[]): Swap | null {
  const sa = stemsOf(a);
  const sb = stemsOf(b);
  const onlyA = unmatched(sa.words, sb.stems);
  const onlyB = unmatched(sb.words, sa.stems);
  if (onlyA.length > 0 && onlyB.length > 0) {
    const fa = figures(a);
    const fb = figures(b);
    const figA = [...fa].filter((f) => !fb.has(f));
    const figB = [...fb].filter((f) => !fa.has(f));
    if (figA.length > 0 && figB.length > 0) {
      return { kind: "particulars", a: [...onlyA, ...figA], b: [...onlyB, ...figB] };
    }
  }
  return null;
}
