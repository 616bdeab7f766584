/**
 * Embedding throughput per provider:
 *
 *   npm run -s bench -- embed [--runs 3] [--texts 256] [--single 64] [--providers lexical,shipped,http] [--json]
 *
 * The providers: lexical (hashed character 3-grams, in this thread; the baseline), shipped
 * (USE-lite in its worker thread) and http (the HTTP provider against the simulator's
 * OpenAI-compatible endpoint, started in this process: its vectors are cheap to make, so the
 * figure is the provider's own cost, JSON and HTTP on loopback, not a real model's).
 *
 * Texts: the first sentences of the MSRP training pairs (../shared/corpora/msrp, 18-22 words,
 * as decision 025 measured), else generated headlines of the same length; every provider gets
 * the same texts. Each provider embeds `--texts` of them in calls of 32 ("batch 32") and
 * `--single` one call each ("batch 1"), calls one after another. Before the runs each is loaded
 * (the time to its first vector, and the process's RSS before and after: the worker thread's
 * memory is the process's) and warmed up on a batch. Then `--runs` runs, the providers taking
 * turns in an order that rotates every run, so all of them meet the same load on a shared
 * machine. Figures are texts/s, min / median / max over the runs; the ratios are of medians
 * against lexical in the same runs. Results go to stdout (one JSON line with --json), progress
 * to stderr.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { HttpEmbedder } from "@/lib/embed/http";
import { MemoryCallLedger } from "@/lib/embed/ledger";
import { LexicalEmbedder } from "@/lib/embed/lexical";
import { ShippedEmbedder } from "@/lib/embed/shipped";
import type { Embedder } from "@/lib/embed/types";
import { type Simulator, startSimulator } from "@/simulator/server";

const MSRP = path.resolve(
  import.meta.dirname,
  "../../shared/corpora/msrp/msr_paraphrase_train.txt",
);
const PROVIDERS = ["lexical", "shipped", "http"] as const;
type ProviderName = (typeof PROVIDERS)[number];
const BATCH = 32;
const HTTP_DIMS = 512;

interface Spread {
  min: number;
  median: number;
  max: number;
}

interface Loaded {
  name: ProviderName;
  embedder: Embedder;
  loadMs: number;
  rssBeforeMb: number;
  rssAfterMb: number;
  ledger?: MemoryCallLedger;
}

const log = (msg: string) => process.stderr.write(`${msg}\n`);
const rssMb = () => process.memoryUsage().rss / 1e6;

function usageError(message: string): Error {
  const err = new Error(message);
  err.name = "UsageError";
  return err;
}

/** The texts every provider embeds: MSRP sentences, or headlines made up alike. */
export function benchTexts(count: number): { corpus: string; texts: string[] } {
  try {
    const lines = readFileSync(MSRP, "utf8")
      .replace(/^\uFEFF/, "")
      .split(/\r?\n/)
      .slice(1);
    const texts = lines.map((l) => l.split("\t")[3]).filter((t): t is string => !!t?.trim());
    if (texts.length > 0) {
      return {
        corpus: "msrp",
        texts: Array.from({ length: count }, (_, i) => texts[i % texts.length] as string),
      };
    }
  } catch {}
  const words =
    "minister council budget river storm election market court energy police harbour school strike talks vote rail trade health city coast".split(
      " ",
    );
  const texts = Array.from({ length: count }, (_, i) =>
    Array.from({ length: 20 }, (_, w) => words[(i * 7 + w * 3) % words.length]).join(" "),
  );
  return { corpus: "generated", texts };
}

async function load(
  name: ProviderName,
  sim: Simulator | undefined,
  probe: string,
): Promise<Loaded> {
  const rssBeforeMb = rssMb();
  const started = performance.now();
  let embedder: Embedder;
  let ledger: MemoryCallLedger | undefined;
  if (name === "lexical") embedder = new LexicalEmbedder();
  else if (name === "shipped") embedder = new ShippedEmbedder();
  else {
    ledger = new MemoryCallLedger();
    embedder = new HttpEmbedder({
      baseUrl: `${sim?.url}/v1`,
      model: "sim-embed",
      dims: HTTP_DIMS,
      ledger,
    });
  }
  await embedder.embed([probe]);
  const loadMs = performance.now() - started;
  return {
    name,
    embedder,
    loadMs,
    rssBeforeMb,
    rssAfterMb: rssMb(),
    ...(ledger ? { ledger } : {}),
  };
}

/** Texts/s embedding `texts` in calls of `size`, one after another. */
async function rate(embedder: Embedder, texts: string[], size: number): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < texts.length; i += size) await embedder.embed(texts.slice(i, i + size));
  return (texts.length * 1000) / (performance.now() - started);
}

function spread(values: number[]): Spread {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median =
    sorted.length % 2
      ? (sorted[mid] as number)
      : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
  return { min: sorted[0] as number, median, max: sorted[sorted.length - 1] as number };
}

function parseOptions(args: string[]) {
  const { values } = parseArgs({
    args,
    options: {
      runs: { type: "string", default: "3" },
      texts: { type: "string", default: "256" },
      single: { type: "string", default: "64" },
      providers: { type: "string", default: PROVIDERS.join(",") },
      json: { type: "boolean", default: false },
    },
    strict: true,
  });
  const count = (name: string, raw: string) => {
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 1) throw usageError(`--${name} must be a positive integer`);
    return n;
  };
  const providers = values.providers.split(",").map((p) => p.trim());
  for (const p of providers) {
    if (!(PROVIDERS as readonly string[]).includes(p)) {
      throw usageError(`--providers takes ${PROVIDERS.join(", ")}; not "${p}"`);
    }
  }
  if (!providers.includes("lexical")) providers.unshift("lexical"); // the baseline of the ratios
  return {
    runs: count("runs", values.runs),
    texts: count("texts", values.texts),
    single: count("single", values.single),
    providers: providers as ProviderName[],
    json: values.json,
  };
}

