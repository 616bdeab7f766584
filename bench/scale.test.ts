import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { requireRealPostgres, testServerUrl } from "@/lib/testing/db";
import type { ScalePoint } from "./scale";
import { scaleOptions } from "./scale";

// Keeps the scale benchmark runnable and its --json document a contract, on a small fleet. The
// timing figures depend on the machine (in CI, on the tests running beside it) and are for
// people (docs/capacity.md); what is asserted holds on any machine: polls happened, every
// process was measured, and no host saw more than its budget across the processes.
const run = promisify(execFile);

describe("bench scale options", () => {
  it("defaults to 100,000 sources and 4 collecting processes; --short is CI's small run", () => {
    expect(scaleOptions([])).toMatchObject({
      sources: 100_000,
      workers: [4],
      intervalSeconds: 300,
      feedsPerHost: 100,
      seconds: 375,
      line: true,
      settle: false,
      concurrency: 64,
    });
    expect(scaleOptions(["--settle"]).settle).toBe(true);
    expect(scaleOptions(["--short"])).toMatchObject({
      sources: 2_000,
      workers: [1, 2],
      intervalSeconds: 60,
      feedsPerHost: 20,
      seconds: 75,
    });
    expect(scaleOptions(["--concurrency", "128"]).concurrency).toBe(128);
    expect(() => scaleOptions(["--concurrency", "0"])).toThrow(/--concurrency/);
    expect(() => scaleOptions(["--workers", "0"])).toThrow(/--workers/);
    expect(() => scaleOptions(["--line", "maybe"])).toThrow(/--line is on or off/);
    expect(() => scaleOptions(["--sources", "1e3x"])).toThrow(/--sources/);
  });
});

describe.skipIf(!requireRealPostgres("bench scale (worker processes sharing one database)"))(
  "npm run -s bench -- scale --json",
  () => {
    it("measures 1,000 sources with two collecting processes and the line", async () => {
      const { stdout } = await run(
        "npm",
        [
          "run",
          "-s",
          "bench",
          "--",
          "scale",
          "--sources",
          "1000",
          "--feeds-per-host",
          "20",
          "--workers",
          "2",
          "--interval",
          "60",
          "--seconds",
          "40",
          "--warmup",
          "10",
          "--json",
        ],
        {
          // Small pools: three worker processes beside the other test files share max_connections.
          env: {
            ...process.env,
            DATABASE_URL: testServerUrl(),
            DATABASE_POOL_SIZE: "4",
            LOG_LEVEL: "silent",
          },
          timeout: 300_000,
          maxBuffer: 16 * 1024 * 1024,
        },
      );
      const lines = stdout.trim().split("\n");
      expect(lines).toHaveLength(1);
      const result = JSON.parse(lines[0] as string) as { sources: number; points: ScalePoint[] };
      expect(result.sources).toBe(1000);
      const [point] = result.points;
      if (!point) throw new Error("no point measured");
      expect(point.workers).toBe(2);
      expect(point.polls).toBeGreaterThan(0);
      expect(point.lateness.p50Ms).not.toBeNull();
      expect(point.processes.map((p) => p.role)).toEqual([
        "worker 1",
        "worker 2",
        "line",
        "simulator",
      ]);
      for (const p of point.processes) {
        expect(p.rssMb.max).toBeGreaterThan(0);
        expect(Number.isFinite(p.rssMb.drift)).toBe(true);
      }
      // 1,000 feeds on 50 hosts: the busiest second any host saw, all processes together.
      expect(point.politeness.hosts).toBe(50);
      expect(point.politeness.busiestSecond).toBeGreaterThan(0);
      expect(point.politeness.met).toBe(true);
      expect(point.tables.map((t) => t.table)).toContain("fetch_attempts");
    }, 320_000);

    it("refuses a bad option with a clear message and exit code 2", async () => {
      const failed = await run("npm", ["run", "-s", "bench", "--", "scale", "--workers", "x"], {
        env: { ...process.env, DATABASE_URL: testServerUrl() },
      }).catch((err: { code: number; stderr: string }) => err);
      expect(failed).toMatchObject({ code: 2 });
      expect((failed as { stderr: string }).stderr).toMatch(/--workers takes counts from 1 to 16/);
    }, 60_000);
  },
);
