import type { Language } from "./outlets";
import type { Random } from "./random";

/** The facts of one story; every outlet words the same facts its own way. */
export interface Facts {
  pct: number;
  up: boolean;
  n: number;
  bps: number;
  /** Who or where the story is about: an index into the topic's list of subjects. */
  who: number;
  /** Why, or what else: an index into the topic's list of reasons. */
  why: number;
  /** Who said what, where and when: the story's own detail sentence (see detailSentence). */
  detail: number;
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

// Subjects and reasons, English and Bangla side by side. Two stories of one topic are about
// different subjects or for different reasons far more often than not, as two real stories of
// one beat are: without them, the 14 topics' stories in an hour differ only by a figure and
// look like edits of each other to any dedup.
type Names = readonly (readonly [string, string])[];
const en = (list: Names, i: number) => (list[i % list.length] as readonly [string, string])[0];
const bn = (list: Names, i: number) => (list[i % list.length] as readonly [string, string])[1];

// Bangla case endings follow the stem's last sound: after a vowel sign the genitive is -র and the
// locative -য় (after া) or -তে; after a consonant, -এর and -এ.
const VOWEL_SIGN_END = /[\u09BE-\u09CC]$/;
const bnGen = (w: string) => (VOWEL_SIGN_END.test(w) ? `${w}র` : `${w}ের`);
const bnLoc = (w: string) => (/া$/.test(w) ? `${w}য়` : VOWEL_SIGN_END.test(w) ? `${w}তে` : `${w}ে`);

const DISTRICTS: Names = [
  ["Sylhet", "সিলেট"],
  ["Sunamganj", "সুনামগঞ্জ"],
  ["Kurigram", "কুড়িগ্রাম"],
  ["Gaibandha", "গাইবান্ধা"],
  ["Lalmonirhat", "লালমনিরহাট"],
  ["Nilphamari", "নীলফামারী"],
  ["Jamalpur", "জামালপুর"],
  ["Sirajganj", "সিরাজগঞ্জ"],
  ["Bogura", "বগুড়া"],
  ["Netrokona", "নেত্রকোনা"],
  ["Moulvibazar", "মৌলভীবাজার"],
  ["Habiganj", "হবিগঞ্জ"],
  ["Rangpur", "রংপুর"],
  ["Feni", "ফেনী"],
  ["Cumilla", "কুমিল্লা"],
  ["Barishal", "বরিশাল"],
  ["Dinajpur", "দিনাজপুর"],
  ["Thakurgaon", "ঠাকুরগাঁও"],
  ["Panchagarh", "পঞ্চগড়"],
  ["Naogaon", "নওগাঁ"],
  ["Rajshahi", "রাজশাহী"],
  ["Pabna", "পাবনা"],
  ["Tangail", "টাঙ্গাইল"],
  ["Mymensingh", "ময়মনসিংহ"],
  ["Kishoreganj", "কিশোরগঞ্জ"],
  ["Brahmanbaria", "ব্রাহ্মণবাড়িয়া"],
  ["Chandpur", "চাঁদপুর"],
  ["Noakhali", "নোয়াখালী"],
  ["Lakshmipur", "লক্ষ্মীপুর"],
  ["Bhola", "ভোলা"],
  ["Patuakhali", "পটুয়াখালী"],
  ["Barguna", "বরগুনা"],
  ["Satkhira", "সাতক্ষীরা"],
  ["Khulna", "খুলনা"],
  ["Jashore", "যশোর"],
  ["Kushtia", "কুষ্টিয়া"],
  ["Faridpur", "ফরিদপুর"],
  ["Madaripur", "মাদারীপুর"],
  ["Gopalganj", "গোপালগঞ্জ"],
  ["Shariatpur", "শরীয়তপুর"],
];
const DSE_COMPANIES: Names = [
  ["Grameenphone", "গ্রামীণফোন"],
  ["Robi", "রবি"],
  ["Square Pharma", "স্কয়ার ফার্মা"],
  ["BRAC Bank", "ব্র্যাক ব্যাংক"],
  ["Beximco", "বেক্সিমকো"],
  ["Walton", "ওয়ালটন"],
  ["Renata", "রেনাটা"],
  ["City Bank", "সিটি ব্যাংক"],
  ["Olympic Industries", "অলিম্পিক ইন্ডাস্ট্রিজ"],
  ["Summit Power", "সামিট পাওয়ার"],
  ["Bata Shoe", "বাটা সু"],
  ["Marico Bangladesh", "ম্যারিকো বাংলাদেশ"],
  ["Square Textiles", "স্কয়ার টেক্সটাইল"],
  ["Beacon Pharma", "বীকন ফার্মা"],
  ["Islami Bank", "ইসলামী ব্যাংক"],
  ["Dutch-Bangla Bank", "ডাচ্-বাংলা ব্যাংক"],
  ["Eastern Bank", "ইস্টার্ন ব্যাংক"],
  ["Prime Bank", "প্রাইম ব্যাংক"],
  ["Pubali Bank", "পূবালী ব্যাংক"],
  ["IDLC Finance", "আইডিএলসি ফাইন্যান্স"],
  ["Titas Gas", "তিতাস গ্যাস"],
  ["Padma Oil", "পদ্মা অয়েল"],
  ["Meghna Petroleum", "মেঘনা পেট্রোলিয়াম"],
  ["Unique Hotel", "ইউনিক হোটেল"],
  ["Apex Footwear", "এপেক্স ফুটওয়্যার"],
  ["Singer Bangladesh", "সিঙ্গার বাংলাদেশ"],
  ["Berger Paints", "বার্জার পেইন্টস"],
  ["ACI Limited", "এসিআই লিমিটেড"],
  ["Incepta Pharma", "ইনসেপ্টা ফার্মা"],
  ["Bashundhara Paper", "বসুন্ধরা পেপার"],
  ["Confidence Cement", "কনফিডেন্স সিমেন্ট"],
  ["Shahjalal Bank", "শাহজালাল ব্যাংক"],
];
const SECTORS: Names = [
  ["banks", "ব্যাংক"],
  ["textile stocks", "বস্ত্র"],
  ["pharma stocks", "ওষুধ"],
  ["power stocks", "বিদ্যুৎ"],
  ["telecom stocks", "টেলিযোগাযোগ"],
  ["insurers", "বিমা"],
  ["cement makers", "সিমেন্ট"],
  ["engineering stocks", "প্রকৌশল"],
];
const US_COMPANIES: Names = [
  ["Apple", "অ্যাপল"],
  ["Microsoft", "মাইক্রোসফট"],
  ["Amazon", "অ্যামাজন"],
  ["Nvidia", "এনভিডিয়া"],
  ["Tesla", "টেসলা"],
  ["Meta", "মেটা"],
  ["Alphabet", "অ্যালফাবেট"],
  ["Netflix", "নেটফ্লিক্স"],
  ["Intel", "ইন্টেল"],
  ["Oracle", "ওরাকল"],
  ["IBM", "আইবিএম"],
  ["Cisco", "সিসকো"],
  ["Adobe", "অ্যাডোবি"],
  ["Salesforce", "সেলসফোর্স"],
  ["AMD", "এএমডি"],
  ["Qualcomm", "কোয়ালকম"],
  ["Boeing", "বোয়িং"],
  ["Walmart", "ওয়ালমার্ট"],
  ["Nike", "নাইকি"],
  ["Disney", "ডিজনি"],
  ["PayPal", "পেপ্যাল"],
  ["Uber", "উবার"],
];
const TEAMS: Names = [
  ["Sri Lanka", "শ্রীলঙ্কা"],
  ["India", "ভারত"],
  ["Pakistan", "পাকিস্তান"],
  ["Afghanistan", "আফগানিস্তান"],
  ["Zimbabwe", "জিম্বাবুয়ে"],
  ["Ireland", "আয়ারল্যান্ড"],
  ["West Indies", "ওয়েস্ট ইন্ডিজ"],
  ["New Zealand", "নিউজিল্যান্ড"],
  ["England", "ইংল্যান্ড"],
  ["Australia", "অস্ট্রেলিয়া"],
  ["South Africa", "দক্ষিণ আফ্রিকা"],
  ["Netherlands", "নেদারল্যান্ডস"],
  ["Scotland", "স্কটল্যান্ড"],
  ["Nepal", "নেপাল"],
];
const VENUES: Names = [
  ["Mirpur", "মিরপুরে"],
  ["Chattogram", "চট্টগ্রামে"],
  ["Sylhet", "সিলেটে"],
  ["Khulna", "খুলনায়"],
];
const PORTS: Names = [
  ["Chattogram", "চট্টগ্রাম"],
  ["Mongla", "মোংলা"],
  ["Payra", "পায়রা"],
  ["Matarbari", "মাতারবাড়ী"],
  ["Benapole", "বেনাপোল"],
  ["Bhomra", "ভোমরা"],
  ["Pangaon", "পানগাঁও"],
];
const MONTHS: Names = [
  ["January", "জানুয়ারিতে"],
  ["February", "ফেব্রুয়ারিতে"],
  ["March", "মার্চে"],
  ["April", "এপ্রিলে"],
  ["May", "মে মাসে"],
  ["June", "জুনে"],
  ["July", "জুলাইয়ে"],
  ["August", "আগস্টে"],
  ["September", "সেপ্টেম্বরে"],
  ["October", "অক্টোবরে"],
  ["November", "নভেম্বরে"],
  ["December", "ডিসেম্বরে"],
];
const MARKETS: Names = [
  ["the EU", "ইউরোপীয় ইউনিয়নে"],
  ["the US", "যুক্তরাষ্ট্রে"],
  ["the UK", "যুক্তরাজ্যে"],
  ["Canada", "কানাডায়"],
  ["Japan", "জাপানে"],
  ["Australia", "অস্ট্রেলিয়ায়"],
];
const OIL_REASONS: Names = [
  ["as OPEC+ meets", "ওপেক প্লাস বৈঠকের আগে"],
  ["on China demand hopes", "চীনের চাহিদা বাড়ার আশায়"],
  ["after US stockpile data", "মার্কিন মজুতের তথ্যের পর"],
  ["on Middle East tensions", "মধ্যপ্রাচ্যে উত্তেজনায়"],
  ["as the dollar weakens", "ডলার দুর্বল হওয়ায়"],
  ["on Red Sea shipping fears", "লোহিত সাগরে জাহাজ চলাচলের শঙ্কায়"],
];
const RATE_REASONS: Names = [
  ["citing stubborn inflation", "মূল্যস্ফীতি নিয়ন্ত্রণে"],
  ["as growth slows", "প্রবৃদ্ধি কমে যাওয়ায়"],
  ["to support jobs", "কর্মসংস্থান বাড়াতে"],
  ["after a weak jobs report", "দুর্বল কর্মসংস্থান প্রতিবেদনের পর"],
  ["as wages climb", "মজুরি বাড়ায়"],
];
const CENTRAL_BANKERS: Names = [
  ["Lagarde", "লাগার্দ"],
  ["Lane", "লেন"],
  ["Schnabel", "শ্নাবেল"],
  ["Nagel", "নাগেল"],
  ["Villeroy", "ভিলেরয়"],
  ["de Guindos", "দে গুইন্দোস"],
  ["Holzmann", "হোলৎসমান"],
  ["Kazaks", "কাজাকস"],
  ["Centeno", "সেন্তেনো"],
];

export const TOPICS: readonly Topic[] = [
  {
    key: "fed-rate",
    category: "economy",
    instruments: ["DXY", "EURUSD"],
    headlines: {
      en: [
        (f) =>
          `Fed ${f.up ? "raises" : "cuts"} rates by ${f.bps} basis points ${en(RATE_REASONS, f.why)}`,
        (f) =>
          `Federal Reserve ${f.up ? "hikes" : "lowers"} key rate ${f.bps}bp ${en(RATE_REASONS, f.why)}`,
        (f) =>
          `US central bank ${f.up ? "lifts" : "trims"} benchmark rate by ${f.bps} bps in ${en(MONTHS, f.who)}`,
      ],
    },
    summary: {
      en: (f) =>
        `The ${en(MONTHS, f.who)} decision moved the dollar ${pct(f)}% as traders repriced the outlook.`,
    },
    rewrite: {
      en: (f) =>
        `Markets repriced the outlook and the dollar moved ${pct(f)}% after the Fed's ${en(MONTHS, f.who)} move.`,
    },
  },
  {
    key: "bb-rate",
    category: "economy",
    instruments: ["USDBDT"],
    headlines: {
      en: [
        (f) =>
          `Bangladesh Bank ${f.up ? "raises" : "cuts"} policy rate by ${f.bps} bps ${en(RATE_REASONS, f.why)}`,
        (f) =>
          `Bangladesh central bank ${f.up ? "hikes" : "lowers"} repo rate ${f.bps}bp in ${en(MONTHS, f.who)}`,
      ],
      bn: [
        (f) =>
          `${bn(RATE_REASONS, f.why)} নীতি সুদহার ${bnNum(f.bps)} বেসিস পয়েন্ট ${f.up ? "বাড়াল" : "কমাল"} বাংলাদেশ ব্যাংক`,
        (f) => `${bn(MONTHS, f.who)} নীতি সুদহার ${f.up ? "বাড়ল" : "কমল"} ${bnNum(f.bps)} বেসিস পয়েন্ট`,
        (f) =>
          `রেপো হার ${f.up ? "বাড়িয়েছে" : "কমিয়েছে"} কেন্দ্রীয় ব্যাংক, ${bn(RATE_REASONS, f.why)} সিদ্ধান্ত`,
      ],
    },
    summary: {
      en: (f) =>
        `The taka moved ${pct(f)}% against the dollar after the ${en(MONTHS, f.who)} announcement.`,
      bn: (f) => `${bn(MONTHS, f.who)} ঘোষণার পর ডলারের বিপরীতে টাকার মান ${bnPct(f)} শতাংশ বদলেছে।`,
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
          `S&P 500 ${f.up ? "rises" : "falls"} ${pct(f)}% as ${en(US_COMPANIES, f.who)} ${f.up ? "rallies" : "slides"}`,
        (f) =>
          `Wall Street ${f.up ? "climbs" : "drops"}: S&P 500 ${f.up ? "up" : "down"} ${pct(f)}% on ${en(US_COMPANIES, f.who)}`,
        (f) =>
          `US stocks ${f.up ? "gain" : "lose"} ${pct(f)}% led by ${en(US_COMPANIES, f.who)} shares`,
      ],
    },
    summary: {
      en: (f) =>
        `The benchmark index closed ${f.up ? "higher" : "lower"} by ${pct(f)} percent ${en(RATE_REASONS, f.why)}.`,
    },
    rewrite: {
      en: (f) =>
        `${en(US_COMPANIES, f.who)} drove the index ${f.up ? "up" : "down"} ${pct(f)} percent by the close.`,
    },
  },
  {
    key: "dsex",
    category: "markets",
    instruments: ["DSEX"],
    headlines: {
      en: [
        (f) =>
          `Dhaka stocks ${f.up ? "rise" : "fall"} ${pct(f)}% as ${en(SECTORS, f.who)} ${f.up ? "lead" : "drag"}`,
        (f) => `DSEX ${f.up ? "gains" : "sheds"} ${pct(f)} percent on ${en(SECTORS, f.who)}`,
      ],
      bn: [
        (f) =>
          `${bn(SECTORS, f.who)} খাতের নেতৃত্বে ডিএসইএক্স সূচক ${bnPct(f)} শতাংশ ${f.up ? "বেড়েছে" : "কমেছে"}`,
        (f) =>
          `ঢাকার শেয়ারবাজারে সূচক ${f.up ? "বাড়ল" : "কমল"} ${bnPct(f)} শতাংশ, এগিয়ে ${bn(SECTORS, f.who)}`,
        (f) =>
          `পুঁজিবাজারে ${f.up ? "উত্থান" : "দরপতন"}, ডিএসইএক্স ${bnPct(f)}%, আলোচনায় ${bn(SECTORS, f.who)}`,
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
        (f) =>
          `${en(DSE_COMPANIES, f.who)} shares ${f.up ? "jump" : "slip"} ${pct(f)}% after earnings`,
        (f) =>
          `${en(DSE_COMPANIES, f.who)} stock ${f.up ? "up" : "down"} ${pct(f)}% on quarterly results`,
      ],
      bn: [
        (f) =>
          `${bnGen(bn(DSE_COMPANIES, f.who))} শেয়ারদর ${bnPct(f)} শতাংশ ${f.up ? "বেড়েছে" : "কমেছে"}`,
        (f) => `মুনাফা প্রকাশের পর ${bnGen(bn(DSE_COMPANIES, f.who))} শেয়ার ${f.up ? "চাঙা" : "নিম্নমুখী"}`,
      ],
    },
    summary: {
      en: (f) => `Quarterly profit was ${f.n * 12} crore taka, the company said.`,
      bn: (f) => `কোম্পানিটি ত্রৈমাসিকে ${bnNum(f.n * 12)} কোটি টাকা মুনাফা করেছে।`,
    },
    rewrite: {
      en: (f) =>
        `${en(DSE_COMPANIES, f.who)} reported ${f.n * 12} crore taka in profit for the quarter.`,
      bn: (f) => `তিন মাসে ${bnGen(bn(DSE_COMPANIES, f.who))} মুনাফা ${bnNum(f.n * 12)} কোটি টাকা।`,
    },
  },
  {
    key: "ecb-euro",
    category: "currencies",
    instruments: ["EURUSD"],
    headlines: {
      en: [
        (f) =>
          `Euro ${f.up ? "strengthens" : "weakens"} ${pct(f)}% after ${en(CENTRAL_BANKERS, f.who)} remarks`,
        (f) =>
          `EUR/USD ${f.up ? "rises" : "falls"} ${pct(f)}% as ECB's ${en(CENTRAL_BANKERS, f.who)} signals path`,
        (f) =>
          `Euro ${f.up ? "gains" : "slides"} on comments from ECB's ${en(CENTRAL_BANKERS, f.who)}`,
      ],
    },
    summary: {
      en: (f) =>
        `The single currency moved ${pct(f)}% against the dollar in European trading ${en(RATE_REASONS, f.why)}.`,
    },
    rewrite: {
      en: (f) =>
        `Comments from ${en(CENTRAL_BANKERS, f.who)} pushed the currency ${pct(f)}% in Europe.`,
    },
  },
  {
    key: "oil",
    category: "commodities",
    instruments: ["BRENT", "CL"],
    headlines: {
      en: [
        (f) => `Oil ${f.up ? "climbs" : "falls"} ${pct(f)}% ${en(OIL_REASONS, f.why)}`,
        (f) => `Brent crude ${f.up ? "up" : "down"} ${pct(f)}% ${en(OIL_REASONS, f.why)}`,
      ],
      bn: [
        (f) =>
          `${bn(OIL_REASONS, f.why)} বিশ্ববাজারে তেলের দাম ${bnPct(f)} শতাংশ ${f.up ? "বেড়েছে" : "কমেছে"}`,
        (f) => `${bn(OIL_REASONS, f.why)} ব্রেন্ট তেলের দাম ${f.up ? "বাড়ল" : "কমল"} ${bnPct(f)}%`,
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
          `Gold ${f.up ? "hits record" : "retreats"} ${en(OIL_REASONS, f.why)} as investors ${f.up ? "seek safety" : "take profits"}`,
        (f) => `Gold prices ${f.up ? "rise" : "fall"} ${pct(f)}% ${en(OIL_REASONS, f.why)}`,
      ],
      bn: [
        (f) => `স্বর্ণের দাম ভরিতে ${bnNum(f.n * 100)} টাকা ${f.up ? "বাড়ল" : "কমল"}`,
        (f) => `সোনার দাম ${f.up ? "বেড়েছে" : "কমেছে"} ভরিতে ${bnNum(f.n * 100)} টাকা`,
      ],
    },
    summary: {
      en: (f) => `Spot gold moved ${pct(f)}% in Asian trading to $${2_300 + f.n * 10} an ounce.`,
      bn: (f) =>
        `বাংলাদেশ জুয়েলার্স সমিতি ${bn(MONTHS, f.who)} নতুন দাম ঘোষণা করেছে, ভরি ${bnNum(110_000 + f.n * 100)} টাকা।`,
    },
    rewrite: {
      en: (f) => `In Asia the metal moved ${pct(f)}% on the spot market.`,
      bn: (f) => `জুয়েলার্স সমিতির ঘোষণায় ভরিপ্রতি ${bnNum(110_000 + f.n * 100)} টাকা দর কার্যকর হচ্ছে।`,
    },
  },
  {
    key: "garments",
    category: "economy",
    instruments: [],
    headlines: {
      en: [
        (f) =>
          `Bangladesh garment exports to ${en(MARKETS, f.why)} ${f.up ? "rise" : "fall"} ${pct(f)}% in ${en(MONTHS, f.who)}`,
        (f) =>
          `RMG shipments to ${en(MARKETS, f.why)} ${f.up ? "up" : "down"} ${pct(f)}% in ${en(MONTHS, f.who)}`,
      ],
      bn: [
        (f) =>
          `${bn(MONTHS, f.who)} ${bn(MARKETS, f.why)} তৈরি পোশাক রপ্তানি ${bnPct(f)} শতাংশ ${f.up ? "বেড়েছে" : "কমেছে"}`,
        (f) => `${bn(MARKETS, f.why)} পোশাক রপ্তানিতে ${f.up ? "প্রবৃদ্ধি" : "ধস"}, ${bnPct(f)} শতাংশ`,
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
        (f) => `Floods cut off ${f.n} villages in ${en(DISTRICTS, f.who)}`,
        (f) => `Monsoon flooding strands residents of ${f.n} villages in ${en(DISTRICTS, f.who)}`,
      ],
      bn: [
        (f) => `${bnLoc(bn(DISTRICTS, f.who))} বন্যায় ${bnNum(f.n)}টি গ্রাম প্লাবিত`,
        (f) => `বন্যায় পানিবন্দী ${bnGen(bn(DISTRICTS, f.who))} ${bnNum(f.n)} গ্রামের মানুষ`,
        (f) => `টানা বর্ষণে ${bnGen(bn(DISTRICTS, f.who))} ${bnNum(f.n)} গ্রাম পানির নিচে`,
      ],
    },
    summary: {
      en: (f) =>
        `Rivers in ${en(DISTRICTS, f.who)} rose ${f.n % 90} cm above danger level after days of heavy rain.`,
      bn: (f) =>
        `কয়েক দিনের ভারী বর্ষণে ${bnLoc(bn(DISTRICTS, f.who))} নদীর পানি বিপৎসীমার ${bnNum(f.n % 90)} সেন্টিমিটার ওপরে।`,
    },
    rewrite: {
      en: (f) => `Days of downpour pushed ${en(DISTRICTS, f.who)}'s rivers past the danger mark.`,
      bn: (f) => `টানা বৃষ্টিতে ${bnGen(bn(DISTRICTS, f.who))} নদীগুলো বিপৎসীমা ছাড়িয়ে বইছে।`,
    },
  },
  {
    key: "cricket",
    category: "sports",
    instruments: [],
    headlines: {
      en: [
        (f) => `Bangladesh beat ${en(TEAMS, f.who)} by ${f.n} runs in ${en(VENUES, f.why)}`,
        (f) => `Tigers win by ${f.n} runs against ${en(TEAMS, f.who)}`,
      ],
      bn: [
        (f) => `${bn(TEAMS, f.who)}কে ${bnNum(f.n)} রানে হারাল বাংলাদেশ`,
        (f) =>
          `${bn(VENUES, f.why)} ${bnGen(bn(TEAMS, f.who))} বিপক্ষে ${bnNum(f.n)} রানের জয় পেল টাইগাররা`,
      ],
    },
    summary: {
      en: (f) =>
        `The win in ${en(VENUES, f.why)} levels the series against ${en(TEAMS, f.who)} ahead of the final match.`,
      bn: (f) =>
        `${bn(VENUES, f.why)} এই জয়ে ${bnGen(bn(TEAMS, f.who))} বিপক্ষে সিরিজে সমতা ফেরাল বাংলাদেশ।`,
    },
    rewrite: {
      en: (f) =>
        `Bangladesh square the series with ${en(TEAMS, f.who)}, the decider still to come.`,
      bn: (f) => `শেষ ম্যাচের আগে ${bnGen(bn(TEAMS, f.who))} সঙ্গে সিরিজ এখন সমতায়।`,
    },
  },
  {
    key: "port",
    category: "business",
    instruments: [],
    headlines: {
      en: [
        (f) => `${en(PORTS, f.who)} port congestion strands ${f.n} ships`,
        (f) => `${f.n} vessels wait outside ${en(PORTS, f.who)} port`,
      ],
      bn: [
        (f) => `${bn(PORTS, f.who)} বন্দরে জটে আটকা ${bnNum(f.n)} জাহাজ`,
        (f) => `${bn(PORTS, f.who)} বন্দরের বহির্নোঙরে অপেক্ষায় ${bnNum(f.n)}টি জাহাজ`,
      ],
    },
    summary: {
      en: (f) =>
        `Importers warned of delays of ${2 + (f.why % 9)} days as container yards filled up.`,
      bn: (f) => `কনটেইনার ইয়ার্ড ভরে যাওয়ায় পণ্য খালাসে ${bnNum(2 + (f.why % 9))} দিন পর্যন্ত দেরি হচ্ছে।`,
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
          `${en(US_COMPANIES, f.who)} shares ${f.up ? "rise" : "fall"} ${pct(f)}% after sales ${f.up ? "beat" : "miss"}`,
        (f) =>
          `${en(US_COMPANIES, f.who)} ${f.up ? "beats" : "misses"} estimates; stock ${f.up ? "up" : "down"} ${pct(f)}%`,
      ],
    },
    summary: {
      en: (f) => `Revenue came in at $${80 + f.n} billion for the quarter.`,
    },
    rewrite: {
      en: (f) => `${en(US_COMPANIES, f.who)}'s quarterly sales reached $${80 + f.n} billion.`,
    },
  },
  {
    key: "election",
    category: "politics",
    instruments: [],
    headlines: {
      en: [
        (f) =>
          `Election Commission sets polls for ${f.n} municipalities in ${en(DISTRICTS, f.who)}`,
        (f) => `Local elections announced in ${f.n} ${en(DISTRICTS, f.who)} municipalities`,
      ],
      bn: [
        (f) => `${bnGen(bn(DISTRICTS, f.who))} ${bnNum(f.n)} পৌরসভায় নির্বাচনের তফসিল ঘোষণা`,
        (f) => `${bnGen(bn(DISTRICTS, f.who))} ${bnNum(f.n)}টি পৌরসভায় ভোটের তারিখ দিল ইসি`,
      ],
    },
    summary: {
      en: (f) => `Nominations open in ${en(MONTHS, f.why)}, the commission said.`,
      bn: (f) => `${bn(MONTHS, f.why)} মনোনয়নপত্র জমা নেওয়া হবে বলে জানিয়েছে কমিশন।`,
    },
    rewrite: {
      en: (f) =>
        `Candidates in ${en(DISTRICTS, f.who)} can file nominations from ${en(MONTHS, f.why)}.`,
      bn: (f) =>
        `${bnGen(bn(DISTRICTS, f.who))} প্রার্থীরা ${bn(MONTHS, f.why)} মনোনয়নপত্র জমা দিতে পারবেন।`,
    },
  },
];

