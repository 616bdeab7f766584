import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { testServerUrl } from "@/lib/testing/db";

// Keeps the dedup benchmark runnable and its --json line a contract, with a tiny window; the
// figures are for people (see the closing note), never asserted.
const run = promisify(execFile);
const env = { ...process.env, DATABASE_URL: testServerUrl(), LOG_LEVEL: "silent" };

interface Percentiles {
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

interface ModeLine extends Percentiles {
  mode: string;
  batch: { maxBatch: number; maxInFlight: number };
  decisionsPerSec: number;
  byStage: Record<string, { n: number } | undefined>;
  runs: (Percentiles & { byStage: Record<string, { n: number }> })[];
  writerObsPerSec: number;
  ratio: number;
}

describe("npm run -s bench -- dedup --json", () => {
  it("prints one JSON line: per mode, rates, per-item percentiles, the stage that settled each, the ratio", async () => {
    const { stdout } = await run(
      "npm",
      [
        "run",
        "-s",
        "bench",
        "--",
        "dedup",
        "--items",
        "1500",
        "--decisions",
        "41",
        "--runs",
        "2",
      ].concat(["--json", "--writer-rate", "1000"]),
      { env, maxBuffer: 1 << 20 },
    );
    const lines = stdout.trim().split("\n");
    expect(lines).toHaveLength(1);
    const modes = JSON.parse(lines[0] as string) as ModeLine[];
    // The batched stage and the baseline, one item per transaction, measured in the same run.
    expect(modes.map((m) => m.mode)).toEqual(["batched", "one at a time"]);
    for (const r of modes) {
      expect(Object.keys(r).sort()).toEqual(
        [
          "batch",
          "byStage",
          "concurrency",
          "db",
          "decisions",
          "decisionsPerSec",
          "fillSeconds",
          "items",
          "maxMs",
          "mode",
          "p50Ms",
          "p99Ms",
          "ratio",
          "runs",
          "writerObsPerSec",
        ].sort(),
      );
      expect(r).toMatchObject({ db: testServerUrl() ? "postgres" : "pglite", items: 1500 });
      expect(r.runs).toHaveLength(2);
      for (const x of r.runs) {
        // The first decision of a run warms up outside the clock: 40 timed.
        const settled = Object.values(x.byStage);
        expect(settled.reduce((t, s) => t + s.n, 0)).toBe(40);
        expect(x.p50Ms).toBeLessThanOrEqual(x.p99Ms);
        expect(x.p99Ms).toBeLessThanOrEqual(x.maxMs);
      }
      // Re-visits and copies of window items are in the mix: the first two stages settle some.
      expect((r.byStage.url?.n ?? 0) + (r.byStage.exact?.n ?? 0)).toBeGreaterThan(0);
      expect(r.writerObsPerSec).toBe(1000);
      expect(r.ratio).toBeCloseTo(r.decisionsPerSec / 1000, 2);
    }
    expect(modes[1]?.batch).toEqual({ maxBatch: 1, maxInFlight: testServerUrl() ? 4 : 1 });
  }, 180_000);

  it("refuses a bad option with exit code 2 and says which", async () => {
    const out = await run("npm", ["run", "-s", "bench", "--", "dedup", "--items", "0"], {
      env,
    }).catch((e: { code: number; stderr: string }) => e);
    expect(out).toMatchObject({ code: 2 });
    expect((out as { stderr: string }).stderr).toMatch(/--items must be an integer ≥ 1/);
  });
});
