import { normalizeText, words } from "./normalize";

/**
 * Opposite outcomes that a lexical score cannot see: "Dhaka stocks rise 2 % on bank rally" and
 * "Dhaka stocks fall 2 % on bank selloff" share their distinctive words and score 0.67, yet a
 * reader would never call them one story. Each entry is two poles of normalised word forms
 * (lib/dedup normalizeText: lower case, Bengali in NFC with nukta split); a pair whose one side
 * says only one pole and whose other side says only the opposite one is held back from a link
 * and sent to review, where the meaning stage or an operator decides. Deliberately short: a
 * word here must flip the news in every headline it appears in.
 */
const POLES: ReadonlyArray<readonly [readonly string[], readonly string[]]> = [
  [
    [
      "rise",
      "rises",
      "rose",
      "risen",
      "rising",
      "gain",
      "gains",
      "gained",
      "climb",
      "climbs",
      "climbed",
      "jump",
      "jumps",
      "jumped",
      "surge",
      "surges",
      "surged",
      "soar",
      "soars",
      "soared",
      "up",
      "higher",
      "increase",
      "increases",
      "increased",
    ],
    [
      "fall",
      "falls",
      "fell",
      "fallen",
      "falling",
      "drop",
      "drops",
      "dropped",
      "slip",
      "slips",
      "slipped",
      "slide",
      "slides",
      "slid",
      "plunge",
      "plunges",
      "plunged",
      "tumble",
      "tumbles",
      "tumbled",
      "down",
      "lower",
      "decrease",
      "decreases",
      "decreased",
      "decline",
      "declines",
      "declined",
    ],
  ],
  [
    ["win", "wins", "won", "beat", "beats", "victory"],
    ["lose", "loses", "lost", "defeat", "defeated", "loss"],
  ],
  [
    ["open", "opens", "opened", "reopen", "reopens", "reopened"],
    ["close", "closes", "closed", "shut", "shuts"],
  ],
  [
    ["approve", "approves", "approved", "passes", "passed"],
    ["reject", "rejects", "rejected", "veto", "vetoes", "vetoed", "block", "blocks", "blocked"],
  ],
  [
    ["guilty", "convicted"],
    ["acquitted", "acquit", "acquits", "innocent", "cleared"],
  ],
  // Bangla: rose / fell, won / lost, opened / closed.
  [
    ["বাড়ল", "বেড়েছে", "বাড়ছে", "বৃদ্ধি"],
    ["কমল", "কমেছে", "কমছে", "পতন", "হ্রাস"],
  ],
  [
    ["জয়", "জিতল", "জিতেছে", "জয়ী"],
    ["হার", "হারল", "হেরেছে", "পরাজয়", "পরাজিত"],
  ],
  [["খুলল", "খুলেছে", "চালু"], ["বন্ধ"]],
].map(([plus, minus]) => [(plus ?? []).map(asWord), (minus ?? []).map(asWord)] as const);

/** A pole's word as the texts' words come out of normalizeText (য় as য + nukta, and so on). */
function asWord(w: string): string {
  return words(normalizeText(w))[0] ?? w;
}

/**
 * The first pair of opposite words the two texts take sides on (one says only "rise", the other
 * only "fall"), or null. Words are the normalised words of each text (Analyzed.words).
 */
export function opposed(a: readonly string[], b: readonly string[]): [string, string] | null {
  const inA = new Set(a);
  const inB = new Set(b);
  for (const [plus, minus] of POLES) {
    const aPlus = plus.find((w) => inA.has(w));
    const aMinus = minus.find((w) => inA.has(w));
    const bPlus = plus.find((w) => inB.has(w));
    const bMinus = minus.find((w) => inB.has(w));
    if (aPlus && !aMinus && bMinus && !bPlus) return [aPlus, bMinus];
    if (aMinus && !aPlus && bPlus && !bMinus) return [aMinus, bPlus];
  }
  return null;
}
