import type { Language } from "./outlets";
import type { Random } from "./random";

/** The facts of one story; every outlet words the same facts its own way. */
export interface Facts {
  pct: number;
  up: boolean;
  n: number;
  bps: number;
}

type Phrase = (f: Facts) => string;

export interface Topic {
  key: string;
  category: string;
  instruments: string[];
  /** Headline wordings per language; republications and edits pick another one. */
  headlines: Partial<Record<Language, Phrase[]>>;
  summary: Partial<Record<Language, Phrase>>;
  /** Another desk's summary of the same facts: what an independent rewrite says instead. */
  rewrite: Partial<Record<Language, Phrase>>;
}

const BN_DIGITS = "০১২৩৪৫৬৭৮৯";
/** Bangla papers print numbers in Bengali digits. */
export const bnNum = (x: number | string): string =>
  String(x).replace(/[0-9]/g, (d) => BN_DIGITS[Number(d)] as string);

const pct = (f: Facts) => f.pct.toFixed(1);
const bnPct = (f: Facts) => bnNum(f.pct.toFixed(1));

export const TOPICS: readonly Topic[] = [
  {
    key: "fed-rate",
    category: "economy",
    instruments: ["DXY", "EURUSD"],
    headlines: {
      en: [
        (f) => `Fed ${f.up ? "raises" : "cuts"} rates by ${f.bps} basis points`,
        (f) => `Federal Reserve ${f.up ? "hikes" : "lowers"} key rate ${f.bps}bp`,
        (f) => `US central bank ${f.up ? "lifts" : "trims"} benchmark rate by ${f.bps} bps`,
      ],
    },
    summary: {
      en: (f) => `The decision moved the dollar ${pct(f)}% as traders repriced the outlook.`,
    },
    rewrite: {
      en: (f) =>
        `Markets repriced the outlook and the dollar moved ${pct(f)}% after the Fed's move.`,
    },
  },
  {
    key: "bb-rate",
    category: "economy",
    instruments: ["USDBDT"],
    headlines: {
      en: [
        (f) => `Bangladesh Bank ${f.up ? "raises" : "cuts"} policy rate by ${f.bps} bps`,
        (f) => `Bangladesh central bank ${f.up ? "hikes" : "lowers"} repo rate ${f.bps}bp`,
      ],
      bn: [
        (f) => `বাংলাদেশ ব্যাংক নীতি সুদহার ${bnNum(f.bps)} বেসিস পয়েন্ট ${f.up ? "বাড়াল" : "কমাল"}`,
        (f) => `নীতি সুদহার ${f.up ? "বাড়ল" : "কমল"} ${bnNum(f.bps)} বেসিস পয়েন্ট`,
        (f) => `রেপো হার ${f.up ? "বাড়িয়েছে" : "কমিয়েছে"} কেন্দ্রীয় ব্যাংক`,
      ],
    },
    summary: {
      en: (f) => `The taka moved ${pct(f)}% against the dollar after the announcement.`,
      bn: (f) => `ঘোষণার পর ডলারের বিপরীতে টাকার মান ${bnPct(f)} শতাংশ বদলেছে।`,
    },
    rewrite: {
      en: (f) => `Against the dollar, the taka shifted ${pct(f)}% once the central bank spoke.`,
      bn: (f) => `কেন্দ্রীয় ব্যাংকের সিদ্ধান্তের পর টাকার বিনিময় হার ${bnPct(f)} শতাংশ ওঠানামা করেছে।`,
    },
  },
  {
    key: "spx",
    category: "markets",
    instruments: ["SPX"],
    headlines: {
      en: [
        (f) =>
          `S&P 500 ${f.up ? "rises" : "falls"} ${pct(f)}% as tech stocks ${f.up ? "rally" : "slide"}`,
        (f) =>
          `Wall Street ${f.up ? "climbs" : "drops"}: S&P 500 ${f.up ? "up" : "down"} ${pct(f)}%`,
        (f) => `US stocks ${f.up ? "gain" : "lose"} ${pct(f)}% led by technology shares`,
      ],
    },
    summary: {
      en: (f) => `The benchmark index closed ${f.up ? "higher" : "lower"} by ${pct(f)} percent.`,
    },
    rewrite: {
      en: (f) =>
        `Technology names drove the index ${f.up ? "up" : "down"} ${pct(f)} percent by the close.`,
    },
  },
  {
    key: "dsex",
    category: "markets",
    instruments: ["DSEX"],
    headlines: {
      en: [
        (f) => `Dhaka stocks ${f.up ? "rise" : "fall"} ${pct(f)}% in heavy trading`,
        (f) => `DSEX ${f.up ? "gains" : "sheds"} ${pct(f)} percent`,
      ],
      bn: [
        (f) => `ডিএসইএক্স সূচক ${bnPct(f)} শতাংশ ${f.up ? "বেড়েছে" : "কমেছে"}`,
        (f) => `ঢাকার শেয়ারবাজারে সূচক ${f.up ? "বাড়ল" : "কমল"} ${bnPct(f)} শতাংশ`,
        (f) => `পুঁজিবাজারে ${f.up ? "উত্থান" : "দরপতন"}, ডিএসইএক্স ${bnPct(f)}%`,
      ],
    },
    summary: {
      en: (f) => `Turnover reached ${f.n * 10} crore taka on the Dhaka Stock Exchange.`,
      bn: (f) => `ঢাকা স্টক এক্সচেঞ্জে লেনদেন হয়েছে ${bnNum(f.n * 10)} কোটি টাকা।`,
    },
    rewrite: {
      en: (f) => `Dealers said ${f.n * 10} crore taka changed hands in Dhaka.`,
      bn: (f) => `দিনভর ${bnNum(f.n * 10)} কোটি টাকার শেয়ার হাতবদল হয়েছে।`,
    },
  },
  {
    key: "gp",
    category: "markets",
    instruments: ["GP.DH"],
    headlines: {
      en: [
        (f) => `Grameenphone shares ${f.up ? "jump" : "slip"} ${pct(f)}% after earnings`,
        (f) => `GP stock ${f.up ? "up" : "down"} ${pct(f)}% on quarterly results`,
      ],
      bn: [
        (f) => `গ্রামীণফোনের শেয়ারদর ${bnPct(f)} শতাংশ ${f.up ? "বেড়েছে" : "কমেছে"}`,
        (f) => `মুনাফা প্রকাশের পর জিপির শেয়ার ${f.up ? "চাঙা" : "নিম্নমুখী"}`,
      ],
    },
    summary: {
      en: (f) => `Quarterly profit was ${f.n * 12} crore taka, the company said.`,
      bn: (f) => `কোম্পানিটি ত্রৈমাসিকে ${bnNum(f.n * 12)} কোটি টাকা মুনাফা করেছে।`,
    },
    rewrite: {
      en: (f) => `The operator reported ${f.n * 12} crore taka in profit for the quarter.`,
      bn: (f) => `তিন মাসে অপারেটরটির মুনাফা ${bnNum(f.n * 12)} কোটি টাকা।`,
    },
  },
  {
    key: "ecb-euro",
    category: "currencies",
    instruments: ["EURUSD"],
    headlines: {
      en: [
        (f) => `Euro ${f.up ? "strengthens" : "weakens"} ${pct(f)}% after ECB remarks`,
        (f) => `EUR/USD ${f.up ? "rises" : "falls"} ${pct(f)}% as ECB signals path`,
        (f) => `Euro ${f.up ? "gains" : "slides"} on ECB policy comments`,
      ],
    },
    summary: {
      en: (f) => `The single currency moved ${pct(f)}% against the dollar in European trading.`,
    },
    rewrite: {
      en: (f) => `Comments from ECB officials pushed the currency ${pct(f)}% in Europe.`,
    },
  },
  {
    key: "oil",
    category: "commodities",
    instruments: ["BRENT", "CL"],
    headlines: {
      en: [
        (f) => `Oil ${f.up ? "climbs" : "falls"} ${pct(f)}% on supply ${f.up ? "worries" : "glut"}`,
        (f) => `Brent crude ${f.up ? "up" : "down"} ${pct(f)}% as OPEC+ meets`,
      ],
      bn: [
        (f) => `বিশ্ববাজারে তেলের দাম ${bnPct(f)} শতাংশ ${f.up ? "বেড়েছে" : "কমেছে"}`,
        (f) => `ব্রেন্ট তেলের দাম ${f.up ? "বাড়ল" : "কমল"} ${bnPct(f)}%`,
      ],
    },
    summary: {
      en: (f) => `Brent settled near $${70 + f.n} a barrel.`,
      bn: (f) => `ব্যারেলপ্রতি ব্রেন্টের দাম দাঁড়িয়েছে ${bnNum(70 + f.n)} ডলারে।`,
    },
    rewrite: {
      en: (f) => `A barrel of Brent ended at about $${70 + f.n}.`,
      bn: (f) => `প্রতি ব্যারেল ব্রেন্ট বিক্রি হয়েছে প্রায় ${bnNum(70 + f.n)} ডলারে।`,
    },
  },
  {
    key: "gold",
    category: "commodities",
    instruments: ["XAUUSD"],
    headlines: {
      en: [
        (f) =>
          `Gold ${f.up ? "hits record" : "retreats"} as investors ${f.up ? "seek safety" : "take profits"}`,
        (f) => `Gold prices ${f.up ? "rise" : "fall"} ${pct(f)}%`,
      ],
      bn: [
        (f) => `স্বর্ণের দাম ভরিতে ${bnNum(f.n * 100)} টাকা ${f.up ? "বাড়ল" : "কমল"}`,
        (f) => `সোনার দাম ${f.up ? "বেড়েছে" : "কমেছে"} ভরিতে ${bnNum(f.n * 100)} টাকা`,
      ],
    },
    summary: {
      en: (f) => `Spot gold moved ${pct(f)}% in Asian trading.`,
      bn: () => "বাংলাদেশ জুয়েলার্স সমিতি নতুন দাম ঘোষণা করেছে।",
    },
    rewrite: {
      en: (f) => `In Asia the metal moved ${pct(f)}% on the spot market.`,
      bn: () => "জুয়েলার্স সমিতির ঘোষণায় নতুন দর কার্যকর হচ্ছে।",
    },
  },
  {
    key: "garments",
    category: "economy",
    instruments: [],
    headlines: {
      en: [
        (f) => `Bangladesh garment exports ${f.up ? "rise" : "fall"} ${pct(f)}% in October`,
        (f) => `RMG shipments ${f.up ? "up" : "down"} ${pct(f)}% year on year`,
      ],
      bn: [
        (f) => `তৈরি পোশাক রপ্তানি ${bnPct(f)} শতাংশ ${f.up ? "বেড়েছে" : "কমেছে"}`,
        (f) => `পোশাক রপ্তানিতে ${f.up ? "প্রবৃদ্ধি" : "ধস"}, ${bnPct(f)} শতাংশ`,
      ],
    },
    summary: {
      en: (f) => `Exports were worth $${f.n / 10 + 3} billion, exporters said.`,
      bn: (f) => `রপ্তানি আয় দাঁড়িয়েছে ${bnNum((f.n / 10 + 3).toFixed(1))} বিলিয়ন ডলারে।`,
    },
    rewrite: {
      en: (f) => `Shipments brought in $${f.n / 10 + 3} billion, according to exporters.`,
      bn: (f) => `রপ্তানিকারকেরা জানিয়েছেন, আয় হয়েছে ${bnNum((f.n / 10 + 3).toFixed(1))} বিলিয়ন ডলার।`,
    },
  },
  {
    key: "flood",
    category: "weather",
    instruments: [],
    headlines: {
      en: [
        (f) => `Floods cut off ${f.n} villages in northern Bangladesh`,
        (f) => `Monsoon flooding strands residents of ${f.n} villages`,
      ],
      bn: [
        (f) => `উত্তরাঞ্চলে বন্যায় ${bnNum(f.n)}টি গ্রাম প্লাবিত`,
        (f) => `বন্যায় পানিবন্দী ${bnNum(f.n)} গ্রামের মানুষ`,
        (f) => `টানা বর্ষণে ${bnNum(f.n)} গ্রাম পানির নিচে`,
      ],
    },
    summary: {
      en: () => "Rivers rose above danger level after days of heavy rain.",
      bn: () => "কয়েক দিনের ভারী বর্ষণে নদীর পানি বিপৎসীমার ওপরে।",
    },
    rewrite: {
      en: () => "Days of downpour pushed rivers past the danger mark.",
      bn: () => "টানা বৃষ্টিতে নদীগুলো বিপৎসীমা ছাড়িয়ে বইছে।",
    },
  },
  {
    key: "cricket",
    category: "sports",
    instruments: [],
    headlines: {
      en: [
        (f) => `Bangladesh beat Sri Lanka by ${f.n} runs`,
        (f) => `Tigers win by ${f.n} runs against Sri Lanka`,
      ],
      bn: [
        (f) => `শ্রীলঙ্কাকে ${bnNum(f.n)} রানে হারাল বাংলাদেশ`,
        (f) => `${bnNum(f.n)} রানের জয় পেল টাইগাররা`,
      ],
    },
    summary: {
      en: () => "The win levels the series ahead of the final match in Chattogram.",
      bn: () => "এই জয়ে সিরিজে সমতা ফেরাল বাংলাদেশ।",
    },
    rewrite: {
      en: () => "Bangladesh square the series with the decider still to come in Chattogram.",
      bn: () => "চট্টগ্রামে শেষ ম্যাচের আগে সিরিজ এখন সমতায়।",
    },
  },
  {
    key: "port",
    category: "business",
    instruments: [],
    headlines: {
      en: [
        (f) => `Chattogram port congestion strands ${f.n} ships`,
        (f) => `${f.n} vessels wait outside Chattogram port`,
      ],
      bn: [
        (f) => `চট্টগ্রাম বন্দরে জটে আটকা ${bnNum(f.n)} জাহাজ`,
        (f) => `বন্দরের বহির্নোঙরে অপেক্ষায় ${bnNum(f.n)}টি জাহাজ`,
      ],
    },
    summary: {
      en: () => "Importers warned of delays as container yards filled up.",
      bn: () => "কনটেইনার ইয়ার্ড ভরে যাওয়ায় পণ্য খালাসে দেরি হচ্ছে।",
    },
    rewrite: {
      en: () => "Full container yards mean delays for importers, traders said.",
      bn: () => "ইয়ার্ডে জায়গা না থাকায় আমদানিকারকেরা বিপাকে পড়েছেন।",
    },
  },
  {
    key: "apple",
    category: "technology",
    instruments: ["AAPL"],
    headlines: {
      en: [
        (f) =>
          `Apple shares ${f.up ? "rise" : "fall"} ${pct(f)}% after iPhone sales ${f.up ? "beat" : "miss"}`,
        (f) =>
          `Apple ${f.up ? "beats" : "misses"} estimates; stock ${f.up ? "up" : "down"} ${pct(f)}%`,
      ],
    },
    summary: {
      en: (f) => `Revenue came in at $${80 + f.n} billion for the quarter.`,
    },
    rewrite: {
      en: (f) => `Quarterly sales reached $${80 + f.n} billion.`,
    },
  },
  {
    key: "election",
    category: "politics",
    instruments: [],
    headlines: {
      en: [
        (f) => `Election Commission sets polls for ${f.n} municipalities`,
        (f) => `Local elections announced in ${f.n} municipalities`,
      ],
      bn: [
        (f) => `${bnNum(f.n)} পৌরসভায় নির্বাচনের তফসিল ঘোষণা`,
        (f) => `${bnNum(f.n)}টি পৌরসভায় ভোটের তারিখ দিল ইসি`,
      ],
    },
    summary: {
      en: () => "Nominations open next week, the commission said.",
      bn: () => "আগামী সপ্তাহ থেকে মনোনয়নপত্র জমা নেওয়া হবে।",
    },
    rewrite: {
      en: () => "Candidates can file nominations from next week.",
      bn: () => "প্রার্থীরা আগামী সপ্তাহে মনোনয়নপত্র জমা দিতে পারবেন।",
    },
  },
];

export function randomFacts(random: Random): Facts {
  return {
    pct: random.int(1, 39) / 10,
    up: random.chance(0.5),
    n: random.int(3, 60),
    bps: random.pick([25, 50, 75]),
  };
}

/** Topics an outlet writing in `language` can cover. */
export function topicsIn(language: Language): Topic[] {
  return TOPICS.filter((t) => t.headlines[language] !== undefined);
}
