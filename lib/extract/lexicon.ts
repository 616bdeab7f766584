import type { Category } from "./types";

/**
 * The local provider's word lists: category keywords and gazetteers of places and
 * organisations, English and Bangla side by side.
 *
 * A keyword is matched against whole words: "tax" is the word tax, never taxi; a trailing `*`
 * matches any word that starts with it ("elect*": election, elected). Bangla words take their
 * case endings on the end of the stem (বন্যা → বন্যায়, বন্যার), so Bangla stems carry `*`
 * unless a longer word starts with them and means something else (গোল, goal: গোলাগুলি is a
 * gunfight). Several words match as a phrase ("interest rate*").
 *
 * Written for news headlines in general; the simulator's corpus was not the source.
 */
// biome-ignore format: word lists read better packed several to a line
export const CATEGORY_KEYWORDS: Readonly<Record<Category, readonly string[]>> = {
  politics: [
    "election*", "elect", "elected", "vote*", "voting", "voter*", "ballot*", "parliament*",
    "lawmaker*", "mp", "mps", "minister*", "cabinet", "prime minister", "president", "opposition",
    "party", "parties", "campaign*", "poll", "polls", "senate", "congress", "referendum",
    "coalition", "awami", "bnp", "jamaat*", "chief adviser", "adviser*", "constitution*", "hartal",
    "sworn", "political", "politic*", "govt", "government", "নির্বাচন*", "ভোট*", "সংসদ*",
    "মন্ত্রী*", "মন্ত্রিসভা*", "প্রধানমন্ত্রী*", "রাষ্ট্রপতি*", "বিরোধী*", "রাজনীতি*", "রাজনৈতিক*",
    "আওয়ামী*", "বিএনপি*", "জামায়াত*", "উপদেষ্টা*", "সংবিধান*", "হরতাল*", "সমাবেশ*", "তফসিল*",
    "শপথ*", "সরকার*", "ইসি",
  ],
  economy: [
    "inflation*", "gdp", "growth", "budget*", "tax", "taxes", "vat", "remittance*", "reserve*",
    "export*", "import*", "central bank", "interest rate*", "policy rate*", "monetary", "fiscal",
    "imf", "world bank", "adb", "econom*", "recession*", "unemployment", "wage*", "subsid*",
    "revenue*", "deficit*", "debt*", "pay scale", "price*", "মূল্যস্ফীতি*", "জিডিপি*", "প্রবৃদ্ধি*",
    "বাজেট*", "আয়কর*", "করমুক্ত*", "ভ্যাট*", "রেমিট্যান্স*", "প্রবাসী আয়*", "রিজার্ভ*",
    "রপ্তানি*", "আমদানি*", "সুদহার*", "মুদ্রানীতি*", "অর্থনীতি*", "অর্থনৈতিক*", "আইএমএফ*",
    "বিশ্বব্যাংক*", "ঋণ*", "রাজস্ব*", "ঘাটতি*", "ভর্তুকি*", "মজুরি*", "বেতন*", "দাম", "দামে",
    "দামের", "মূল্য",
  ],
  business: [
    "company", "companies", "firm", "firms", "profit*", "earnings", "ceo", "merger*",
    "acquisition*", "acquire*", "factory", "factories", "garment*", "industry", "industries",
    "layoff*", "retail*", "sales", "plc", "ltd", "corporate", "business*", "invest", "invests",
    "investment*", "deal", "startup*", "brand*", "launch*", "কোম্পানি*", "মুনাফা*", "লোকসান*",
    "কারখানা*", "পোশাক*", "শিল্প", "শিল্পখাত*", "শিল্পনগর*", "ব্যবসা*", "ব্যবসায়ী*", "বিনিয়োগ",
    "বিনিয়োগে", "উদ্যোক্তা*", "লভ্যাংশ*",
  ],
  markets: [
    "stock", "stocks", "share", "shares", "index", "dsex", "ds30", "dse", "cse", "stock exchange",
    "nasdaq", "dow", "s&p", "sensex", "nifty", "nikkei", "ftse", "bourse*", "equit*", "investors",
    "turnover", "bull*", "bear*", "ipo", "ipos", "dividend*", "wall street", "trading", "market*",
    "premarket", "শেয়ার*", "পুঁজিবাজার*", "শেয়ারবাজার*", "সূচক*", "ডিএসই*", "ডিএসইএক্স*",
    "সিএসই*", "লেনদেন*", "বিনিয়োগকারী*", "আইপিও*", "দরপতন*", "বাজারে", "বাজার",
  ],
  currencies: [
    "dollar*", "taka", "rupee*", "euro", "euros", "yen", "yuan", "sterling", "exchange rate*",
    "forex", "currenc*", "usd", "bdt", "eur", "greenback", "devaluation", "peso", "ডলার*",
    "টাকার মান*", "বিনিময় হার*", "মুদ্রা*", "রুপি*", "ইউরো*", "ইয়েন*", "টাকার",
  ],
  commodities: [
    "oil", "crude", "brent", "wti", "gold", "silver", "copper", "wheat", "rice", "sugar",
    "palm oil", "lng", "gas", "opec*", "commodit*", "onion*", "fuel", "diesel", "petrol*", "তেল*",
    "জ্বালানি*", "সোনা*", "স্বর্ণ*", "গম", "গমের", "চাল", "চালের", "চিনি*", "পেঁয়াজ*", "এলএনজি*",
    "গ্যাস*", "ওপেক*", "ডিজেল*", "কেরোসিন*", "ইলিশ*",
  ],
  technology: [
    "tech*", "ai", "artificial intelligence", "software", "app", "apps", "smartphone*", "iphone*",
    "internet", "cyber*", "chip", "chips", "chipmaker*", "semiconductor*", "google", "microsoft",
    "facebook", "5g", "4g", "4.5g", "broadband", "digital", "robot*", "computer*", "telecom*",
    "starlink", "chatgpt", "openai", "online", "mobile", "প্রযুক্তি*", "ইন্টারনেট*", "মোবাইল*",
    "স্মার্টফোন*", "সফটওয়্যার*", "ডিজিটাল*", "সাইবার*", "কৃত্রিম বুদ্ধিমত্তা*", "এআই*", "টেলিকম*",
    "অ্যাপ*", "ফাইভজি*",
  ],
  science: [
    "scien*", "research*", "study", "nasa", "space", "telescope*", "planet*", "astronom*",
    "physic*", "genom*", "species", "fossil*", "discover*", "satellite*", "rocket*", "moon", "mars",
    "variety", "বিজ্ঞান*", "গবেষণা*", "গবেষক*", "মহাকাশ*", "নাসা*", "টেলিস্কোপ*", "উপগ্রহ*",
    "প্রজাতি*", "উদ্ভাবন*", "বিজ্ঞানী*", "গ্রহের",
  ],
  health: [
    "health*", "hospital*", "dengue", "covid*", "virus*", "vaccin*", "disease*", "doctor*",
    "patient*", "outbreak*", "cancer", "medic*", "malaria", "cholera", "who", "illness*",
    "স্বাস্থ্য*", "হাসপাতাল*", "ডেঙ্গু*", "করোনা*", "টিকা*", "রোগ*", "রোগী*", "চিকিৎসা*",
    "চিকিৎসক*", "ডাক্তার*", "ভাইরাস*", "ক্যানসার*", "মহামারি*", "আক্রান্ত*",
  ],
  environment: [
    "climate", "pollution", "emission*", "carbon", "forest*", "wildlife", "erosion", "environment*",
    "sundarbans", "deforest*", "plastic*", "air quality", "biodiversity", "salinity",
    "conservation", "saline", "saltwater", "পরিবেশ*", "জলবায়ু*", "দূষণ*", "কার্বন*", "বনভূমি*",
    "সুন্দরবন*", "বায়ুদূষণ*", "লবণাক্ত*", "প্লাস্টিক*", "বন্যপ্রাণী*", "নদীভাঙন*",
  ],
  weather: [
    "weather", "rain*", "storm*", "cyclone*", "flood*", "heatwave*", "heat wave*", "cold wave*",
    "fog", "monsoon", "temperature*", "forecast*", "met office", "depression", "low pressure",
    "tornado*", "hurricane*", "typhoon*", "drought*", "snow*", "downpour*", "আবহাওয়া*", "বৃষ্টি*",
    "বর্ষণ*", "ঝড়*", "ঘূর্ণিঝড়*", "বন্যা*", "বন্যার্ত*", "শৈত্যপ্রবাহ*", "তাপপ্রবাহ*", "কুয়াশা*",
    "তাপমাত্রা*", "নিম্নচাপ*", "লঘুচাপ*", "সতর্কসংকেত*", "শীতের", "পানিবন্দী*", "প্লাবিত*",
  ],
  sports: [
    "cricket*", "football*", "match", "matches", "odi", "odis", "t20*", "wicket*", "goal", "goals",
    "tournament*", "premier league", "world cup", "championship*", "olympic*", "fifa", "icc", "bpl",
    "innings", "stadium", "coach", "captain", "player*", "striker", "batsman", "bowler*", "century",
    "retires", "qualifier*", "beat", "win", "wins", "ক্রিকেট*", "ফুটবল*", "ম্যাচ*", "উইকেট*", "গোল",
    "গোলে", "টুর্নামেন্ট*", "বিশ্বকাপ*", "সিরিজ*", "অধিনায়ক*", "খেলোয়াড়*", "স্টেডিয়াম*",
    "বিপিএল*", "ওয়ানডে*", "টি-টোয়েন্টি*", "টেস্ট*", "সেঞ্চুরি*", "অবসর*", "চ্যাম্পিয়ন*",
  ],
  crime: [
    "police", "arrest*", "murder*", "kill", "killing*", "rape*", "robbery", "robber*", "theft",
    "drug", "drugs", "narcotic*", "court", "sentenced", "jail*", "prison*", "fraud*", "corruption",
    "smuggl*", "gang*", "stabbed", "rab", "detective*", "crime*", "criminal*", "abduct*", "kidnap*",
    "extortion", "raid*", "sabotage", "পুলিশ*", "গ্রেপ্তার*", "গ্রেফতার*", "হত্যা*", "খুন*",
    "ধর্ষণ*", "ডাকাতি*", "চুরি*", "মাদক*", "আদালত*", "হাইকোর্ট*", "কারাগার*", "কারাদণ্ড*",
    "দুর্নীতি*", "চোরাচালান*", "র‍্যাব*", "অপহরণ*", "চাঁদাবাজি*", "মামলা*", "অভিযান*", "নাশকতা*",
    "দখলকারী*",
  ],
  world: [
    "un", "united nations", "gaza", "israel*", "ukrain*", "russia*", "nato", "foreign", "diplomat*",
    "embassy", "summit", "war", "ceasefire", "refugee*", "rohingya", "india", "china", "myanmar",
    "pakistan", "iran", "border", "জাতিসংঘ*", "গাজা*", "ইসরায়েল*", "ইউক্রেন*", "রাশিয়া*",
    "ন্যাটো*", "যুদ্ধ*", "যুদ্ধবিরতি*", "পররাষ্ট্র*", "কূটনৈতিক*", "দূতাবাস*", "শরণার্থী*",
    "রোহিঙ্গা*", "ভারতের", "ভারত", "মিয়ানমার*", "সীমান্ত*", "প্রত্যাবাসন*",
  ],
  entertainment: [
    "film*", "movie*", "cinema*", "actor*", "actress*", "singer*", "song*", "music*", "concert*",
    "netflix", "drama*", "celebrit*", "award*", "oscar*", "bollywood", "dhallywood", "web series",
    "box office", "album*", "festival", "book fair", "চলচ্চিত্র*", "সিনেমা*", "অভিনেতা*",
    "অভিনেত্রী*", "অভিনয়*", "গান", "গানের", "শিল্পী*", "কনসার্ট*", "নাটক*", "ওয়েব সিরিজ*",
    "পুরস্কার*", "প্রেক্ষাগৃহ*", "দর্শক*", "বইমেলা*",
  ],
  education: [
    "school*", "university", "universities", "student*", "exam*", "teacher*", "education*",
    "curriculum", "admission*", "ssc", "hsc", "campus", "scholarship*", "classroom*", "শিক্ষা*",
    "শিক্ষার্থী*", "শিক্ষক*", "বিশ্ববিদ্যালয়*", "স্কুল*", "বিদ্যালয়*", "পরীক্ষা*", "এসএসসি*",
    "এইচএসসি*", "ভর্তি*", "শিক্ষাক্রম*", "ক্যাম্পাস*", "বৃত্তি*", "শিক্ষাবর্ষ*",
  ],
};