export function randomFacts(random: Random): Facts {
  return {
    pct: random.int(1, 39) / 10,
    up: random.chance(0.5),
    n: random.int(3, 60),
    bps: random.pick([25, 50, 75]),
    who: random.int(0, 9_999),
    why: random.int(0, 9_999),
    detail: random.int(0, 2 ** 30),
  };
}

// A story's own detail: someone on record saying something, somewhere, some day. Two stories of
// one beat rarely share it; a copy keeps it word for word and a rewrite says it another way
// (the second wording of each claim), as a second desk quoting the same person would.
const PEOPLE: Names = [
  ["Abdul Karim", "আবদুল করিম"],
  ["Nasrin Akter", "নাসরিন আক্তার"],
  ["Rafiqul Islam", "রফিকুল ইসলাম"],
  ["Shirin Sultana", "শিরিন সুলতানা"],
  ["Mahbub Alam", "মাহবুব আলম"],
  ["Farhana Yasmin", "ফারহানা ইয়াসমিন"],
  ["Kamal Hossain", "কামাল হোসেন"],
  ["Tahmina Begum", "তাহমিনা বেগম"],
  ["Jahangir Kabir", "জাহাঙ্গীর কবির"],
  ["Rokeya Khatun", "রোকেয়া খাতুন"],
  ["Selim Reza", "সেলিম রেজা"],
  ["Anisur Rahman", "আনিসুর রহমান"],
  ["Sharmin Chowdhury", "শারমিন চৌধুরী"],
  ["Habibur Rahman", "হাবিবুর রহমান"],
  ["Mitali Das", "মিতালী দাস"],
  ["Zahid Hasan", "জাহিদ হাসান"],
  ["Priya Saha", "প্রিয়া সাহা"],
  ["Tanvir Ahmed", "তানভীর আহমেদ"],
];
const ROLES: Names = [
  ["a spokesman", "মুখপাত্র"],
  ["the chairman", "চেয়ারম্যান"],
  ["an analyst", "বিশ্লেষক"],
  ["the director", "পরিচালক"],
  ["a senior official", "ঊর্ধ্বতন কর্মকর্তা"],
  ["the secretary", "সচিব"],
  ["a trader", "ব্যবসায়ী"],
];
const WEEKDAYS: Names = [
  ["Sunday", "রোববার"],
  ["Monday", "সোমবার"],
  ["Tuesday", "মঙ্গলবার"],
  ["Wednesday", "বুধবার"],
  ["Thursday", "বৃহস্পতিবার"],
  ["Friday", "শুক্রবার"],
  ["Saturday", "শনিবার"],
];
/** Each claim twice: as the first desk words it, and as a rewrite does. */
const CLAIMS: readonly (readonly [readonly [string, string], readonly [string, string]])[] = [
  [
    ["the figures were in line with expectations", "হিসাব প্রত্যাশা অনুযায়ীই এসেছে"],
    ["the numbers matched what had been expected", "যেমনটা ধারণা করা হয়েছিল, সংখ্যাও তেমনই"],
  ],
  [
    ["more data would come next week", "আগামী সপ্তাহে আরও তথ্য আসবে"],
    ["further figures are due in the coming week", "সামনের সপ্তাহে বাকি পরিসংখ্যান প্রকাশ হবে"],
  ],
  [
    ["the situation was being watched closely", "পরিস্থিতি নিবিড়ভাবে পর্যবেক্ষণ করা হচ্ছে"],
    ["officials were keeping a close eye on events", "কর্মকর্তারা পরিস্থিতির ওপর কড়া নজর রাখছেন"],
  ],
  [
    ["a committee would review the decision", "একটি কমিটি সিদ্ধান্তটি পর্যালোচনা করবে"],
    ["the decision will go before a review panel", "সিদ্ধান্তটি খতিয়ে দেখতে কমিটি গঠন করা হয়েছে"],
  ],
  [
    ["costs had risen sharply this year", "এ বছর খরচ অনেক বেড়েছে"],
    ["this year expenses went up steeply", "চলতি বছরে ব্যয় উল্লেখযোগ্য হারে বৃদ্ধি পেয়েছে"],
  ],
  [
    ["no change was planned for now", "আপাতত কোনো পরিবর্তনের পরিকল্পনা নেই"],
    ["nothing would change for the time being", "এই মুহূর্তে কিছুই বদলানো হচ্ছে না"],
  ],
  [
    ["talks with traders were continuing", "ব্যবসায়ীদের সঙ্গে আলোচনা চলছে"],
    ["discussions with merchants went on", "বণিকদের সঙ্গে বৈঠক অব্যাহত রয়েছে"],
  ],
  [
    ["the impact would be clear within a month", "এক মাসের মধ্যে প্রভাব বোঝা যাবে"],
    ["the effect should show inside four weeks", "চার সপ্তাহের ভেতরেই ফলাফল স্পষ্ট হবে"],
  ],
  [
    ["local businesses had been hit hardest", "স্থানীয় ব্যবসায়ীরাই সবচেয়ে বেশি ক্ষতিগ্রস্ত"],
    ["shops in the area took the worst of it", "এলাকার দোকানিরাই সবচেয়ে বড় ধাক্কা খেয়েছেন"],
  ],
  [
    ["a full report would be published soon", "শিগগির পূর্ণাঙ্গ প্রতিবেদন প্রকাশ করা হবে"],
    ["the complete findings are to be released shortly", "অল্প দিনের মধ্যেই বিস্তারিত ফলাফল জানানো হবে"],
  ],
];

