import { config } from "../../config";
import { inputProblem, plainText } from "../input";
import { decideLanguage, type LatinDetector, loadLatinDetector } from "../language";
import {
  CATEGORY_KEYWORDS,
  INSTRUMENTS,
  ORGANIZATION_SUFFIXES,
  ORGANIZATIONS,
  PERSON_TITLES,
  PLACES,
} from "../lexicon";
import { MAX_ENTITIES, MAX_SUMMARY_CHARS } from "../schema";
import type {
  Category,
  Entity,
  ExtractInput,
  Extraction,
  ExtractionProvider,
  ProviderAnswer,
  ProviderCallOptions,
} from "../types";

/**
 * The deterministic provider in the box: free, offline, the default and the last in any chain.
 * Same input, same answer: language (../language.ts), category by keywords, entities from
 * gazetteers and patterns, a short summary from the item's own summary's lead. It answers like
 * any provider (a candidate the chain validates), at 0 tokens and cost 0.
 *
 * What it cannot do, by design: people's names in Bangla (no well-kept library reads Bangla
 * names, and a list of people goes stale), organisations in Bangla beyond its list and a few
 * suffixes (মন্ত্রণালয়, অধিদপ্তর…), a category for a headline with none of its words (null).
 */
export const LOCAL_MODEL = "local-rules@1";
export const LOCAL_PROMPT_VERSION = "local-v1";

/**
 * Tickers named as instruments when they stand as words, unless WIREWATCH_EXTRACT_TICKERS
 * gives the list: the Dhaka exchange's most traded and the US's largest. Short ones that are
 * also words ("GP" is a general practitioner too) are matched upper case only.
 */
// biome-ignore format: a list reads better packed several to a line
export const DEFAULT_TICKERS = [
  "GP", "BATBC", "SQURPHARMA", "BEXIMCO", "BRACBANK", "ROBI", "WALTONHIL", "RENATA", "LHBL", "ICB",
  "BXPHARMA", "OLYMPIC", "UPGDCL", "DUTCHBANGL", "CITYBANK", "IDLC", "LANKABAFIN", "AAPL", "MSFT",
  "GOOGL", "GOOG", "AMZN", "NVDA", "TSLA", "META", "NFLX", "AMD", "INTC",
];

export interface LocalProviderOptions {
  /** Tickers to name as instruments (default: WIREWATCH_EXTRACT_TICKERS, else DEFAULT_TICKERS). */
  tickers?: readonly string[];
}

export class LocalProvider implements ExtractionProvider {
  readonly name = "local";
  readonly model = LOCAL_MODEL;
  readonly promptVersion = LOCAL_PROMPT_VERSION;
  readonly paid = false;
  private readonly tickers: ReadonlySet<string>;

  constructor(options: LocalProviderOptions = {}) {
    const configured = config()
      .WIREWATCH_EXTRACT_TICKERS?.split(",")
      .map((t) => t.trim());
    this.tickers = new Set(options.tickers ?? configured ?? DEFAULT_TICKERS);
  }

  async call(input: ExtractInput, options: ProviderCallOptions = {}): Promise<ProviderAnswer> {
    const started = performance.now();
    const usage = () => ({
      tokensIn: 0,
      tokensOut: 0,
      costUsd: 0,
      latencyMs: performance.now() - started,
      status: null,
    });
    const problem = inputProblem(input);
    if (problem) return { ok: false, code: "bad_input", message: problem, ...usage() };
    options.signal?.throwIfAborted();
    // The Latin-script detector loads once (~2 s) on the first text that needs it.
    const latin = needsLatinDetector(input) ? await loadLatinDetector() : noLatin;
    const people = LATIN.test(itemText(input)) ? await loadPeopleFinder() : undefined;
    const candidate = localExtraction(input, {
      tickers: this.tickers,
      latin,
      ...(people ? { people } : {}),
    });
    return { ok: true, candidate, rawText: JSON.stringify(candidate), ...usage() };
  }
}

