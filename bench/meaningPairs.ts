/**
 * Retrieval pairs for `bench meaning`: a query text and the one text it should find among all
 * the set's targets. Three kinds, each labelled by where it comes from:
 *
 * - MSRP positives (English paraphrase, news sentences): read by bench/msrp.ts's parser.
 * - Generated from the simulator's corpus (simulator/corpus.ts, deterministic by seed): one
 *   story's facts as its first desk words them (headline + summary) against another desk's
 *   rewrite (another headline wording + the rewrite summary), in Bangla; and the Bangla story
 *   against the English one of the same facts. The targets include every other generated story,
 *   most of them of the same topics with other subjects and figures: hard distractors, as in a
 *   real window. They are the simulator's own templates, so a figure on them alone flatters.
 * - Written by hand (bench/data/*.tsv), not from the simulator: Bangla news sentences with a
 *   Bangla paraphrase, and with their English translation.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import {
  type Facts,
  randomFacts,
  rewriteSummary,
  storySummary,
  TOPICS,
  type Topic,
} from "@/simulator/corpus";
import type { Language } from "@/simulator/outlets";
import { Random } from "@/simulator/random";

export interface RetrievalPair {
  query: string;
  target: string;
}

export interface RetrievalSet {
  /** Short key, for --json and --sets. */
  name: string;
  /** What the pairs are and where they come from, printed beside the figures. */
  label: string;
  /** "bn-en": the query is Bangla, the target its English translation. */
  languages: "en-en" | "bn-bn" | "bn-en";
  source: "msrp" | "simulator" | "hand-written";
  pairs: RetrievalPair[];
}

const DATA = path.resolve(import.meta.dirname, "data");
export const HAND_WRITTEN_FILES = {
  bnBn: path.join(DATA, "bn-bn-pairs.tsv"),
  bnEn: path.join(DATA, "bn-en-pairs.tsv"),
} as const;

function headline(topic: Topic, language: Language, variant: number, f: Facts): string {
  const phrases = topic.headlines[language] ?? [];
  const phrase = phrases[variant % phrases.length];
  if (!phrase) throw new Error(`topic ${topic.key} has no ${language} headline`);
  return phrase(f);
}

/** A story's text as the dedup stage reads an item: its title and summary. */
const itemText = (title: string, summary: string) => `${title} ${summary}`.trim();

/**
 * `count` stories of the topics written in both Bangla and English, each with fresh facts from
 * the seeded generator: per story a first-desk Bangla text, a rewrite of it, and the English
 * first-desk text of the same facts. The same seed gives the same pairs on every machine.
 */
export function simulatorSets(seed: number, count: number): RetrievalSet[] {
  const random = new Random(seed);
  const topics = TOPICS.filter((t) => t.headlines.bn && t.headlines.en);
  const paraphrase: RetrievalPair[] = [];
  const translation: RetrievalPair[] = [];
  const seen = new Set<string>();
  for (let i = 0; seen.size < count && i < count * 20; i++) {
    const topic = topics[i % topics.length] as Topic;
    const f = randomFacts(random);
    const bnPhrases = topic.headlines.bn?.length ?? 1;
    const variant = random.int(0, bnPhrases - 1);
    // Another desk's wording, as the newsroom's rewrite picks it: another headline when there is one.
    const other = (variant + random.int(1, Math.max(1, bnPhrases - 1))) % bnPhrases;
    const first = itemText(headline(topic, "bn", variant, f), storySummary(topic, f, "bn"));
    // Two draws with equal facts would make two identical queries: one answer would be wrong.
    if (seen.has(first)) continue;
    seen.add(first);
    const rewrite = itemText(headline(topic, "bn", other, f), rewriteSummary(topic, f, "bn"));
    const english = itemText(
      headline(topic, "en", random.int(0, (topic.headlines.en?.length ?? 1) - 1), f),
      storySummary(topic, f, "en"),
    );
    paraphrase.push({ query: first, target: rewrite });
    translation.push({ query: first, target: english });
  }
  return [
    {
      name: "sim-bn-bn",
      label: `simulator Bangla story vs another desk's Bangla rewrite (seed ${seed})`,
      languages: "bn-bn",
      source: "simulator",
      pairs: paraphrase,
    },
    {
      name: "sim-bn-en",
      label: `simulator Bangla story vs the English story of the same facts (seed ${seed})`,
      languages: "bn-en",
      source: "simulator",
      pairs: translation,
    },
  ];
}

/**
 * A hand-written pairs file: `QUERY<TAB>TARGET` per line; blank lines and lines starting with
 * `#` (comments: where the pairs come from) are skipped. Anything else is refused by line.
 */
export function parsePairsTsv(text: string, file = "pairs"): RetrievalPair[] {
  const out: RetrievalPair[] = [];
  text
    .replace(/^\uFEFF/, "")
    .split(/\r?\n/)
    .forEach((line, i) => {
      if (line.trim() === "" || line.startsWith("#")) return;
      const cols = line.split("\t");
      if (cols.length !== 2 || !cols[0]?.trim() || !cols[1]?.trim()) {
        throw new Error(`${file} line ${i + 1}: expected QUERY<TAB>TARGET, both non-empty`);
      }
      out.push({ query: (cols[0] as string).trim(), target: (cols[1] as string).trim() });
    });
  return out;
}

export function handWrittenSets(): RetrievalSet[] {
  const read = (file: string) => parsePairsTsv(readFileSync(file, "utf8"), path.basename(file));
  return [
    {
      name: "hand-bn-bn",
      label:
        "hand-written Bangla news sentence vs a Bangla paraphrase (bench/data/bn-bn-pairs.tsv)",
      languages: "bn-bn",
      source: "hand-written",
      pairs: read(HAND_WRITTEN_FILES.bnBn),
    },
    {
      name: "hand-bn-en",
      label:
        "hand-written Bangla news sentence vs its English translation (bench/data/bn-en-pairs.tsv)",
      languages: "bn-en",
      source: "hand-written",
      pairs: read(HAND_WRITTEN_FILES.bnEn),
    },
  ];
}
