import type { ExtractionLanguage } from "./types";

/**
 * An item's language: Bangla, English or other (decision 028).
 *
 * Script first, then grammar, then a detector, each only where the one before cannot tell:
 *
 * 1. Words are counted by script. A Bangla headline names companies and people in Latin letters
 *    ("Square Pharmaceuticals, Beximco Pharma ও Renata-র শেয়ারে দরপতন": 40 Latin letters to 13
 *    Bengali ones, Bangla all the same), so letters are not counted, words are, and a
 *    capitalised or upper-case Latin word (a name, an acronym, a ticker) weighs half or nothing
 *    against a lower-case one (grammar). A word with Bengali letters in it counts as Bangla even
 *    when it starts in Latin ("GP-র": a Bangla case ending on a name). Quoted words are left out
 *    while there are words outside the quotes ("মেসি বললেন, 'This is my last World Cup'" is
 *    Bangla; "Students chant 'আমার সোনার বাংলা' at the rally" is English).
 * 2. Bengali script with ৰ or ৱ is Assamese (Bangla writes neither): other.
 * 3. Most weight on Bengali words: bn; on another script (Devanagari, Arabic, Han…): other.
 * 4. Most weight on Latin words: English or another Latin-script language, which only a
 *    detector can tell. English is the prior here (the feeds are Bangla and English): the
 *    detector must put another language clearly ahead, English's score below
 *    `englishMargin` (0.85) of the top one, before the text is called other. On the fixtures
 *    English headlines of two words scored at least 0.89 of the top (eld on "Oil slips": no
 *    0.710, en 0.636), other languages' at most 0.78 (French, "La Banque centrale …").
 * 5. No letters at all (figures only): Bengali digits are Bangla; else the feed's language tag
 *    if it is bn or en; else other. The tag decides nothing else: feeds declare a default tag
 *    whatever they publish.
 */

/** A Latin-script detector's verdict on one text. */
export interface LatinGuess {
  /** Its best language (ISO 639-1 or -3), or null when it had nothing to go on. */
  top: string | null;
  /** English's score over the best one's, 0 to 1 (1: English is best or tied). */
  englishShare: number;
}

/** Tells English from other Latin-script languages; the detector of decision 028 by default. */
export type LatinDetector = (text: string) => LatinGuess;

export interface LanguageEvidence {
  language: ExtractionLanguage;
  /** What decided: the words' scripts, the Latin detector, the English prior, digits, the tag. */
  by: "script" | "assamese" | "detector" | "prior" | "digits" | "hint" | "none";
  /** The Latin detector's guess, when it was asked. */
  latin?: LatinGuess;
}

/** English's share of the top score below which a Latin-script text is another language. */
export const ENGLISH_MARGIN = 0.85;

