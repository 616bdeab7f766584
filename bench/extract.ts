/**
 * Extraction's local side: language accuracy per detector, and the local provider's throughput.
 *
 *   npm run -s bench -- extract [--runs 5] [--items 2000] [--json]
 *
 * Accuracy: every detector on the fixtures (lib/extract/testdata/languages.jsonl: short, long,
 * mixed Bangla/English, other languages; "tune" rows set the English margin, "heldout" rows
 * were written after the choice), per group, for both sets. The detectors: the script majority
 * (lib/search/docs.ts's rule, the baseline), each candidate alone (eld, franc-min, tinyld,
 * cld3-asm), and the chosen rules (decision 028) with each candidate in the Latin-script role
 * and with none (English for every Latin-script text).
 *
 * Throughput: the local provider's whole extraction (language, category, entities, summary),
 * and the same without compromise (English people), against the script majority alone, on the fixtures' texts as titles, `--runs` runs taking
 * turns; items/s min / median / max, the ratio of medians in the same runs. Results on stdout
 * (one JSON line with --json), progress on stderr.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import {
  decideLanguage,
  ENGLISH_MARGIN,
  type LatinDetector,
  loadLatinDetector,
  scriptMajority,
} from "@/lib/extract/language";
import { DEFAULT_TICKERS, loadPeopleFinder, localExtraction } from "@/lib/extract/providers/local";
import type { ExtractionLanguage } from "@/lib/extract/types";

const FIXTURES = path.resolve(import.meta.dirname, "../lib/extract/testdata/languages.jsonl");
const GROUPS = ["short", "long", "mixed", "other"] as const;

interface Fixture {
  set: "tune" | "heldout";
  group: (typeof GROUPS)[number];
  lang: ExtractionLanguage;
  text: string;
}

const log = (msg: string) => process.stderr.write(`${msg}\n`);
const map = (code: string | null | undefined): ExtractionLanguage =>
  code === "bn" || code === "ben" ? "bn" : code === "en" || code === "eng" ? "en" : "other";

type Detect = (text: string) => ExtractionLanguage;

/** The candidates, each alone and as the Latin-script detector of the rules. */
async function candidates(): Promise<{
  alone: Record<string, Detect>;
  latin: Record<string, LatinDetector>;
}> {
  const { eld } = await import("eld/large");
  const { francAll } = await import("franc-min");
  const tinyld = await import("tinyld/heavy");
  const cld3 = await import("cld3-asm");
  const cld = (await cld3.loadModule()).create(0, 1_000);
  const eldGuess: LatinDetector = (t) => {
    const r = eld.detect(t);
    const s = r.getScores();
    const top = r.language || null;
    const best = top ? (s[top] ?? 0) : 0;
    return { top, englishShare: best > 0 ? Math.min(1, (s.en ?? 0) / best) : 0 };
  };
  const francGuess: LatinDetector = (t) => {
    const all = francAll(t, { minLength: 1 });
    const top = all[0]?.[0];
    if (!top || top === "und") return { top: null, englishShare: 0 };
    const en = all.find(([c]) => c === "eng")?.[1] ?? 0;
    return { top, englishShare: en / ((all[0]?.[1] as number) || 1) };
  };
  const tinyGuess: LatinDetector = (t) => {
    const all = tinyld.detectAll(t);
    const top = all[0]?.lang;
    if (!top) return { top: null, englishShare: 0 };
    const en = all.find((x) => x.lang === "en")?.accuracy ?? 0;
    return { top, englishShare: en / ((all[0]?.accuracy as number) || 1) };
  };
  const cldGuess: LatinDetector = (t) => {
    const r = cld.findLanguage(t);
    if (r.language === "und") return { top: null, englishShare: 0 };
    const en = cld.findMostFrequentLanguages(t, 3).find((x) => x.language === "en")?.probability;
    return { top: r.language, englishShare: r.probability > 0 ? (en ?? 0) / r.probability : 0 };
  };
  return {
    alone: {
      "eld (large)": (t) => map(eld.detect(t).language),
      "franc-min": (t) => map(francAll(t, { minLength: 1 })[0]?.[0]),
      "tinyld (heavy)": (t) => map(tinyld.detect(t)),
      "cld3-asm": (t) => map(cld.findLanguage(t).language),
    },
    latin: { eld: eldGuess, "franc-min": francGuess, tinyld: tinyGuess, "cld3-asm": cldGuess },
  };
}

function accuracy(rows: Fixture[], detect: Detect) {
  const out: Record<string, { right: number; of: number }> = {};
  for (const g of [...GROUPS, "all"]) {
    const of = rows.filter((r) => g === "all" || r.group === g);
    out[g] = { right: of.filter((r) => detect(r.text) === r.lang).length, of: of.length };
  }
  return out;
}