/** English name, Bangla name ("" where the Bangla word is also a common word: ভোলা, to forget). */
type Names = readonly (readonly [string, string])[];

/** Countries, world cities, Bangladesh's divisions, districts and the capital's areas. */
// biome-ignore format: word lists read better packed several to a line
export const PLACES: Names = [
  ["Bangladesh", "বাংলাদেশ"], ["India", "ভারত"], ["Pakistan", "পাকিস্তান"], ["Nepal", "নেপাল"],
  ["Bhutan", "ভুটান"], ["Sri Lanka", "শ্রীলঙ্কা"], ["Myanmar", "মিয়ানমার"], ["China", "চীন"],
  ["Japan", "জাপান"], ["South Korea", "দক্ষিণ কোরিয়া"], ["Malaysia", "মালয়েশিয়া"],
  ["Singapore", "সিঙ্গাপুর"], ["Indonesia", "ইন্দোনেশিয়া"], ["Thailand", "থাইল্যান্ড"],
  ["Saudi Arabia", "সৌদি আরব"], ["Qatar", "কাতার"], ["UAE", "সংযুক্ত আরব আমিরাত"], ["Iran", "ইরান"],
  ["Iraq", "ইরাক"], ["Israel", "ইসরায়েল"], ["Gaza", "গাজা"], ["Turkey", "তুরস্ক"],
  ["Egypt", "মিসর"], ["Russia", "রাশিয়া"], ["Ukraine", "ইউক্রেন"], ["Germany", "জার্মানি"],
  ["France", "ফ্রান্স"], ["Italy", "ইতালি"], ["Spain", "স্পেন"], ["United Kingdom", "যুক্তরাজ্য"],
  ["Britain", "ব্রিটেন"], ["UK", "যুক্তরাজ্য"], ["United States", "যুক্তরাষ্ট্র"],
  ["US", "যুক্তরাষ্ট্র"], ["USA", "যুক্তরাষ্ট্র"], ["America", "আমেরিকা"], ["Canada", "কানাডা"],
  ["Australia", "অস্ট্রেলিয়া"], ["New Zealand", "নিউজিল্যান্ড"], ["Brazil", "ব্রাজিল"],
  ["Argentina", "আর্জেন্টিনা"], ["Mexico", "মেক্সিকো"], ["South Africa", "দক্ষিণ আফ্রিকা"],
  ["Afghanistan", "আফগানিস্তান"], ["Europe", "ইউরোপ"], ["Asia", "এশিয়া"], ["Africa", "আফ্রিকা"],
  ["Middle East", "মধ্যপ্রাচ্য"], ["Bay of Bengal", "বঙ্গোপসাগর"], ["New Delhi", "নয়াদিল্লি"],
  ["Delhi", "দিল্লি"], ["Kolkata", "কলকাতা"], ["Mumbai", "মুম্বাই"], ["Beijing", "বেইজিং"],
  ["Tokyo", "টোকিও"], ["London", "লন্ডন"], ["Paris", "প্যারিস"], ["Berlin", "বার্লিন"],
  ["Moscow", "মস্কো"], ["Washington", "ওয়াশিংটন"], ["New York", "নিউইয়র্ক"], ["Dubai", "দুবাই"],
  ["Kathmandu", "কাঠমান্ডু"], ["Islamabad", "ইসলামাবাদ"], ["Yangon", "ইয়াঙ্গুন"],
  ["Toronto", "টরন্টো"], ["Geneva", "জেনেভা"], ["Brussels", "ব্রাসেলস"],
  // Divisions and districts.
  ["Dhaka", "ঢাকা"], ["Chattogram", "চট্টগ্রাম"], ["Chittagong", "চট্টগ্রাম"],
  ["Rajshahi", "রাজশাহী"], ["Khulna", "খুলনা"], ["Barishal", "বরিশাল"], ["Barisal", "বরিশাল"],
  ["Sylhet", "সিলেট"], ["Rangpur", "রংপুর"], ["Mymensingh", "ময়মনসিংহ"], ["Gazipur", "গাজীপুর"],
  ["Narayanganj", "নারায়ণগঞ্জ"], ["Narsingdi", "নরসিংদী"], ["Munshiganj", "মুন্সীগঞ্জ"],
  ["Manikganj", "মানিকগঞ্জ"], ["Tangail", "টাঙ্গাইল"], ["Kishoreganj", "কিশোরগঞ্জ"],
  ["Faridpur", "ফরিদপুর"], ["Gopalganj", "গোপালগঞ্জ"], ["Madaripur", "মাদারীপুর"],
  ["Shariatpur", "শরীয়তপুর"], ["Rajbari", "রাজবাড়ী"], ["Cox's Bazar", "কক্সবাজার"],
  ["Cumilla", "কুমিল্লা"], ["Comilla", "কুমিল্লা"], ["Feni", "ফেনী"], ["Noakhali", "নোয়াখালী"],
  ["Lakshmipur", "লক্ষ্মীপুর"], ["Chandpur", "চাঁদপুর"], ["Brahmanbaria", "ব্রাহ্মণবাড়িয়া"],
  ["Rangamati", "রাঙামাটি"], ["Bandarban", "বান্দরবান"], ["Khagrachhari", "খাগড়াছড়ি"],
  ["Bogura", "বগুড়া"], ["Bogra", "বগুড়া"], ["Pabna", "পাবনা"], ["Sirajganj", "সিরাজগঞ্জ"],
  ["Natore", "নাটোর"], ["Naogaon", "নওগাঁ"], ["Joypurhat", "জয়পুরহাট"],
  ["Chapainawabganj", "চাঁপাইনবাবগঞ্জ"], ["Jashore", "যশোর"], ["Jessore", "যশোর"],
  ["Satkhira", "সাতক্ষীরা"], ["Bagerhat", "বাগেরহাট"], ["Kushtia", "কুষ্টিয়া"],
  ["Jhenaidah", "ঝিনাইদহ"], ["Magura", "মাগুরা"], ["Narail", "নড়াইল"],
  ["Chuadanga", "চুয়াডাঙ্গা"], ["Meherpur", "মেহেরপুর"], ["Patuakhali", "পটুয়াখালী"],
  ["Bhola", ""], ["Pirojpur", "পিরোজপুর"], ["Jhalokathi", "ঝালকাঠি"], ["Barguna", "বরগুনা"],
  ["Sunamganj", "সুনামগঞ্জ"], ["Moulvibazar", "মৌলভীবাজার"], ["Habiganj", "হবিগঞ্জ"],
  ["Dinajpur", "দিনাজপুর"], ["Kurigram", "কুড়িগ্রাম"], ["Gaibandha", "গাইবান্ধা"],
  ["Lalmonirhat", "লালমনিরহাট"], ["Nilphamari", "নীলফামারী"], ["Thakurgaon", "ঠাকুরগাঁও"],
  ["Panchagarh", "পঞ্চগড়"], ["Jamalpur", "জামালপুর"], ["Sherpur", "শেরপুর"],
  ["Netrokona", "নেত্রকোনা"],
  // The capital's areas that headlines name.
  ["Mirpur", "মিরপুর"], ["Mohammadpur", "মোহাম্মদপুর"], ["Gulshan", "গুলশান"], ["Banani", "বনানী"],
  ["Dhanmondi", "ধানমন্ডি"], ["Uttara", "উত্তরা"], ["Motijheel", "মতিঝিল"],
  ["Old Dhaka", "পুরান ঢাকা"], ["Savar", "সাভার"], ["Ashulia", "আশুলিয়া"], ["Tejgaon", "তেজগাঁও"],
  ["Jatrabari", "যাত্রাবাড়ী"], ["Kawran Bazar", "কারওয়ান বাজার"], ["Mirsarai", "মিরসরাই"],
  ["Teknaf", "টেকনাফ"], ["Padma", "পদ্মা"], ["Teesta", "তিস্তা"], ["Jamuna", "যমুনা"],
  ["Meghna", "মেঘনা"], ["Sundarbans", "সুন্দরবন"],
];

