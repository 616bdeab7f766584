import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { afterMeaning, type GreyPair, judgePair, type PairVerdict } from "@/lib/dedup/pair";
import { configuredEmbedder, type Embedder, EmbeddingError } from "@/lib/embed";
import {
  calibrationFor,
  type MeaningCalibration,
  parseCalibration,
  ruleOf,
} from "@/lib/meaning/calibrations";
import { compareMeaning, type MeaningRule, textLanguage } from "@/lib/meaning/compare";
import { UsageError } from "../usage";

export const usage = `dedup-pairs [--no-meaning] [--calibration FILE]
                                  read lines TEXT_A<TAB>TEXT_B from stdin and print one JSON line per
                                  pair, {"duplicate":…,"stage":…,"score":…}, judged by lib/dedup with the
                                  shipped defaults as two items with those titles and no link; a line
                                  without exactly one tab prints null and an error on stderr (exit 1).
                                  A pair stages 1-3 leave in review goes to stage 4 (lib/meaning): both
                                  texts embedded with the configured model (WIREWATCH_EMBEDDING_MODEL,
                                  default the shipped USE-lite) and compared with its calibration; one
                                  it settles prints "stage":"meaning" with the meaning
                                  score (duplicate true, or false: distinct, no review). Without a model
                                  that loads or a calibration with thresholds, grey pairs print as
                                  review and stderr says why, once. --no-meaning: stages 1-3 only;
                                  --calibration FILE: the model's thresholds from
                                  \`npm run -s bench -- meaning --write-calibration FILE\``;

/** Lines judged together: their grey pairs' texts go to the model in one call (≤ 1,024 texts). */
const BLOCK_LINES = 512;

interface Judged {
  out: string;
  error?: string;
  verdict?: PairVerdict;
  grey?: GreyPair;
}

/**
 * Stages 1–3 for one input line, so a caller can zip outputs with inputs. A malformed line (no
 * tab, or more than one) still gets its line — `null`, which no reader can take for a verdict —
 * and its number goes to stderr; the exit code is 1 if any line was malformed.
 */
export function pairLine(line: string): Judged {
  const fields = line.replace(/\r$/, "").split("\t");
  if (fields.length !== 2) {
    const what = fields.length === 1 ? "no tab" : `${fields.length - 1} tabs`;
    return { out: "null", error: `${what}; expected TEXT_A<TAB>TEXT_B` };
  }
  const { verdict, grey } = judgePair(fields[0] as string, fields[1] as string);
  return { out: printed(verdict), verdict, ...(grey ? { grey } : {}) };
}

/** The contract's line, keys in this order. */
const printed = (v: PairVerdict) =>
  JSON.stringify({ duplicate: v.duplicate, stage: v.stage, score: v.score });

/**
 * Stage 4 for the grey pairs of a block. The model loads on the first grey pair that needs it,
 * so input with no grey pair never starts it; a model that does not load, a calibration with no
 * thresholds or a language the model does not read leaves the pairs as review, said once.
 */
class StageFour {
  private off: string | null;
  private readonly said = new Set<string>();

  /** `embedder` null: the configured model could not be built, and `reason` says why. */
  constructor(
    private readonly embedder: Embedder | null,
    private readonly rule: MeaningRule | null,
    reason: string,
  ) {
    this.off = embedder && rule ? null : reason;
  }

  private get modelId(): string {
    return this.embedder?.info.model ?? "the configured model";
  }

  private sayOnce(key: string, message: string) {
    if (this.said.has(key)) return;
    this.said.add(key);
    process.stderr.write(`dedup-pairs: ${message}\n`);
  }

  async settle(block: Judged[]): Promise<void> {
    const greys = block.filter((j) => j.grey && j.verdict);
    if (greys.length === 0) return;
    if (this.off !== null || !this.rule || !this.embedder) {
      this.sayOnce("off", `stage 4 off: ${this.off}; grey pairs print as review`);
      return;
    }
    const { rule, embedder } = this;
    const readable = greys.filter((j) => {
      const g = j.grey as GreyPair;
      const langs = [textLanguage(g.a), textLanguage(g.b)];
      const foreign = langs.find((l) => !rule.languages.includes(l));
      if (foreign === undefined) return true;
      this.sayOnce(
        `lang:${foreign}`,
        `stage 4 leaves grey pairs in ${foreign} in review: ${this.modelId} reads ${rule.languages.join(", ")} only`,
      );
      return false;
    });
    if (readable.length === 0) return;
    const texts = [...new Set(readable.flatMap((j) => [j.grey?.a, j.grey?.b] as string[]))];
    let vectors: Map<string, Float32Array>;
    let answeredBy: string;
    try {
      const batch = await embedder.embed(texts, { purpose: "passage" });
      answeredBy = batch.model.model;
      vectors = new Map(texts.map((t, i) => [t, batch.vectors[i] as Float32Array]));
    } catch (err) {
      if (!(err instanceof EmbeddingError)) throw err;
      this.off = `${this.modelId} did not answer (${err.message})`;
      this.sayOnce("off", `stage 4 off: ${this.off}; grey pairs print as review`);
      return;
    }
    for (const j of readable) {
      const g = j.grey as GreyPair;
      const decision = compareMeaning(
        {
          a: vectors.get(g.a) as Float32Array,
          b: vectors.get(g.b) as Float32Array,
          model: answeredBy,
          nearScore: g.near,
          languages: [textLanguage(g.a), textLanguage(g.b)],
          guard: g.guard,
        },
        rule,
      );
      if (decision.outcome === "unjudged" && decision.reason === "other-model") {
        this.sayOnce("model", `stage 4 left pairs in review: ${decision.detail}`);
      }
      j.verdict = afterMeaning(j.verdict as PairVerdict, decision);
      j.out = printed(j.verdict);
    }
  }

