import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

// Keeps the embed benchmark runnable and its --json line a contract; the figures are for people,
// never asserted: the machines are shared and noisy.
const run = promisify(execFile);

describe("npm run -s bench -- embed --json", () => {
  it("prints one JSON line: each provider's model, load, RSS, texts/s spreads and the ratios", async () => {
    const { stdout } = await run(
      "npm",
      [
        "run",
        "-s",
        "bench",
        "--",
        "embed",
        "--runs",
        "1",
        "--texts",
        "8",
        "--single",
        "2",
        "--json",
      ],
      { env: { ...process.env, LOG_LEVEL: "silent" }, maxBuffer: 16 * 1024 * 1024 },
    );
    const lines = stdout.trim().split("\n");
    expect(lines).toHaveLength(1);
    const result = JSON.parse(lines[0] as string);
    expect(result).toMatchObject({ runs: 1, texts: { batch32: 8, batch1: 2 } });
    expect(Object.keys(result.providers)).toEqual(["lexical", "shipped", "http"]);
    expect(result.providers.lexical.model).toBe("lexical:char3-hash-512@1");
    expect(result.providers.shipped.model).toBe("shipped:use-lite@0.2.0");
    expect(result.providers.http.model).toMatch(/^http:sim-embed@127\.0\.0\.1:\d+$/);
    type Spread = { min: number; median: number; max: number };
    type Figures = { loadMs: number; rssAfterLoadMb: number; textsPerSec: Record<string, Spread> };
    for (const p of Object.values(result.providers) as Figures[]) {
      expect(p.loadMs).toBeGreaterThanOrEqual(0);
      expect(p.rssAfterLoadMb).toBeGreaterThan(0);
      for (const mode of ["batch32", "batch1"]) {
        const { min, median, max } = p.textsPerSec[mode] as Spread;
        expect(min).toBeGreaterThan(0);
        expect(min).toBeLessThanOrEqual(median);
        expect(median).toBeLessThanOrEqual(max);
      }
    }
    expect(result.providers.http.tokensPerText).toBeGreaterThan(0);
    expect(result.ratios.lexical).toBeUndefined();
    expect(result.ratios.shipped.batch32).toBeCloseTo(
      result.providers.shipped.textsPerSec.batch32.median /
        result.providers.lexical.textsPerSec.batch32.median,
      9,
    );
    expect(result.rss.peakMb).toBeGreaterThanOrEqual(result.rss.startMb);
  });

  it("refuses a bad option with a clear message and exit code 2", async () => {
    const failed = await run("npm", [
      "run",
      "-s",
      "bench",
      "--",
      "embed",
      "--providers",
      "bert",
    ]).catch((err) => err);
    expect(failed.code).toBe(2);
    expect(failed.stderr).toMatch(/--providers takes lexical, shipped, http; not "bert"/);
  });
});