/** Organisations headlines name by name, not by a suffix such as Bank or Ministry. */
// biome-ignore format: word lists read better packed several to a line
export const ORGANIZATIONS: Names = [
  ["United Nations", "জাতিসংঘ"], ["UN", "জাতিসংঘ"], ["WHO", "বিশ্ব স্বাস্থ্য সংস্থা"],
  ["IMF", "আইএমএফ"], ["World Bank", "বিশ্বব্যাংক"], ["ADB", "এডিবি"], ["NATO", "ন্যাটো"],
  ["OPEC", "ওপেক"], ["OPEC+", "ওপেক+"], ["European Union", "ইউরোপীয় ইউনিয়ন"], ["EU", "ইইউ"],
  ["Federal Reserve", "ফেডারেল রিজার্ভ"], ["Fed", "ফেড"], ["ECB", "ইসিবি"],
  ["Bangladesh Bank", "বাংলাদেশ ব্যাংক"], ["Dhaka Stock Exchange", "ঢাকা স্টক এক্সচেঞ্জ"],
  ["DSE", "ডিএসই"], ["CSE", "সিএসই"], ["BSEC", "বিএসইসি"], ["NBR", "এনবিআর"],
  ["Election Commission", "নির্বাচন কমিশন"], ["EC", "ইসি"], ["RAB", "র‍্যাব"], ["BGB", "বিজিবি"],
  ["Awami League", "আওয়ামী লীগ"], ["BNP", "বিএনপি"], ["Jamaat-e-Islami", "জামায়াতে ইসলামী"],
  ["BRAC", "ব্র্যাক"], ["Grameenphone", "গ্রামীণফোন"], ["Robi", "রবি"], ["Banglalink", "বাংলালিংক"],
  ["Walton", "ওয়ালটন"], ["Square", "স্কয়ার"], ["Beximco", "বেক্সিমকো"], ["Biman", ""],
  ["Titas Gas", "তিতাস গ্যাস"], ["BTRC", "বিটিআরসি"], ["BCB", "বিসিবি"], ["BUET", "বুয়েট"],
  ["Dhaka University", "ঢাকা বিশ্ববিদ্যালয়"], ["ICC", "আইসিসি"], ["FIFA", "ফিফা"],
  ["NASA", "নাসা"], ["Apple", "অ্যাপল"], ["Microsoft", "মাইক্রোসফট"], ["Google", "গুগল"],
  ["Meta", "মেটা"], ["Amazon", "অ্যামাজন"], ["Tesla", "টেসলা"], ["Samsung", "স্যামসাং"],
  ["Nvidia", "এনভিডিয়া"], ["OpenAI", "ওপেনএআই"], ["Netflix", "নেটফ্লিক্স"], ["Facebook", "ফেসবুক"],
  ["YouTube", "ইউটিউব"], ["Starlink", "স্টারলিংক"], ["Uber", "উবার"], ["Pathao", "পাঠাও"],
  ["bKash", "বিকাশ"], ["Nagad", ""], ["Reuters", "রয়টার্স"], ["AFP", "এএফপি"],
  ["UNDP", "ইউএনডিপি"], ["UNICEF", "ইউনিসেফ"], ["Met Office", "আবহাওয়া অধিদপ্তর"],
];

