import { once } from "node:events";
import { createInterface } from "node:readline";
import { MemoryCallLedger } from "@/lib/embed/ledger";
import { configuredExtractor } from "@/lib/extract/configured";
import { ExtractionFailedError, type Extractor } from "@/lib/extract/types";
import { UsageError } from "../usage";

export const usage = `extract                         read JSON lines {"title": "…", "summary"?: "…"} from stdin and
                                  print one JSON line each: {"language","category","entities",
                                  "provider","model","tokensIn","tokensOut","costUsd"}, from the
                                  configured providers (WIREWATCH_EXTRACT_PROVIDERS; default the
                                  local one); a line that is not JSON or has no title prints null
                                  and {"line":N,"error":"…"} on stderr (exit 1 at the end)`;

/**
 * One output line per input line, in order, so a caller can zip them. Items are extracted one
 * after another through the configured chain (validated, corrected, failed over, costed), with
 * no database: the calls are counted in memory, the daily budget too. A line that cannot be
 * extracted (not JSON, no title, every provider failed) prints `null`, which no reader takes for
 * an extraction, and its reason on stderr; the exit code is 1 at the end.
 */
export async function run(args: string[]): Promise<number> {
  if (args.length > 0) throw new UsageError(`extract takes no arguments, not "${args.join(" ")}"`);
  const extractor = configuredExtractor({ ledger: new MemoryCallLedger() });
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
  try {
    for await (const line of input) {
      if (closed) break;
      lineNumber++;
      const out = await answer(extractor, line);
      if ("error" in out) {
        bad++;
        process.stderr.write(`${JSON.stringify({ line: lineNumber, error: out.error })}\n`);
      }
      const text = "error" in out ? "null" : out.line;
      if (!closed && !process.stdout.write(`${text}\n`)) await once(process.stdout, "drain");
    }
  } finally {
    await extractor.close();
  }
  return bad > 0 ? 1 : 0;
}

async function answer(
  extractor: Extractor,
  line: string,
): Promise<{ line: string } | { error: string }> {
  let item: unknown;
  try {
    item = JSON.parse(line);
  } catch {
    return { error: 'not JSON: a line must be one JSON object {"title": …}' };
  }
  if (item === null || typeof item !== "object" || Array.isArray(item)) {
    return { error: 'not a JSON object: a line must be {"title": …}' };
  }
  const { title, summary } = item as { title?: unknown; summary?: unknown };
  if (typeof title !== "string" || title.trim() === "") {
    return { error: 'no title: the object needs a non-empty string "title"' };
  }
  if (summary !== undefined && summary !== null && typeof summary !== "string") {
    return { error: "the summary must be a string when given" };
  }
  try {
    const result = await extractor.extract({
      title,
      summary: (summary as string | null | undefined) ?? null,
    });
    const { language, category, entities } = result.extraction;
    return {
      line: JSON.stringify({
        language,
        category,
        entities,
        provider: result.provider,
        model: result.model,
        tokensIn: result.tokensIn,
        tokensOut: result.tokensOut,
        costUsd: result.costUsd,
      }),
    };
  } catch (err) {
    if (err instanceof ExtractionFailedError) return { error: err.message };
    throw err;
  }
}
