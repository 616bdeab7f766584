import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { testServerUrl } from "@/lib/testing/db";

// Keeps the benchmark runnable and its --json line a contract; the figures themselves are for
// people (see README), never asserted: the machines are shared and noisy.
const run = promisify(execFile);

describe("npm run -s bench -- writer --json", () => {
  it("prints one JSON line with both rates and their ratio", async () => {
    const { stdout } = await run(
      "npm",
      ["run", "-s", "bench", "--", "writer", "--count", "400", "--json"],
      {
        env: { ...process.env, DATABASE_URL: testServerUrl(), LOG_LEVEL: "silent" },
      },
    );
    const lines = stdout.trim().split("\n");
    expect(lines).toHaveLength(1);
    const result = JSON.parse(lines[0] as string);
    expect(Object.keys(result).sort()).toEqual(
      ["count", "db", "ratio", "rawObsPerSec", "writerObsPerSec"].sort(),
    );
    expect(result.count).toBe(400);
    expect(result.db).toBe(testServerUrl() ? "postgres" : "pglite");
    expect(result.writerObsPerSec).toBeGreaterThan(0);
    expect(result.ratio).toBeCloseTo(result.writerObsPerSec / result.rawObsPerSec, 2);
  });
});