function spread(values: number[]) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median =
    sorted.length % 2
      ? (sorted[mid] as number)
      : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
  return { min: sorted[0] as number, median, max: sorted[sorted.length - 1] as number };
}

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      runs: { type: "string", default: "5" },
      items: { type: "string", default: "2000" },
      json: { type: "boolean", default: false },
    },
    strict: true,
  });
  const runs = Number(values.runs);
  const items = Number(values.items);
  for (const [name, n] of [
    ["runs", runs],
    ["items", items],
  ] as const) {
    if (!Number.isInteger(n) || n < 1) {
      const err = new Error(`--${name} must be a positive integer`);
      err.name = "UsageError";
      throw err;
    }
  }
  const rows = readFileSync(FIXTURES, "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Fixture);

  log("loading the detectors…");
  const { alone, latin } = await candidates();
  const chosen = await loadLatinDetector();
  const detectors: Record<string, Detect> = {
    "script majority (baseline)": scriptMajority,
    ...alone,
    "rules, no detector": (t) => decideLanguage(t, () => ({ top: null, englishShare: 0 })).language,
    ...Object.fromEntries(
      Object.entries(latin).map(([name, d]) => [
        `rules + ${name}`,
        (t: string) => decideLanguage(t, d).language,
      ]),
    ),
    "rules + eld (chosen: lib/extract/language.ts)": (t) => decideLanguage(t, chosen).language,
  };
  const accuracyBySet = Object.fromEntries(
    (["tune", "heldout"] as const).map((set) => [
      set,
      Object.fromEntries(
        Object.entries(detectors).map(([name, d]) => [
          name,
          accuracy(
            rows.filter((r) => r.set === set),
            d,
          ),
        ]),
      ),
    ]),
  );

  const tickers = new Set(DEFAULT_TICKERS);
  const people = await loadPeopleFinder();
  const texts = Array.from({ length: items }, (_, i) => (rows[i % rows.length] as Fixture).text);
  const passes: Record<string, () => void> = {
    "script majority": () => {
      for (const t of texts) scriptMajority(t);
    },
    "local provider": () => {
      for (const t of texts) localExtraction({ title: t }, { tickers, latin: chosen, people });
    },
    "local, no compromise": () => {
      for (const t of texts) localExtraction({ title: t }, { tickers, latin: chosen });
    },
  };
  passes["local provider"]?.(); // warm-up
  const rates: Record<string, number[]> = Object.fromEntries(
    Object.keys(passes).map((n) => [n, []]),
  );
  const names = Object.keys(passes);
  for (let r = 0; r < runs; r++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(r + k) % names.length] as string;
      const started = performance.now();
      passes[name]?.();
      const rate = (items * 1000) / (performance.now() - started);
      rates[name]?.push(rate);
      log(`run ${r + 1}/${runs}: ${name} ${rate.toFixed(0)} items/s`);
    }
  }
  const throughput = Object.fromEntries(Object.entries(rates).map(([n, v]) => [n, spread(v)]));
  const ratio =
    (throughput["local provider"]?.median ?? Number.NaN) /
    (throughput["script majority"]?.median ?? Number.NaN);
  const summary = {
    englishMargin: ENGLISH_MARGIN,
    accuracy: accuracyBySet,
    throughput,
    ratio,
    items,
    runs,
  };
  if (values.json) {
    process.stdout.write(`${JSON.stringify(summary)}\n`);
    return;
  }
  const cell = (a: { right: number; of: number }) => `${a.right}/${a.of}`.padStart(8);
  const lines: string[] = [];
  for (const [set, table] of Object.entries(accuracyBySet)) {
    lines.push(
      `language accuracy, ${set} fixtures (right/of): ${[...GROUPS, "all"].map((g) => g.padStart(8)).join("")}`,
    );
    for (const [name, acc] of Object.entries(table)) {
      lines.push(
        `  ${name.padEnd(46)}${[...GROUPS, "all"].map((g) => cell(acc[g] as { right: number; of: number })).join("")}`,
      );
    }
    lines.push("");
  }
  const fmt = (s: { min: number; median: number; max: number }) =>
    `${s.min.toFixed(0).padStart(9)} ${s.median.toFixed(0).padStart(9)} ${s.max.toFixed(0).padStart(9)}`;
  lines.push(`throughput: ${items} items, ${runs} runs taking turns; items/s min / median / max`);
  for (const [name, s] of Object.entries(throughput)) lines.push(`  ${name.padEnd(22)}${fmt(s)}`);
  lines.push(`  local provider / script majority: ${ratio.toPrecision(3)}x (medians)`);
  process.stdout.write(`${lines.join("\n")}\n`);
}