/** The story's detail sentence; `rewrite` words the same person, place, day and claim anew. */
export function detailSentence(f: Facts, language: Language, rewrite = false): string {
  let d = f.detail;
  const next = (n: number) => {
    const i = d % n;
    d = Math.floor(d / n);
    return i;
  };
  const person = PEOPLE[next(PEOPLE.length)] as readonly [string, string];
  const role = ROLES[next(ROLES.length)] as readonly [string, string];
  const place = DISTRICTS[next(DISTRICTS.length)] as readonly [string, string];
  const day = WEEKDAYS[next(WEEKDAYS.length)] as readonly [string, string];
  const claim = CLAIMS[next(CLAIMS.length)]?.[rewrite ? 1 : 0] as readonly [string, string];
  if (language === "bn") {
    return rewrite
      ? `${day[1]} ${bnGen(place[1])} ${role[1]} ${person[1]} সাংবাদিকদের জানান, ${claim[1]}।`
      : `${bnLoc(place[1])} ${role[1]} ${person[1]} ${day[1]} বলেন, ${claim[1]}।`;
  }
  return rewrite
    ? `On ${day[0]}, ${role[0]} ${person[0]} told reporters in ${place[0]} that ${claim[0]}.`
    : `${person[0]}, ${role[0]} in ${place[0]}, said on ${day[0]} that ${claim[0]}.`;
}

