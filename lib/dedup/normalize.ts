/**
 * Text normalisation shared by every text stage of the cascade: two renderings of the same
 * headline that a reader cannot tell apart must normalise to the same string.
 */

// NFKC folds compatibility forms (full-width Latin, ligatures, superscript digits) that feeds
// copy from word processors; it leaves Bengali letters alone apart from the canonical
// decompositions NFC makes too. U+09DC ড়, U+09DD ঢ়, U+09DF য় are composition exclusions, so NFC
// and NFKC both turn them into consonant + nukta (U+09BC) and never back: the precomposed and the
// two-code-point spellings meet in the decomposed one, with the nukta kept on its consonant.
const FORMAT = /\p{Cf}/gu; // ZWJ, ZWNJ, soft hyphen, BOM, bidi marks: invisible in print
const BENGALI_DIGIT = /[\u09E6-\u09EF]/g;
// Grouping commas inside numbers ("1,000", Bangla "১,০০,০০০") go; a decimal point between
// digits stays, so 3.5 and 35 do not meet.
const DIGIT_COMMA = /(?<=\d)[,\u066C](?=\d)/g;
const STRAY_POINT = /(?<!\d)\.|\.(?!\d)/g;
const NOT_TEXT = /[^\p{L}\p{M}\p{N}.]+/gu;

export function normalizeText(s: string): string {
  return s
    .normalize("NFKC")
    .replace(FORMAT, "")
    .toLowerCase()
    .replace(BENGALI_DIGIT, (d) => String(d.charCodeAt(0) - 0x09e6))
    .replace(DIGIT_COMMA, "")
    .replace(STRAY_POINT, " ")
    .replace(NOT_TEXT, " ")
    .trim()
    .normalize("NFC");
}

const segmenter = new Intl.Segmenter("und", { granularity: "word" });

/** The words of a normalised text (Intl.Segmenter, word-like segments only). */
export function words(normalized: string): string[] {
  const out: string[] = [];
  for (const seg of segmenter.segment(normalized)) if (seg.isWordLike) out.push(seg.segment);
  return out;
}
