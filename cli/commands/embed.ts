import { once } from "node:events";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { checkTexts } from "@/lib/embed/checks";
import { configuredEmbedder } from "@/lib/embed/registry";
import { type EmbedBatch, type Embedder, EmbeddingError } from "@/lib/embed/types";
import { UsageError } from "../usage";

export const usage = `embed [--model ID]              read lines from stdin and print one JSON line per line,
                                  {"model":"<id>","dims":N,"vector":[…]}, a unit vector from the
                                  configured model (WIREWATCH_EMBEDDING_MODEL, default the shipped
                                  USE-lite) or --model: shipped, lexical, onnx:<directory>,
                                  http:<name>, or a printed id (shipped:use-lite@0.2.0); an empty
                                  or blank line prints null and an error on stderr (exit 1)`;

/** Lines per call: the shipped model's batch (decision 025: 74 texts/s at 32, 51 one by one). */
const BATCH_LINES = 32;
/** Calls in flight: the next batch is queued while one runs, so the model never waits for us. */
const IN_FLIGHT = 2;
/** A line waits at most this long for company, so input typed or piped slowly still answers. */
const IDLE_FLUSH_MS = 25;

/**
 * One output line per input line, in order, so a caller can zip them. A line with nothing to
 * embed (empty or white space; or longer than any provider takes) gets `null` on stdout, which
 * no reader can take for a vector, and `{"line":N,"error":"…"}` on stderr; the rest are embedded
 * and the exit code is 1 at the end. A model that cannot be used (not installed, a directory or
 * setting missing) stops at once with its reason and exit 1. Numbers are printed with 9
 * significant digits, which give back each 32-bit float exactly. No database is opened.
 */
export async function run(args: string[]): Promise<number> {
  let model: string | undefined;
  try {
    model = parseArgs({ args, options: { model: { type: "string" } } }).values.model;
  } catch (err) {
    throw new UsageError(`embed: ${(err as Error).message}`);
  }
  const embedder = build(model);
  const input = createInterface({ input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY });
  let closed = false;
  // A reader that stops early (`| head`) is not an error of ours: stop reading and exit.
  process.stdout.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code !== "EPIPE") throw err;
    closed = true;
    input.close();
  });

  let lineNumber = 0;
  let bad = 0;
  // Settled results, so a batch that fails while an earlier one is written is no unhandled rejection.
  const inFlight: Promise<{ lines: string[] } | { error: unknown }>[] = [];
  const write = async (result: { lines: string[] } | { error: unknown }) => {
    if ("error" in result) throw result.error;
    for (const line of result.lines) {
      if (closed) return;
      if (!process.stdout.write(`${line}\n`)) await once(process.stdout, "drain");
    }
  };
  const send = async (batch: string[]) => {
    const first = lineNumber - batch.length + 1;
    inFlight.push(
      answer(embedder, batch).then(
        (out) => ({
          lines: out.map((o, i) => {
            if (o.error === undefined) return o.line;
            bad++;
            process.stderr.write(`${JSON.stringify({ line: first + i, error: o.error })}\n`);
            return "null";
          }),
        }),
        (error: unknown) => ({ error }),
      ),
    );
    if (inFlight.length >= IN_FLIGHT) await write(await (inFlight.shift() as (typeof inFlight)[0]));
  };

  try {
    const lines = input[Symbol.asyncIterator]();
    let batch: string[] = [];
    let next = lines.next();
    for (;;) {
      const idle = batch.length > 0 ? wait(IDLE_FLUSH_MS) : undefined;
      const r = await (idle ? Promise.race([next, idle.promise]) : next);
      idle?.cancel();
      if (r === IDLE) {
        await send(batch);
        batch = [];
        continue;
      }
      const { done, value } = r as IteratorResult<string>;
      if (done || closed) break;
      lineNumber++;
      batch.push(value);
      next = lines.next();
      if (batch.length >= BATCH_LINES) {
        await send(batch);
        batch = [];
      }
    }
    if (batch.length > 0 && !closed) await send(batch);
    while (inFlight.length > 0) await write(await (inFlight.shift() as (typeof inFlight)[0]));
  } finally {
    await embedder.close();
  }
  return bad > 0 ? 1 : 0;
}

function build(model: string | undefined): Embedder {
  try {
    return configuredEmbedder(model === undefined ? {} : { model });
  } catch (err) {
    throw cannotUse(model, err);
  }
}

function cannotUse(model: string | undefined, err: unknown): Error {
  const which = model ?? "the configured model";
  return new Error(`embed: cannot use ${which}: ${(err as Error).message}`, { cause: err });
}

interface Answer {
  line: string;
  error?: string;
}

/** The lines of one batch: those with text embedded in one call, the others refused alone. */
async function answer(embedder: Embedder, lines: string[]): Promise<Answer[]> {
  const out: Answer[] = lines.map(() => ({ line: "null" }));
  const texts: string[] = [];
  const at: number[] = [];
  lines.forEach((line, i) => {
    try {
      checkTexts([line]);
      texts.push(line);
      at.push(i);
    } catch (err) {
      out[i] = { line: "null", error: (err as Error).message.replace(/^text 0/, "the line") };
    }
  });
  if (texts.length === 0) return out;
  let batch: EmbedBatch;
  try {
    batch = await embedder.embed(texts);
  } catch (err) {
    // A model that cannot load fails every line alike: stop with its reason.
    if (err instanceof EmbeddingError && err.code === "unavailable")
      throw cannotUse(undefined, err);
    const message = (err as Error).message;
    for (const i of at) out[i] = { line: "null", error: message };
    return out;
  }
  const { model, dims } = batch.model;
  batch.vectors.forEach((v, k) => {
    const vector = Array.from(v, (x) => Number(x.toPrecision(9)));
    out[at[k] as number] = { line: JSON.stringify({ model, dims, vector }) };
  });
  return out;
}

const IDLE = Symbol("idle");

function wait(ms: number): { promise: Promise<typeof IDLE>; cancel: () => void } {
  let timer: NodeJS.Timeout | undefined;
  const promise = new Promise<typeof IDLE>((resolve) => {
    timer = setTimeout(() => resolve(IDLE), ms);
  });
  return { promise, cancel: () => clearTimeout(timer) };
}
