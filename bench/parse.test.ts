import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { corpusDir } from "@/workers/parser/testing/corpora";

// Keeps the parse benchmark runnable and its --json line a contract; the figures are for people
// (docs/decisions/018), never asserted: the machines are shared and noisy.
const run = promisify(execFile);
const haveCorpora = ["rss-parser", "gofeed", "miniflux"].every((name) => corpusDir(name));

describe.skipIf(!haveCorpora)("npm run -s bench -- parse --json", () => {
  it("prints one JSON line: both workloads, each parser's MB/s spread and the ratios", async () => {
    const { stdout } = await run(
      "npm",
      ["run", "-s", "bench", "--", "parse", "--runs", "1", "--seconds", "0", "--json"],
      { env: { ...process.env, LOG_LEVEL: "silent" }, maxBuffer: 16 * 1024 * 1024 },
    );
    const lines = stdout.trim().split("\n");
    expect(lines).toHaveLength(1);
    const result = JSON.parse(lines[0] as string);
    expect(result.runs).toBe(1);
    expect(result.workloads.map((w: { workload: string }) => w.workload)).toEqual([
      "corpora",
      "rss5000",
    ]);
    const parsers = [
      "wirewatch",
      "rss-parser",
      "feed-parser (fields read)",
      "feed-parser (parse only)",
    ];
    for (const w of result.workloads) {
      expect(w.files).toBeGreaterThan(0);
      expect(w.bytes).toBeGreaterThan(0);
      expect(Object.keys(w.mbPerSec).sort()).toEqual([...parsers].sort());
      for (const name of parsers) {
        const { min, median, max } = w.mbPerSec[name];
        expect(min).toBeGreaterThan(0);
        expect(min).toBeLessThanOrEqual(median);
        expect(median).toBeLessThanOrEqual(max);
      }
      expect(w.ratios.wirewatch).toBeUndefined();
      expect(w.ratios["rss-parser"]).toBeCloseTo(
        w.mbPerSec.wirewatch.median / w.mbPerSec["rss-parser"].median,
        6,
      );
    }
    // The corpora workload leaves out files some parser refuses, for every parser alike.
    expect(result.workloads[0].excludedFiles).toBeGreaterThanOrEqual(0);
  });

  it("refuses a bad option with a clear message and exit code 2", async () => {
    const failed = await run("npm", ["run", "-s", "bench", "--", "parse", "--runs", "0"]).catch(
      (err) => err,
    );
    expect(failed.code).toBe(2);
    expect(failed.stderr).toMatch(/--runs must be a positive integer/);
  });
});