const BENGALI_LETTER = /[\u0980-\u09E5\u09F0-\u09FF]/u;
const BENGALI_DIGIT = /[\u09E6-\u09EF]/u;
const ASSAMESE = /[\u09F0\u09F1]/u;
const LATIN = /\p{Script=Latin}/u;
const LETTER = /\p{L}/u;
// Joiners (U+200C, U+200D) stay inside a word: Bangla writes র‍্যাব with one.
const WORD = /[\p{L}\p{M}\p{N}](?:(?:[\p{L}\p{M}\p{N}'’.&+-]|\u200C|\u200D)*[\p{L}\p{M}\p{N}])?/gu;
// A quotation: an opening mark after a space, a bracket or the start, a closing one before a
// space, punctuation or the end, so the apostrophes of "Dhaka's" and "l'or" are not quotes.
const QUOTED =
  /(^|[\s([{:;,—–-])(?:'([^'\n]+)'|‘([^’\n]+)’|"([^"\n]+)"|“([^”\n]+)”)(?=$|[\s)\]}.,;:!?।—–-])/gu;

interface Weights {
  bengali: number;
  latin: number;
  other: number;
  assamese: boolean;
  bengaliDigits: boolean;
}

function weigh(text: string): Weights {
  const w: Weights = {
    bengali: 0,
    latin: 0,
    other: 0,
    assamese: ASSAMESE.test(text),
    bengaliDigits: BENGALI_DIGIT.test(text),
  };
  for (const [word] of text.matchAll(WORD)) {
    if (BENGALI_LETTER.test(word)) w.bengali += 1;
    else if (LATIN.test(word)) {
      // A figure with its unit (100k, 4.5G, 1.2bn) is no word of either language.
      if (/^\p{N}/u.test(word)) continue;
      const letters = word.replace(/[^\p{L}]/gu, "");
      if (letters === letters.toLowerCase()) w.latin += 1;
      // An acronym or ticker (GP, NASDAQ, S24, FY25) says nothing about the sentence's language.
      else if (letters === letters.toUpperCase()) continue;
      else w.latin += 0.5;
    } else if (LETTER.test(word)) w.other += 1;
  }
  return w;
}

/** The Latin-script words of the text, quoted ones included: what the detector reads. */
function latinWords(text: string): string {
  const words: string[] = [];
  for (const [word] of text.matchAll(WORD)) {
    if (!BENGALI_LETTER.test(word) && LATIN.test(word) && !/^\p{N}/u.test(word)) words.push(word);
  }
  return words.join(" ");
}

/** The text less its quotations, when words are left outside them. */
function unquoted(text: string): string {
  const outside = text.replace(QUOTED, "$1 ");
  return outside !== text && /\p{L}/u.test(outside) ? outside : text;
}

function normalizeTag(hint: string | null | undefined): ExtractionLanguage | null {
  const primary = hint?.trim().toLowerCase().split(/[-_]/)[0];
  if (primary === "bn" || primary === "ben") return "bn";
  if (primary === "en" || primary === "eng") return "en";
  return null;
}

/** The decision with its evidence, with a given Latin-script detector. */
export function decideLanguage(
  text: string,
  latin: LatinDetector,
  options: { hint?: string | null; englishMargin?: number } = {},
): LanguageEvidence {
  const normal = text.normalize("NFC");
  const w = weigh(unquoted(normal));
  const latinText = latinWords(normal);
  if (w.bengali === 0 && w.latin === 0 && w.other === 0 && latinText === "") {
    if (w.bengaliDigits) return { language: "bn", by: "digits" };
    const tag = normalizeTag(options.hint);
    return tag ? { language: tag, by: "hint" } : { language: "other", by: "none" };
  }
  if (w.bengali > 0 && w.assamese) {
    w.other += w.bengali;
    w.bengali = 0;
    if (w.other >= w.latin) return { language: "other", by: "assamese" };
  }
  if (w.bengali > 0 && w.bengali >= w.latin && w.bengali >= w.other) {
    return { language: "bn", by: "script" };
  }
  if (w.other > w.latin) return { language: "other", by: "script" };
  const guess = latin(latinText);
  const margin = options.englishMargin ?? ENGLISH_MARGIN;
  if (guess.top === null) return { language: "en", by: "prior", latin: guess };
  const isEnglish = guess.top === "en" || guess.top === "eng";
  if (isEnglish) return { language: "en", by: "detector", latin: guess };
  if (guess.englishShare >= margin) return { language: "en", by: "prior", latin: guess };
  return { language: "other", by: "detector", latin: guess };
}

/**
 * The script-majority rule alone (lib/search/docs.ts detectLanguage's, with "other" for no
 * Bengali or Latin letter): the baseline the detector is measured against.
 */
export function scriptMajority(text: string): ExtractionLanguage {
  const bengali = text.match(/[\u0980-\u09FF]/gu)?.length ?? 0;
  const latin = text.match(/\p{Script=Latin}/gu)?.length ?? 0;
  if (bengali === 0 && latin === 0) return "other";
  return bengali >= latin ? "bn" : "en";
}

type Eld = typeof import("eld/large")["eld"];
let eldLoading: Promise<Eld> | undefined;
let eldLoaded: Eld | undefined;

/**
 * eld with its large database (decision 028): the most accurate on the fixtures' short English
 * headlines (55 of 55; the small and medium databases 51), at 140 MB of heap (46 MB small) and
 * about 2 s to load. Loaded on the first text that needs it: a process that only ever sees
 * Bangla (or no Latin-script text) never pays for it.
 */
export function loadLatinDetector(): Promise<LatinDetector> {
  eldLoading ??= import("eld/large").then((m) => {
    eldLoaded = m.eld;
    return m.eld;
  });
  return eldLoading.then(() => eldLatin);
}

/** eld as a LatinDetector; only after loadLatinDetector() has resolved. */
function eldLatin(text: string): LatinGuess {
  if (!eldLoaded) throw new Error("the Latin-script detector is not loaded (loadLatinDetector)");
  const result = eldLoaded.detect(text);
  const scores = result.getScores();
  const top = result.language || null;
  const best = top ? (scores[top] ?? 0) : 0;
  const english = scores.en ?? 0;
  return { top, englishShare: best > 0 ? Math.min(1, english / best) : 0 };
}

/** An item's language with the default detector (loaded on first use). */
export async function detectItemLanguage(
  text: string,
  hint?: string | null,
): Promise<ExtractionLanguage> {
  const quick = decideLanguage(text, () => ({ top: null, englishShare: 0 }), { hint });
  if (quick.by !== "prior") return quick.language;
  const latin = await loadLatinDetector();
  return decideLanguage(text, latin, { hint }).language;
}