/** A story's summary as its first desk writes it: the topic's sentence and the story's detail. */
export function storySummary(topic: Topic, f: Facts, language: Language): string {
  const lead = topic.summary[language]?.(f);
  return lead === undefined ? "" : `${lead} ${detailSentence(f, language)}`;
}

/** The same facts as another desk words them. */
export function rewriteSummary(topic: Topic, f: Facts, language: Language): string {
  const lead = topic.rewrite[language]?.(f) ?? topic.summary[language]?.(f);
  return lead === undefined ? "" : `${lead} ${detailSentence(f, language, true)}`;
}

/** Topics an outlet writing in `language` can cover. */
export function topicsIn(language: Language): Topic[] {
  return TOPICS.filter((t) => t.headlines[language] !== undefined);
}

export type NameType = "person" | "place" | "organization";

// Bodies the headlines name by themselves, outside the subject lists.
const INSTITUTIONS: Names = [
  ["Bangladesh Bank", "বাংলাদেশ ব্যাংক"],
  ["Federal Reserve", "ফেডারেল রিজার্ভ"],
  ["Fed", "ফেড"],
  ["ECB", "ইসিবি"],
  ["OPEC+", "ওপেক প্লাস"],
  ["Election Commission", "নির্বাচন কমিশন"],
];
const COUNTRIES: Names = [
  ["Bangladesh", "বাংলাদেশ"],
  ["Dhaka", "ঢাকা"],
];

/**
 * Every name the corpus writes, with what it names: the simulator's own answer key for entities
 * (its chat endpoint, simulator/chat.ts). Bangla forms are stems; the text carries them with a
 * case ending attached (সিলেটের), so a reader matches them as prefixes of a word.
 */
export const NAMES: readonly { en: string; bn: string; type: NameType }[] = [
  ...[DISTRICTS, PORTS, TEAMS, COUNTRIES].flatMap((l) => named(l, "place")),
  ...named(MARKETS, "place").map((n) => ({ ...n, en: n.en.replace(/^the /, "") })),
  ...[PEOPLE, CENTRAL_BANKERS].flatMap((l) => named(l, "person")),
  ...[DSE_COMPANIES, US_COMPANIES, INSTITUTIONS].flatMap((l) => named(l, "organization")),
];

function named(list: Names, type: NameType) {
  return list.map(([en, bn]) => ({ en, bn, type }));
}
