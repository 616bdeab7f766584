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
      "raise",
      "raises",
      "raised",
      "hike",
      "hikes",
      "hiked",
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
      "cut",
      "cuts",
      "slash",
      "slashes",
      "slashed",
    ],
  ],
  // A decision taken or not: "Fed raises rates" / "Fed holds rates steady".
  [
    ["raise", "raises", "raised", "hike", "hikes", "hiked", "cut", "cuts", "slashes", "slashed"],
    ["hold", "holds", "held", "unchanged", "steady"],
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

/** Each pole word → the pairs it is on, with its side (0: the first pole, 1: the second). */
const POLES_OF = new Map<string, [number, 0 | 1][]>();
POLES.forEach(([plus, minus], i) => {
  for (const [side, ws] of [
    [0, plus],
    [1, minus],
  ] as const) {
    for (const w of ws) POLES_OF.set(w, [...(POLES_OF.get(w) ?? []), [i, side]]);
  }
});

/** Per pair of poles, the first word a text says of each pole. */
function sides(ws: readonly string[]): Map<number, [string | undefined, string | undefined]> {
  const out = new Map<number, [string | undefined, string | undefined]>();
  for (const w of ws) {
    const hits = POLES_OF.get(w);
    if (hits === undefined) continue;
    for (const [i, side] of hits) {
      const s = out.get(i) ?? [undefined, undefined];
      if (s[side] === undefined) s[side] = w;
      out.set(i, s);
    }
  }
  return out;
}

/**
 * The first pair of opposite words the two texts take sides on (one says only "rise", the other
 * only "fall"), or null. Words are the normalised words of each text (Analyzed.words).
 */
export function opposed(a: readonly string[], b: readonly string[]): [string, string] | null {
  const sa = sides(a);
  if (sa.size === 0) return null;
  const sb = sides(b);
  for (let i = 0; i < POLES.length; i++) {
    const [aPlus, aMinus] = sa.get(i) ?? [];
    const [bPlus, bMinus] = sb.get(i) ?? [];
    if (aPlus && !aMinus && bMinus && !bPlus) return [aPlus, bMinus];
    if (aMinus && !aPlus && bPlus && !bMinus) return [aMinus, bPlus];
  }
  return null;
}
