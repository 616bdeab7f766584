import {
  CATEGORIES,
  type Category,
  type Entity,
  type Extraction,
  type ExtractionLanguage,
} from "@/lib/extract/types";
import { NAMES } from "./corpus";
import type { Newsroom, SimStory } from "./newsroom";
import type { Outlet } from "./outlets";

/**
 * What the simulator's chat endpoint (chat.ts) answers about an item: deterministic, so a test
 * can say what a valid answer is, and plausible, so the dashboard shows believable extractions.
 * A story the newsroom published itself is answered from what the newsroom knows (its language,
 * category and instruments, the people, places and organisations its text names); any other
 * text by its script, a keyword table and the corpus's names.
 */

/** The item as the request carries it. */
export interface ChatItem {
  title: string;
  summary: string | null;
}

/** What the newsroom knows of a story it published. */
export interface KnownStory {
  title: string;
  summary: string;
  category: string;
  language: "en" | "bn";
  instruments: readonly string[];
}

// The contract's cap on a summary (lib/extract/types.ts).
const SUMMARY_MAX = 300;

export function simulatedExtraction(item: ChatItem, known?: KnownStory): Extraction {
  const given = `${item.title}\n${item.summary ?? ""}`;
  if (!known) {
    return {
      language: scriptLanguage(given),
      category: keywordCategory(given),
      entities: namesIn(given),
      summary: item.summary?.trim() ? null : shorten(item.title) || null,
    };
  }
  const told = `${known.title}\n${known.summary}`;
  const category = (CATEGORIES as readonly string[]).includes(known.category)
    ? (known.category as Category)
    : keywordCategory(told);
  const instruments = known.instruments.map((text): Entity => ({ text, type: "instrument" }));
  return {
    language: known.language,
    category,
    entities: unique([...instruments, ...namesIn(told)]),
    summary: item.summary?.trim() ? null : shorten(known.summary) || null,
  };
}

/**
 * Finds a published story by its title (or the title its page still shows after an edit): the
 * newest of that title among those published by now. Titles are indexed, and the index is made
 * anew only when an outlet's news changed (a story, an edit or a retraction moves its
 * lastChanged): a scan folded every title of every request, 20 ms a request at 2,000 stories.
 */
export function storyFinder(
  newsroom: Newsroom,
  outlets: readonly Outlet[],
): (title: string, now: number) => KnownStory | undefined {
  let signature = "";
  let byTitle = new Map<string, SimStory[]>();
  const index = () => {
    const now = outlets.map(
      (o) => `${newsroom.stories(o.id).length}@${newsroom.lastChanged(o.id)}`,
    );
    if (now.join(",") === signature) return byTitle;
    signature = now.join(",");
    byTitle = new Map();
    for (const outlet of outlets) {
      for (const s of newsroom.stories(outlet.id)) {
        const titles = new Set([fold(s.title), ...(s.pageStale ? [fold(s.pageStale.title)] : [])]);
        for (const t of titles) {
          const same = byTitle.get(t);
          if (same) same.push(s);
          else byTitle.set(t, [s]);
        }
      }
    }
    return byTitle;
  };
  return (title, now) => {
    let best: SimStory | undefined;
    for (const s of index().get(fold(title)) ?? []) {
      if (s.publishedAt <= now && (!best || s.publishedAt > best.publishedAt)) best = s;
    }
    return best;
  };
}

function fold(text: string): string {
  return text.normalize("NFC").replace(/\s+/g, " ").trim();
}

/** At most 300 characters, cut at a word with an ellipsis when longer. */
function shorten(text: string): string {
  const t = text.replace(/\s+/g, " ").trim();
  if (t.length <= SUMMARY_MAX) return t;
  const cut = t.slice(0, SUMMARY_MAX - 1);
  const space = cut.lastIndexOf(" ");
  return `${space > SUMMARY_MAX / 2 ? cut.slice(0, space) : cut}…`;
}

function unique(entities: Entity[]): Entity[] {
  const seen = new Set<string>();
  return entities.filter((e) => !seen.has(e.text) && seen.add(e.text));
}

const BENGALI = /[\u0980-\u09FF]/gu;
const LATIN = /\p{Script=Latin}/gu;
const LETTER = /[\p{L}\p{M}]/gu;
// Latin script is not English by itself: a few of the commonest words of the languages a wire
// desk meets in Latin script tell them apart well enough for a test double.
const ENGLISH_WORDS = new Set(
  "the a an of to in on for and is are was were as at by with from after over says said".split(" "),
);
const OTHER_WORDS = new Set(
  "le la les des du et est une el los las del por con que und der die das den ist mit von il di che".split(
    " ",
  ),
);

/** Bangla when Bengali script leads, English when Latin does (unless its words say otherwise). */
export function scriptLanguage(text: string): ExtractionLanguage {
  const bengali = text.match(BENGALI)?.length ?? 0;
  const latin = text.match(LATIN)?.length ?? 0;
  const other = (text.match(LETTER)?.length ?? 0) - bengali - latin;
  if (bengali > 0 && bengali >= latin && bengali >= other) return "bn";
  if (latin === 0 || latin < other) return "other";
  const words = text.toLowerCase().match(/\p{L}+/gu) ?? [];
  const english = words.filter((w) => ENGLISH_WORDS.has(w)).length;
  const foreign = words.filter((w) => OTHER_WORDS.has(w)).length;
  return foreign > english ? "other" : "en";
}

