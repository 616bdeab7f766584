import { createInterface } from "node:readline";
import { canonicalizeUrl } from "@/lib/canonical";

export const usage = `canonical-url                   read lines from stdin, each URL or URL<TAB>BASE, and print one
                                  canonical URL per line (lib/canonical.ts, seed 003's rules), or
                                  "!error: <reason>" for an invalid one ("!error: empty" for a blank line)`;

export function canonicalLine(line: string): string {
  const [url = "", base] = line.replace(/\r$/, "").split("\t", 2);
  if (!url.trim()) return "!error: empty";
  try {
    return canonicalizeUrl(url, base?.trim() || undefined);
  } catch (err) {
    return `!error: ${(err as Error).message}`;
  }
}

export async function run(_args: string[]): Promise<number> {
  const lines = createInterface({ input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY });
  for await (const line of lines) process.stdout.write(`${canonicalLine(line)}\n`);
  return 0;
}
