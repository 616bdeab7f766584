import { normalizeText, words } from "./normalize";

/**
 * The weighted features of a text, shared by SimHash (stage 3's retrieval key) and the pair
 * score (its confirmation), so both see the same text the same way:
 *
 * - `w:` each word. Stop words weigh little: two unrelated headlines share "the", "of", "এবং".
 * - `b:` each pair of adjacent words: word order says something a bag of words does not.
 * - `c:` character 4-grams inside each word padded with "^" and "$", so inflected forms share
 *   most of their grams (Bangla ঢাকায়/ঢাকার/ঢাকাকে, English rise/rises/rising); their weights are
 *   spread over the word so a long word does not count for more than a short one.
 */
export type Shingles = Map<string, number>;

export const CHAR_N = 4;
const WORD_WEIGHT = 1;
const STOP_WEIGHT = 0.15;
const NUMBER_WEIGHT = 1.5;
const BIGRAM_WEIGHT = 0.5;
const CHAR_WEIGHT = 1;

// The most frequent function words of news English and Bangla. Kept short on purpose: a word
// missing here still counts, only less than it should.
export const STOP_WORDS = new Set(
  (
    "a an the of to in on at for from by with and or but as is are was were be been being it its " +
    "this that these those he she they we you i his her their our your him them us not no " +
    "has have had do does did will would can could should may might said says say than then " +
    "there here who whom which what when where why how all any some more most also after before " +
    "over into about up out s if so just new one two per " +
    "ও এবং এ এই সেই যে যা করে করা হয় হয়েছে হবে থেকে জন্য সঙ্গে সাথে না নয় তার তাদের তিনি " +
    "আর কিন্তু বা একটি এক তবে দিয়ে নিয়ে পর আগে মধ্যে কাছে বলে বলেন হচ্ছে ছিল ছিলেন"
  )
    .normalize("NFC")
    .split(" "),
);

const isNumber = (w: string) => /^\p{N}/u.test(w);

export function wordWeight(w: string): number {
  if (isNumber(w)) return NUMBER_WEIGHT;
  return STOP_WORDS.has(w) ? STOP_WEIGHT : WORD_WEIGHT;
}

/** Character n-grams of one word, padded; a word shorter than n is one gram. */
export function charGrams(w: string, n = CHAR_N): string[] {
  const p = `^${w}$`;
  if (p.length <= n) return [p];
  const out: string[] = [];
  for (let i = 0; i + n <= p.length; i++) out.push(p.slice(i, i + n));
  return out;
}

function add(m: Shingles, k: string, w: number) {
  m.set(k, (m.get(k) ?? 0) + w);
}

/** The weighted shingles of a raw text (normalised here). */
export function shingles(text: string): Shingles {
  return shinglesOfWords(words(normalizeText(text)));
}

export function shinglesOfWords(ws: string[]): Shingles {
  const m: Shingles = new Map();
  for (let i = 0; i < ws.length; i++) {
    const w = ws[i] as string;
    const ww = wordWeight(w);
    add(m, `w:${w}`, WORD_WEIGHT * ww);
    if (i > 0) {
      const prev = ws[i - 1] as string;
      add(m, `b:${prev} ${w}`, BIGRAM_WEIGHT * Math.min(ww, wordWeight(prev)));
    }
    if (STOP_WORDS.has(w)) continue;
    const grams = charGrams(w);
    const gw = CHAR_WEIGHT / grams.length;
    for (const g of grams) add(m, `c:${g}`, gw);
  }
  return m;
}
