import { once } from "node:events";
import { createInterface } from "node:readline";
import { judgeTitles } from "@/lib/dedup";

export const usage = `dedup-pairs                     read lines TEXT_A<TAB>TEXT_B from stdin and print one JSON line per
                                  pair, {"duplicate":…,"stage":…,"score":…}, judged by lib/dedup with the
                                  shipped defaults as two items with those titles and no link; a line
                                  without exactly one tab prints null and an error on stderr (exit 1)`;

/**
 * One output line for one input line, so a caller can zip outputs with inputs. A malformed line
 * (no tab, or more than one) still gets its line — `null`, which no reader can take for a
 * verdict — and its number goes to stderr; the exit code is 1 if any line was malformed.
 */
export function pairLine(line: string): { out: string; error?: string } {
  const fields = line.replace(/\r$/, "").split("\t");
  if (fields.length !== 2) {
    const what = fields.length === 1 ? "no tab" : `${fields.length - 1} tabs`;
    return { out: "null", error: `${what}; expected TEXT_A<TAB>TEXT_B` };
  }
  const v = judgeTitles(fields[0] as string, fields[1] as string);
  return { out: JSON.stringify({ duplicate: v.duplicate, stage: v.stage, score: v.score }) };
}

export async function run(_args: string[]): Promise<number> {
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
  for await (const line of input) {
    if (closed) break;
    n++;
    const r = pairLine(line);
    if (r.error) {
      bad++;
      process.stderr.write(`dedup-pairs: line ${n}: ${r.error}\n`);
    }
    // Stream: wait for the pipe to drain rather than buffer a large input's answers in memory.
    if (!process.stdout.write(`${r.out}\n`)) await once(process.stdout, "drain");
  }
  return bad > 0 ? 1 : 0;
}