// Words that point at a desk, English then Bangla. An English keyword of four letters or more
// also matches as the start of a word ("elect" → elections); a shorter one only as a whole
// word ("ai" must not match "aid"). A Bangla keyword matches as the start of a word, which then
// carries its case ending. The category with the most hits wins; ties go to the earlier row.
const KEYWORDS: readonly [Category, string][] = [
  ["politics", "election vote parliament minister government candidate president poll opposition"],
  ["politics", "নির্বাচন ভোট সংসদ মন্ত্রী সরকার প্রার্থী মনোনয়ন"],
  ["economy", "inflation economy economic gdp growth budget tax exports imports policy rate rates"],
  ["economy", "মূল্যস্ফীতি অর্থনীতি প্রবৃদ্ধি সুদহার বাজেট রপ্তানি আমদানি"],
  ["markets", "stocks shares index s&p dsex dow nasdaq wall bourse equities benchmark"],
  ["markets", "শেয়ার সূচক পুঁজিবাজার ডিএসই ডিএসইএক্স"],
  ["currencies", "dollar taka euro yen rupee currency forex"],
  ["currencies", "ডলার টাকা ইউরো মুদ্রা"],
  ["commodities", "oil gold crude brent wheat rice gas copper opec"],
  ["commodities", "তেল সোনা স্বর্ণ গম চাল"],
  ["business", "company profit earnings revenue merger ceo firm factory garment"],
  ["business", "কোম্পানি মুনাফা ব্যবসা পোশাক"],
  ["technology", "tech software ai chip smartphone iphone app apps internet cyber"],
  ["technology", "প্রযুক্তি সফটওয়্যার ইন্টারনেট মোবাইল"],
  ["science", "scientists study research space nasa"],
  ["science", "বিজ্ঞানী গবেষণা মহাকাশ"],
  ["health", "health hospital dengue virus covid vaccine doctors disease"],
  ["health", "স্বাস্থ্য হাসপাতাল ডেঙ্গু টিকা রোগ"],
  ["environment", "climate pollution emissions forest wildlife carbon"],
  ["environment", "জলবায়ু দূষণ পরিবেশ"],
  ["weather", "flood floods cyclone rain storm heatwave monsoon weather"],
  ["weather", "বন্যা ঘূর্ণিঝড় বৃষ্টি ঝড় আবহাওয়া"],
  ["sports", "cricket football match wins beat series tournament cup goal odi t20"],
  ["sports", "ক্রিকেট ফুটবল ম্যাচ সিরিজ টেস্ট"],
  ["crime", "police arrest arrested killed murder court robbery fraud jail"],
  ["crime", "পুলিশ গ্রেপ্তার হত্যা আদালত"],
  ["world", "un war summit nations foreign ceasefire"],
  ["world", "যুদ্ধ জাতিসংঘ"],
  ["entertainment", "film movie music actor singer concert celebrity"],
  ["entertainment", "চলচ্চিত্র সিনেমা গান অভিনেতা"],
  ["education", "school university exam students teachers"],
  ["education", "স্কুল বিশ্ববিদ্যালয় পরীক্ষা শিক্ষার্থী"],
];
const WORD = "[\\p{L}\\p{M}\\p{N}]";
const KEYWORD_PATTERNS = KEYWORDS.map(([category, words]) => {
  const alternatives = words.split(" ").map((w) => {
    const stem = escapeRegExp(w.normalize("NFC"));
    const whole = /^[\x20-\x7e]+$/.test(w) && w.length < 4;
    return whole ? `${stem}(?!${WORD})` : stem;
  });
  return { category, pattern: new RegExp(`(?<!${WORD})(?:${alternatives.join("|")})`, "giu") };
});

export function keywordCategory(text: string): Category | null {
  const folded = text.normalize("NFC");
  const score = new Map<Category, number>();
  for (const { category, pattern } of KEYWORD_PATTERNS) {
    const hits = folded.match(pattern)?.length ?? 0;
    if (hits) score.set(category, (score.get(category) ?? 0) + hits);
  }
  let best: Category | null = null;
  for (const [category, hits] of score) {
    if (best === null || hits > (score.get(best) ?? 0)) best = category;
  }
  return best;
}

// Bangla names carry a case ending in running text (সিলেটের, ঢাকায়); English ones stand alone.
// One pattern per script, longest name first, so at each place the longest name wins ("Bangladesh
// Bank", not "Bangladesh"); one pattern, not one per name, because V8 compiles each \p{…} class
// anew: 260 patterns took 450 ms to first match, two take a few.
const BN_ENDINGS = `(?:${[...new Set(["ের", "র", "য়", "\u09DF", "তে", "ে", "কে", "ও", "রা", "দের"].map((e) => e.normalize("NFC")))].join("|")})?`;
const NAME_TYPES = new Map(
  NAMES.flatMap((n) => [
    [n.en, n.type],
    [n.bn.normalize("NFC"), n.type],
  ]),
);
const namePattern = (names: string[], ending: string) => {
  const longestFirst = [...new Set(names)].sort((a, b) => b.length - a.length);
  return new RegExp(
    `(?<!${WORD})(${longestFirst.map(escapeRegExp).join("|")})${ending}(?!${WORD})`,
    "gu",
  );
};
const NAME_PATTERNS = [
  namePattern(
    NAMES.map((n) => n.en),
    "",
  ),
  namePattern(
    NAMES.map((n) => n.bn.normalize("NFC")),
    BN_ENDINGS,
  ),
];

/** The corpus's people, places and organisations the text names, in the order it names them. */
export function namesIn(text: string): Entity[] {
  const folded = text.normalize("NFC");
  const found: { at: number; entity: Entity }[] = [];
  for (const pattern of NAME_PATTERNS) {
    for (const m of folded.matchAll(pattern)) {
      const name = m[1] as string;
      found.push({ at: m.index, entity: { text: name, type: NAME_TYPES.get(name) ?? "place" } });
    }
  }
  return unique(found.sort((a, b) => a.at - b.at).map((f) => f.entity));
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