const noLatin: LatinDetector = () => ({ top: null, englishShare: 0 });
const LATIN = /\p{Script=Latin}/u;

/** People's names in English text: compromise's (a well-kept English NLP library). */
export type PeopleFinder = (text: string) => string[];
let peopleLoading: Promise<PeopleFinder> | undefined;

/**
 * compromise, loaded on the first text with Latin letters. On the entity fixtures
 * (testdata/entities.jsonl) it raised recall from 0.84 to 0.91 at a precision of 0.96 (0.99
 * without): the gazetteers know no one's name, and a title before it ("Prime Minister …") or a
 * verb of speech after it ("Elon Musk says") is not in every headline. ~5 ms a text.
 */
export function loadPeopleFinder(): Promise<PeopleFinder> {
  peopleLoading ??= import("compromise").then(
    ({ default: nlp }) =>
      (text: string) =>
        (nlp(text).people().out("array") as string[]).map((name) =>
          name.replace(/['’]s$/u, "").replace(/[.,;:!?]+$/u, ""),
        ),
  );
  return peopleLoading;
}

function needsLatinDetector(input: ExtractInput): boolean {
  return decideLanguage(itemText(input), noLatin).by === "prior";
}

function itemText(input: ExtractInput): string {
  const summary = plainText(input.summary);
  return summary ? `${input.title}\n${summary}` : input.title;
}

/** The local provider's answer for one item (synchronous, given a Latin-script detector). */
export function localExtraction(
  input: ExtractInput,
  options: { tickers: ReadonlySet<string>; latin: LatinDetector; people?: PeopleFinder },
): Extraction {
  const title = input.title.normalize("NFC").trim();
  const summary = plainText(input.summary).normalize("NFC");
  const language = decideLanguage(summary ? `${title}\n${summary}` : title, options.latin, {
    hint: input.languageHint ?? null,
  }).language;
  return {
    language,
    category: categorize(title, summary),
    entities: findEntities(`${title}\n${summary}`, options.tickers, options.people).slice(
      0,
      MAX_ENTITIES,
    ),
    summary: summaryLead(summary),
  };
}

// ---- words ----------------------------------------------------------------------------------

interface Token {
  /** As written (NFC). */
  text: string;
  /** Lower case, for the keywords. */
  lower: string;
  index: number;
}

// Letters, marks, digits and & (S&P); an apostrophe or a dot inside (Cox's, 4.5g); joiners
// inside (র‍্যাব). Hyphens split ("low-lying", "GP-র"), so each part is a word of its own.
const TOKEN =
  /[\p{L}\p{M}\p{N}&](?:[\p{L}\p{M}\p{N}&]|[.'’](?=[\p{L}\p{M}\p{N}])|\u200C|\u200D)*/gu;

function tokenize(text: string): Token[] {
  return [...text.matchAll(TOKEN)].map((m) => ({
    text: m[0],
    lower: m[0].toLowerCase(),
    index: m.index,
  }));
}

interface Keyword {
  words: string[];
  /** The last word matches any word it starts. */
  prefix: boolean;
}

function compile(keyword: string): Keyword {
  const prefix = keyword.endsWith("*");
  const words = tokenize(prefix ? keyword.slice(0, -1) : keyword).map((t) => t.lower);
  return { words, prefix };
}

/** Where the keyword matches first in the tokens, or -1. */
function findKeyword(tokens: readonly Token[], k: Keyword): number {
  const n = k.words.length;
  outer: for (let i = 0; i + n <= tokens.length; i++) {
    for (let j = 0; j < n; j++) {
      const word = (tokens[i + j] as Token).lower;
      const want = k.words[j] as string;
      const last = j === n - 1;
      if (last && k.prefix ? !word.startsWith(want) : word !== want) continue outer;
    }
    return i;
  }
  return -1;
}

// ---- category -------------------------------------------------------------------------------

const COMPILED = Object.entries(CATEGORY_KEYWORDS).map(([category, words]) => ({
  category: category as Category,
  keywords: words.map(compile).filter((k) => k.words.length > 0),
}));

/**
 * The category whose keywords weigh most: a keyword in the title counts 2, in the summary 1,
 * each keyword once per field. A tie goes to the category named first in the title (a headline
 * leads with its subject: "Gold prices rise" is about gold before prices). None: null.
 */
export function categorize(title: string, summary: string): Category | null {
  const titleTokens = tokenize(title);
  const summaryTokens = tokenize(summary);
  let best: { category: Category; score: number; first: number } | null = null;
  for (const { category, keywords } of COMPILED) {
    let score = 0;
    let first = Number.POSITIVE_INFINITY;
    for (const k of keywords) {
      const inTitle = findKeyword(titleTokens, k);
      if (inTitle >= 0) {
        score += 2;
        first = Math.min(first, inTitle);
      }
      const inSummary = findKeyword(summaryTokens, k);
      if (inSummary >= 0) {
        score += 1;
        first = Math.min(first, titleTokens.length + inSummary);
      }
    }
    if (score === 0) continue;
    if (!best || score > best.score || (score === best.score && first < best.first)) {
      best = { category, score, first };
    }
  }
  return best?.category ?? null;
}

// ---- entities -------------------------------------------------------------------------------

// Bangla case endings a name takes in running text (ঢাকায়, সিলেটের, চট্টগ্রামে, রাজশাহীতে).
const BANGLA_ENDINGS = ["", "র", "ের", "এর", "য়", "য়ের", "ে", "এ", "তে", "কে", "রা", "ও", "েও", "ই"];
const BENGALI = /[\u0980-\u09FF]/u;

interface NameEntry {
  words: string[];
  bangla: boolean;
  entity: Entity;
}

function nameEntries(list: readonly (readonly [string, string])[], type: Entity["type"]) {
  const entries: NameEntry[] = [];
  for (const [en, bn] of list) {
    if (en)
      entries.push({
        words: tokenize(en).map((t) => t.text),
        bangla: false,
        entity: { text: en, type },
      });
    if (bn)
      entries.push({
        words: tokenize(bn).map((t) => t.text),
        bangla: true,
        entity: { text: bn, type },
      });
  }
  // Longest first, so "Bangladesh Bank" is found before "Bangladesh" claims its first word.
  return entries.sort((a, b) => b.words.length - a.words.length);
}

const GAZETTEER = [
  ...nameEntries(INSTRUMENTS, "instrument"),
  ...nameEntries(ORGANIZATIONS, "organization"),
  ...nameEntries(PLACES, "place"),
].sort((a, b) => b.words.length - a.words.length);

/** English names match as written (US, not us; Apple, not apple), possessive 's aside. */
function englishWord(token: string): string {
  return token.replace(/['’]s$/u, "");
}

function banglaMatches(token: string, name: string): boolean {
  if (!token.startsWith(name)) return false;
  const rest = token.slice(name.length);
  return BANGLA_ENDINGS.includes(rest);
}

function matchName(tokens: readonly Token[], at: number, entry: NameEntry): boolean {
  if (at + entry.words.length > tokens.length) return false;
  return entry.words.every((want, j) => {
    const token = (tokens[at + j] as Token).text;
    const last = j === entry.words.length - 1;
    if (entry.bangla) return last ? banglaMatches(token, want) : token === want;
    return (last ? englishWord(token) : token) === want;
  });
}

const SUFFIXES = new Set(ORGANIZATION_SUFFIXES);
const TITLE_WORDS = PERSON_TITLES.map((t) => t.split(" "));
/** Joining words inside an English name ("Bay of Bengal", "Bank of England", "S&P"). */
const CONNECTORS = new Set(["of", "for", "&", "de", "al", "bin", "ul", "e"]);
const SENTENCE_WORDS = new Set(["The", "A", "An", "In", "On", "At", "After", "As", "But", "And"]);
const BANGLA_ORG_SUFFIXES = ["মন্ত্রণালয়", "অধিদপ্তর", "বিশ্ববিদ্যালয়", "কমিশন", "কর্তৃপক্ষ"];
const SPEECH = new Set(["said", "says", "told", "added", "warned", "announced", "urged"]);

const isCapitalised = (word: string) => /^\p{Lu}/u.test(word) && !BENGALI.test(word);

/**
 * Entities in order of first appearance: instruments by pattern and list, then names from the
 * gazetteers, organisations by their last word, people by a title before them or a verb of
 * speech after them.
 */
export function findEntities(
  text: string,
  tickers: ReadonlySet<string>,
  people?: PeopleFinder,
): Entity[] {
  const found: { at: number; entity: Entity }[] = [];
  const add = (at: number, text: string, type: Entity["type"]) =>
    found.push({ at, entity: { text: text.trim(), type } });

  for (const m of text.matchAll(/(?<![\w$])\$([A-Z]{1,5}(?:\.[A-Z]{1,2})?)\b/g)) {
    add(m.index, m[1] as string, "instrument");
  }
  for (const m of text.matchAll(
    /\b(?:NASDAQ|Nasdaq|NYSE|DSE|CSE|LSE|NSE|BSE|TSE|HKEX|AMEX)\s*:\s*([A-Z][A-Z0-9.]{0,11})\b/g,
  )) {
    add(m.index + m[0].lastIndexOf(m[1] as string), m[1] as string, "instrument");
  }
  const CODES = "USD|EUR|GBP|JPY|BDT|INR|CNY|CHF|AUD|CAD|PKR|SAR|AED|XAU";
  for (const m of text.matchAll(new RegExp(`\\b(${CODES})\\s*/\\s*(${CODES})\\b`, "g"))) {
    add(m.index, `${m[1]}/${m[2]}`, "instrument");
  }

  const tokens = tokenize(text);
  const claimed = new Array<boolean>(tokens.length).fill(false);
  const claim = (from: number, count: number) => {
    for (let k = from; k < from + count; k++) claimed[k] = true;
  };

  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i] as Token;
    if (tickers.has(token.text)) {
      add(token.index, token.text, "instrument");
      claim(i, 1);
      continue;
    }
    const entry = GAZETTEER.find((e) => matchName(tokens, i, e));
    if (entry) {
      add(token.index, entry.entity.text, entry.entity.type);
      claim(i, entry.words.length);
      i += entry.words.length - 1;
    }
  }

  // English organisations by their last word: the capitalised run before it, over names the
  // gazetteer found inside it ("Walton Hi-Tech Industries PLC" replaces "Walton").
  for (let i = 0; i < tokens.length; i++) {
    if (!SUFFIXES.has((tokens[i] as Token).text) || claimed[i]) continue;
    let end = i;
    while (end + 1 < tokens.length && SUFFIXES.has((tokens[end + 1] as Token).text)) end++;
    let start = i;
    while (start > 0) {
      const before = (tokens[start - 1] as Token).text;
      // Another organisation's last word ends this one ("BRAC Bank and Dutch-Bangla Bank").
      if (SUFFIXES.has(before)) break;
      const joined =
        CONNECTORS.has(before) && start >= 2 && isCapitalised((tokens[start - 2] as Token).text);
      if (isCapitalised(before) || joined) start--;
      else break;
    }
    while (
      start < i &&
      (SENTENCE_WORDS.has((tokens[start] as Token).text) ||
        CONNECTORS.has((tokens[start] as Token).text))
    ) {
      start++;
    }
    if (start === i) continue;
    const first = tokens[start] as Token;
    const last = tokens[end] as Token;
    for (let k = found.length - 1; k >= 0; k--) {
      const at = (found[k] as { at: number }).at;
      if (
        at >= first.index &&
        at < last.index + last.text.length &&
        found[k]?.entity.type !== "instrument"
      ) {
        found.splice(k, 1);
      }
    }
    add(first.index, text.slice(first.index, last.index + last.text.length), "organization");
    claim(start, end - start + 1);
    i = end;
  }

  // Bangla organisations: the word before a suffix (শিক্ষা মন্ত্রণালয়ের → শিক্ষা মন্ত্রণালয়).
  tokens.forEach((token, i) => {
    if (i === 0 || claimed[i]) return;
    const suffix = BANGLA_ORG_SUFFIXES.find((s) => banglaMatches(token.text, s));
    const before = tokens[i - 1] as Token;
    if (!suffix || claimed[i - 1] || !BENGALI.test(before.text)) return;
    add(before.index, `${before.text} ${suffix}`, "organization");
    claim(i - 1, 2);
  });

  // English people: a title, then up to three capitalised words; or two or three capitalised
  // words, then a verb of speech ("Elon Musk says").
  for (let i = 0; i < tokens.length; i++) {
    const title = TITLE_WORDS.find((words) =>
      words.every((w, j) => tokens[i + j]?.text === w.replace(/\.$/, "")),
    );
    if (!title) continue;
    const keepTitle = title.length === 1 && title[0] === "Sheikh";
    const from = keepTitle ? i : i + title.length;
    let end = i + title.length;
    while (end < tokens.length && end - i - title.length < 3) {
      const t = tokens[end] as Token;
      if (!isCapitalised(t.text) || claimed[end] || SUFFIXES.has(t.text)) break;
      end++;
    }
    if (end === i + title.length) continue;
    const first = tokens[from] as Token;
    const last = tokens[end - 1] as Token;
    add(first.index, englishWord(text.slice(first.index, last.index + last.text.length)), "person");
    claim(from, end - from);
    i = end - 1;
  }
  for (let i = 0; i < tokens.length; i++) {
    if (!SPEECH.has((tokens[i] as Token).text) || i < 2) continue;
    let start = i;
    while (
      start > 0 &&
      i - start < 3 &&
      isCapitalised((tokens[start - 1] as Token).text) &&
      !claimed[start - 1]
    )
      start--;
    if (i - start < 2) continue;
    const first = tokens[start] as Token;
    const last = tokens[i - 1] as Token;
    add(first.index, text.slice(first.index, last.index + last.text.length), "person");
    claim(start, i - start);
  }

  // compromise's people, where no other rule found a name over the same words; not in Bangla
  // text (it reads English only).
  if (people && !BENGALI.test(text)) {
    const taken = found.map((f) => f.entity.text.toLowerCase());
    for (const name of people(text)) {
      const lower = name.toLowerCase();
      if (!name || taken.some((t) => t.includes(lower) || lower.includes(t))) continue;
      const at = text.indexOf(name);
      add(at < 0 ? text.length : at, name, "person");
      taken.push(lower);
    }
  }

  found.sort((a, b) => a.at - b.at);
  const seen = new Set<string>();
  const entities: Entity[] = [];
  for (const { entity } of found) {
    const key = `${entity.type}\u0000${entity.text.toLowerCase()}`;
    if (!entity.text || seen.has(key)) continue;
    seen.add(key);
    entities.push(entity);
  }
  return entities;
}

// ---- summary --------------------------------------------------------------------------------

/**
 * A short summary when the item's own is too long to show as one: its lead, whole sentences up
 * to 300 characters (a first sentence longer than that cut at a word, with an ellipsis). An
 * item with no summary gets none (the title is not repeated), one of 300 characters or fewer
 * gets none either: its own serves.
 */
export function summaryLead(summary: string): string | null {
  if (summary.length <= MAX_SUMMARY_CHARS) return null;
  const sentences = summary.match(/[^.!?।]+(?:[.!?।]+["'”’)]*|$)\s*/gu) ?? [summary];
  let lead = "";
  for (const sentence of sentences) {
    if ((lead + sentence).trim().length > MAX_SUMMARY_CHARS) break;
    lead += sentence;
  }
  lead = lead.trim();
  if (lead) return lead;
  const cut = summary.slice(0, MAX_SUMMARY_CHARS - 1);
  const space = cut.lastIndexOf(" ");
  return `${(space > 200 ? cut.slice(0, space) : cut).trimEnd()}…`;
}