  async close(): Promise<void> {
    await this.embedder?.close();
  }
}

/**
 * Stage 4 as configured: the model of WIREWATCH_EMBEDDING_MODEL (lib/embed's registry; the
 * shipped USE-lite by default) and its calibration, shipped (lib/meaning/calibrations.ts) or
 * from --calibration. Building the embedder reads settings and files only; the model loads on
 * its first call.
 */
function stageFour(args: { "no-meaning"?: boolean; calibration?: string }): StageFour | null {
  if (args["no-meaning"]) return null;
  const given = args.calibration ? readCalibration(args.calibration) : undefined;
  let embedder: Embedder;
  try {
    embedder = configuredEmbedder();
  } catch (err) {
    if (!(err instanceof EmbeddingError)) throw err;
    return new StageFour(null, null, `the configured model did not load (${err.message})`);
  }
  const modelId = embedder.info.model;
  if (given && given.model !== modelId) {
    void embedder.close();
    throw new UsageError(
      `--calibration ${args.calibration} is for ${given.model}, but stage 4 embeds with ${modelId}`,
    );
  }
  const calibration = given ?? calibrationFor(modelId);
  const reason = !calibration
    ? `${modelId} has no calibration (measure one: npm run -s bench -- meaning --model ${modelId} --write-calibration FILE)`
    : `${modelId} gives no stage-4 verdict (${calibration.record.reason})`;
  return new StageFour(embedder, ruleOf(calibration), reason);
}

function readCalibration(file: string): MeaningCalibration {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new UsageError(`--calibration ${file}: cannot read it (${(err as Error).message})`);
  }
  try {
    return parseCalibration(text, file);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

export async function run(args: string[]): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(args);
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError((err as Error).message);
  }
  const meaning = stageFour(parsed.values);
  const input = createInterface({ input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY });
  let closed = false;
  // A reader that stops early (`| head`) is not an error of ours: stop reading and exit.
  process.stdout.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code !== "EPIPE") throw err;
    closed = true;
    input.close();
  });
  let n = 0;
  let bad = 0;
  // Lines wait here while a block is judged (stage 4 awaits the model): whatever arrived in the
  // meantime is the next block, so piped input batches and a line-by-line caller still gets
  // each answer as soon as its line is in. Input pauses while a block is full.
  let queue: string[] = [];
  let ended = false;
  let wake: (() => void) | null = null;
  input.on("line", (line) => {
    queue.push(line);
    if (queue.length >= BLOCK_LINES) input.pause();
    wake?.();
  });
  input.on("close", () => {
    ended = true;
    wake?.();
  });
  try {
    while (!closed) {
      if (queue.length === 0) {
        if (ended) break;
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        wake = null;
        continue;
      }
      const lines = queue.slice(0, BLOCK_LINES);
      queue = queue.slice(lines.length);
      if (queue.length < BLOCK_LINES && !ended) input.resume();
      const block = lines.map((line) => {
        n++;
        const r = pairLine(line);
        if (r.error) {
          bad++;
          process.stderr.write(`dedup-pairs: line ${n}: ${r.error}\n`);
        }
        return r;
      });
      await meaning?.settle(block);
      const text = `${block.map((r) => r.out).join("\n")}\n`;
      // Stream: wait for the pipe to drain rather than buffer a large input's answers in memory.
      if (!closed && !process.stdout.write(text)) await drained();
    }
  } finally {
    await meaning?.close();
  }
  return bad > 0 ? 1 : 0;
}

/** Resolves when stdout drains, or closes or fails (a reader gone: nothing more to wait for). */
function drained(): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      process.stdout.off("drain", done).off("close", done).off("error", done);
      resolve();
    };
    process.stdout.on("drain", done).on("close", done).on("error", done);
  });
}

function parse(args: string[]) {
  return parseArgs({
    args,
    options: {
      "no-meaning": { type: "boolean", default: false },
      calibration: { type: "string" },
    },
    strict: true,
    allowPositionals: false,
  });
}
