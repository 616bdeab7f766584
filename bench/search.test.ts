import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { testServerUrl } from "@/lib/testing/db";

// Keeps the search benchmark runnable and its --json line a contract, on a tiny corpus; the
// figures are for people (lib/search/README.md), never asserted.
const run = promisify(execFile);
const env = { ...process.env, DATABASE_URL: testServerUrl(), LOG_LEVEL: "silent" };

describe("npm run -s bench -- search --json", () => {
  it("prints one JSON line: per size, both modes' percentiles over runs, their ratio, the vector paths with recall", async () => {
    const { stdout } = await run(
      "npm",
      [
        "run",
        "-s",
        "bench",
        "--",
        "search",
        "--items",
        "2000",
        "--queries",
        "6",
        "--runs",
        "2",
      ].concat(["--recall-queries", "3", "--dims", "64", "--json"]),
      { env, maxBuffer: 1 << 20 },
    );
    const lines = stdout.trim().split("\n");
    expect(lines).toHaveLength(1);
    const [result, ...more] = JSON.parse(lines[0] as string);
    expect(more).toEqual([]);
    expect(Object.keys(result).sort()).toEqual(
      [
        "backend",
        "db",
        "dims",
        "fillSeconds",
        "fulltext",
        "goalP95Ms",
        "hybrid",
        "indexSeconds",
        "items",
        "pgvectorVersion",
        "queries",
        "ratio",
        "vector",
      ].sort(),
    );
    expect(result).toMatchObject({
      db: testServerUrl() ? "postgres" : "pglite",
      items: 2000,
      dims: 64,
      queries: 6,
      goalP95Ms: 100,
    });
    for (const mode of [result.hybrid, result.fulltext]) {
      expect(mode.runs).toHaveLength(2);
      expect(mode.p95.min).toBeLessThanOrEqual(mode.p95.median);
      expect(mode.p95.median).toBeLessThanOrEqual(mode.p95.max);
      for (const r of mode.runs) expect(r.p50Ms).toBeLessThanOrEqual(r.p95Ms);
      expect(Object.keys(mode.byKind).sort()).toEqual(["broad", "specific"]);
      expect(Object.keys(mode.parts).sort()).toEqual(["fuseMs", "lexicalMs", "vectorMs"]);
    }
    expect(result.ratio).toBeCloseTo(result.hybrid.p95.median / result.fulltext.p95.median, 2);
    // Every path the database has, each with its recall of the exact top 10.
    const paths = result.backend === "pgvector" ? ["pgvector", "portable"] : ["portable"];
    expect(Object.keys(result.vector).sort()).toEqual(paths.sort());
    for (const v of Object.values(result.vector) as { recallAt10: number; k: number }[]) {
      expect(v.k).toBe(100);
      expect(v.recallAt10).toBeGreaterThan(0.5);
      expect(v.recallAt10).toBeLessThanOrEqual(1);
    }
    expect(result.indexSeconds === null).toBe(result.backend === "portable");
  }, 300_000);

  it("refuses a bad option with exit code 2 and says which", async () => {
    const out = await run("npm", ["run", "-s", "bench", "--", "search", "--items", "10"], {
      env,
    }).catch((e: { code: number; stderr: string }) => e);
    expect(out).toMatchObject({ code: 2 });
    expect((out as { stderr: string }).stderr).toMatch(/--items must be an integer from 1000/);
  });
});