export async function run(args: string[]): Promise<void> {
  const options = parseOptions(args);
  const { corpus, texts } = benchTexts(Math.max(options.texts, options.single));
  const batched = texts.slice(0, options.texts);
  const single = texts.slice(0, options.single);
  const rssStartMb = rssMb();
  const sim = options.providers.includes("http")
    ? await startSimulator({ manual: true, embeddings: { dims: HTTP_DIMS } })
    : undefined;
  const loaded: Loaded[] = [];
  try {
    for (const name of options.providers) {
      const l = await load(name, sim, texts[0] as string);
      log(
        `${name}: first vector after ${l.loadMs.toFixed(0)} ms, RSS ${l.rssBeforeMb.toFixed(0)} → ${l.rssAfterMb.toFixed(0)} MB`,
      );
      await rate(l.embedder, batched.slice(0, BATCH), BATCH); // warm-up
      loaded.push(l);
    }
    const rates = new Map(
      loaded.map((l) => [l.name, { batch32: [] as number[], batch1: [] as number[] }]),
    );
    for (let r = 0; r < options.runs; r++) {
      for (let k = 0; k < loaded.length; k++) {
        const l = loaded[(r + k) % loaded.length] as Loaded;
        const b32 = await rate(l.embedder, batched, BATCH);
        const b1 = await rate(l.embedder, single, 1);
        rates.get(l.name)?.batch32.push(b32);
        rates.get(l.name)?.batch1.push(b1);
        log(
          `run ${r + 1}/${options.runs}: ${l.name} ${b32.toFixed(1)} texts/s in batches of 32, ${b1.toFixed(1)} one at a time`,
        );
      }
    }
    const results = Object.fromEntries(
      loaded.map((l) => {
        const r = rates.get(l.name) as { batch32: number[]; batch1: number[] };
        const tokens = l.ledger?.totals();
        return [
          l.name,
          {
            model: l.embedder.info.model,
            dims: l.embedder.info.dims,
            loadMs: l.loadMs,
            rssBeforeLoadMb: l.rssBeforeMb,
            rssAfterLoadMb: l.rssAfterMb,
            textsPerSec: { batch32: spread(r.batch32), batch1: spread(r.batch1) },
            ...(tokens
              ? { calls: tokens.calls, tokensPerText: tokens.inputTokens / callsTexts(l) }
              : {}),
          },
        ];
      }),
    );
    const base = results.lexical?.textsPerSec;
    const ratios = Object.fromEntries(
      Object.entries(results)
        .filter(([name]) => name !== "lexical")
        .map(([name, r]) => [
          name,
          {
            batch32: r.textsPerSec.batch32.median / (base?.batch32.median ?? Number.NaN),
            batch1: r.textsPerSec.batch1.median / (base?.batch1.median ?? Number.NaN),
          },
        ]),
    );
    const rss = {
      startMb: rssStartMb,
      endMb: rssMb(),
      peakMb: (process.resourceUsage().maxRSS * 1024) / 1e6,
    };
    const summary = {
      runs: options.runs,
      corpus,
      texts: { batch32: batched.length, batch1: single.length },
      providers: results,
      ratios,
      rss,
    };
    if (options.json) {
      process.stdout.write(`${JSON.stringify(summary)}\n`);
      return;
    }
    const fmt = (s: Spread) =>
      `${s.min.toFixed(1).padStart(9)} ${s.median.toFixed(1).padStart(9)} ${s.max.toFixed(1).padStart(9)}`;
    const lines = [
      `embed: ${options.runs} runs, providers alternating; ${batched.length} texts in batches of 32, ${single.length} one at a time (${corpus}); texts/s min / median / max`,
      "",
    ];
    for (const [name, r] of Object.entries(results)) {
      lines.push(
        `${name.padEnd(8)} ${r.model} (${r.dims} dims): first vector after ${r.loadMs.toFixed(0)} ms, RSS ${r.rssBeforeLoadMb.toFixed(0)} → ${r.rssAfterLoadMb.toFixed(0)} MB`,
        `  batch 32 ${fmt(r.textsPerSec.batch32)}`,
        `  batch 1  ${fmt(r.textsPerSec.batch1)}`,
      );
      if ("tokensPerText" in r)
        lines.push(
          `  ${(r.tokensPerText as number).toFixed(1)} tokens a text by the server's count`,
        );
    }
    for (const [name, q] of Object.entries(ratios)) {
      lines.push(
        `${name} / lexical: ${q.batch32.toPrecision(3)}x batched, ${q.batch1.toPrecision(3)}x one at a time (medians)`,
      );
    }
    lines.push(
      `RSS: ${rss.startMb.toFixed(0)} MB at start, ${rss.endMb.toFixed(0)} MB at the end, ${rss.peakMb.toFixed(0)} MB at most`,
    );
    process.stdout.write(`${lines.join("\n")}\n`);
  } finally {
    await Promise.all(loaded.map((l) => l.embedder.close()));
    await sim?.stop();
  }
}

/** Texts the http provider sent, from its ledger (the probe and the warm-up included). */
function callsTexts(l: Loaded): number {
  return l.ledger?.calls.reduce((n, c) => n + c.items, 0) || 1;
}