/**
 * The last word of an English organisation's name ("Bangladesh Bank", "Export Promotion Bureau",
 * "Walton Hi-Tech Industries PLC"): a run of capitalised words ending in one is an organisation.
 */
// biome-ignore format: word lists read better packed several to a line
export const ORGANIZATION_SUFFIXES = [
  "Bank", "Ministry", "Ltd", "Limited", "PLC", "Inc", "Corporation", "Corp", "Group", "University",
  "Commission", "Authority", "Council", "Organization", "Organisation", "Party", "League", "Board",
  "Bureau", "Agency", "Company", "Industries", "Pharmaceuticals", "Pharma", "Exchange", "Fund",
  "Association", "Court", "Directorate", "Department", "Academy", "Institute", "Foundation",
  "Federation", "Assembly", "Police", "Army", "Navy", "Airlines", "Motors", "Telecom", "Energy",
  "Finance", "Insurance", "Securities", "Holdings", "Times", "Tribune",
];

/** Words before an English name that make it a person's ("Prime Minister Sheikh Hasina"). */
// biome-ignore format: word lists read better packed several to a line
export const PERSON_TITLES = [
  "President", "Prime Minister", "Minister", "Chief Adviser", "Adviser", "Governor", "Chairman",
  "Chairperson", "Chief Executive", "CEO", "Secretary", "Ambassador", "Senator", "Judge", "Justice",
  "Captain", "Coach", "Mr", "Mr.", "Mrs", "Mrs.", "Ms", "Ms.", "Dr", "Dr.", "Prof", "Prof.",
  "Professor", "Sheikh", "King", "Queen", "Prince", "Pope", "General", "Gen.",
];

/** Stock indices, benchmarks and currency pairs: instruments by name. */
// biome-ignore format: word lists read better packed several to a line
export const INSTRUMENTS: Names = [
  ["DSEX", "ডিএসইএক্স"], ["DS30", "ডিএস৩০"], ["S&P 500", "এসঅ্যান্ডপি ৫০০"],
  ["Dow Jones", "ডাও জোন্স"], ["Nasdaq Composite", "নাসডাক কম্পোজিট"], ["Sensex", "সেনসেক্স"],
  ["Nifty", "নিফটি"], ["Nikkei", "নিক্কেই"], ["FTSE 100", "এফটিএসই ১০০"], ["Brent", "ব্রেন্ট"],
  ["WTI", "ডব্লিউটিআই"], ["Bitcoin", "বিটকয়েন"], ["Ethereum", "ইথেরিয়াম"],
];
