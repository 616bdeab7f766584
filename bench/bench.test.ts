import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { requireRealPostgres, testServerUrl } from "@/lib/testing/db";

// Keeps the benchmark runnable and its --json line a contract; the figures themselves are for
// people (see README), never asserted: the machines are shared and noisy.
const run = promisify(execFile);

describe("npm run -s bench -- writer --json", () => {
  it("prints one JSON line with both rates and their ratio, each run's and the medians", async () => {
    const { stdout } = await run(
      "npm",
      ["run", "-s", "bench", "--", "writer", "--count", "400", "--runs", "3", "--json"],
      {
        env: { ...process.env, DATABASE_URL: testServerUrl(), LOG_LEVEL: "silent" },
      },
    );
    const lines = stdout.trim().split("\n");
    expect(lines).toHaveLength(1);
    const result = JSON.parse(lines[0] as string);
    expect(Object.keys(result).sort()).toEqual(
      ["count", "db", "ratio", "rawObsPerSec", "runs", "writerObsPerSec"].sort(),
    );
    expect(result.count).toBe(400);
    expect(result.db).toBe(testServerUrl() ? "postgres" : "pglite");
    expect(result.runs).toHaveLength(3);
    for (const r of result.runs) {
      expect(r.writerObsPerSec).toBeGreaterThan(0);
      expect(r.ratio).toBeCloseTo(r.writerObsPerSec / r.rawObsPerSec, 2);
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[1] as number;
    const runs: { ratio: number; writerObsPerSec: number }[] = result.runs;
    expect(result.ratio).toBeCloseTo(median(runs.map((r) => r.ratio)), 3);
    expect(result.writerObsPerSec).toBeCloseTo(median(runs.map((r) => r.writerObsPerSec)), 0);
  });
});

describe.skipIf(!requireRealPostgres("the queue bench (worker processes racing for rows)"))(
  "npm run -s bench -- queue --json",
  () => {
    it("prints one JSON line with both rates, their ratio and the wait percentiles", async () => {
      const { stdout } = await run(
        "npm",
        [
          "run",
          "-s",
          "bench",
          "--",
          "queue",
          "--jobs",
          "2000",
          "--workers",
          "1,2",
          "--latency-seconds",
          "0.5",
          "--json",
        ],
        { env: { ...process.env, DATABASE_URL: testServerUrl(), LOG_LEVEL: "silent" } },
      );
      const lines = stdout.trim().split("\n");
      expect(lines).toHaveLength(1);
      const result = JSON.parse(lines[0] as string);
      expect(Object.keys(result).sort()).toEqual(
        ["baselineJobsPerSec", "jobsPerSec", "p50Ms", "p99Ms", "ratio", "workers"].sort(),
      );
      expect(result.jobsPerSec).toBeGreaterThan(0);
      expect(result.baselineJobsPerSec).toBeGreaterThan(0);
      expect(result.ratio).toBeCloseTo(result.jobsPerSec / result.baselineJobsPerSec, 2);
      expect(result.p99Ms).toBeGreaterThanOrEqual(result.p50Ms);
      expect([1, 2]).toContain(result.workers);
    });

    it("with --peers, runs all four systems alternating and prints their medians and ratios", async () => {
      const { stdout } = await run(
        "npm",
        [
          "run",
          "-s",
          "bench",
          "--",
          "queue",
          "--peers",
          "--runs",
          "2",
          "--jobs",
          "2000",
          "--latency-seconds",
          "0.5",
          "--json",
        ],
        { env: { ...process.env, DATABASE_URL: testServerUrl(), LOG_LEVEL: "silent" } },
      );
      const lines = stdout.trim().split("\n");
      expect(lines).toHaveLength(1);
      const result = JSON.parse(lines[0] as string);
      expect(result).toMatchObject({ runs: 2, jobs: 2000 });
      expect(Object.keys(result.systems).sort()).toEqual([
        "graphile",
        "pg-boss",
        "raw",
        "wirewatch",
      ]);
      for (const s of Object.values(result.systems) as {
        rate: { min: number; median: number; max: number };
        p99: { median: number };
      }[]) {
        expect(s.rate.min).toBeGreaterThan(0);
        expect(s.rate.min).toBeLessThanOrEqual(s.rate.median);
        expect(s.rate.median).toBeLessThanOrEqual(s.rate.max);
        expect(s.p99.median).toBeGreaterThan(0);
      }
      const median = (name: string) => result.systems[name].rate.median;
      expect(result.ratios.graphile).toBeCloseTo(median("wirewatch") / median("graphile"), 6);
      expect(result.ratios.raw).toBeCloseTo(median("wirewatch") / median("raw"), 6);
      expect(result.ratios.pgBoss).toBeCloseTo(median("wirewatch") / median("pg-boss"), 6);
    });
  },
);

describe("npm run -s bench -- queue without PostgreSQL", () => {
  it("says it needs PostgreSQL and exits non-zero", async () => {
    const failed = await run("npm", ["run", "-s", "bench", "--", "queue", "--jobs", "10"], {
      env: { ...process.env, DATABASE_URL: "", LOG_LEVEL: "silent" },
    }).then(
      () => null,
      (err: { code?: number; stderr?: string }) => err,
    );
    expect(failed?.code).toBe(2);
    expect(failed?.stderr).toContain("the queue bench needs PostgreSQL");
  });
});

describe("npm run -s bench -- backpressure --json", () => {
  it("prints one JSON line with both peaks, the control's and whether everything arrived", async () => {
    const { stdout } = await run(
      "npm",
      [
        "run",
        "-s",
        "bench",
        "--",
        "backpressure",
        "--feeds",
        "3",
        "--entries",
        "5",
        "--summary",
        "500",
        "--slowdown",
        "10",
        "--json",
      ],
      { env: { ...process.env, DATABASE_URL: testServerUrl(), LOG_LEVEL: "silent" } },
    );
    const lines = stdout.trim().split("\n");
    expect(lines).toHaveLength(1);
    const result = JSON.parse(lines[0] as string);
    expect(result).toMatchObject({ observations: 15, dropped: 0, allArrived: true });
    expect(Object.keys(result).sort()).toEqual(
      [
        "allArrived",
        "bound",
        "controlPeakInFlight",
        "controlPeakMB",
        "differenceMB",
        "dropped",
        "observations",
        "slowPeakInFlight",
        "slowPeakMB",
        "slowWaits",
        "unthrottledPeakMB",
      ].sort(),
    );
  });
});

describe.skipIf(!requireRealPostgres("the dashboard bench (it measures PostgreSQL)"))(
  "npm run -s bench -- dashboard --json",
  () => {
    it("seeds, starts the app and measures every dashboard GET route, each answering 200", async () => {
      const { stdout } = await run(
        "npm",
        [
          "run",
          "-s",
          "bench",
          "--",
          "dashboard",
          "--news",
          "2000",
          "--events",
          "6000",
          "--sources",
          "5",
          "--runs",
          "2",
          "--json",
        ],
        { env: { ...process.env, DATABASE_URL: testServerUrl(), LOG_LEVEL: "silent" } },
      );
      const result = JSON.parse(stdout.trim().split("\n").at(-1) as string);
      expect(result).toMatchObject({ news: 2000, events: 6000, goalP95Ms: 200 });
      const paths = result.endpoints.map((e: { path: string }) => e.path);
      for (const route of ["/api/overview", "/api/sources", "/api/queues", "/api/dead-letters"]) {
        expect(paths).toContain(route);
      }
      for (const e of result.endpoints) expect(e, e.path).toMatchObject({ status: 200 });
    }, 600_000);

    it("--in-process calls the same GET handlers without a build, the Sources list in each order", async () => {
      const { stdout } = await run(
        "npm",
        [
          "run",
          "-s",
          "bench",
          "--",
          "dashboard",
          "--news",
          "2000",
          "--events",
          "6000",
          "--sources",
          "300",
          "--attempts",
          "3000",
          "--runs",
          "2",
          "--in-process",
          "--json",
        ],
        { env: { ...process.env, DATABASE_URL: testServerUrl(), LOG_LEVEL: "silent" } },
      );
      const result = JSON.parse(stdout.trim().split("\n").at(-1) as string);
      expect(result).toMatchObject({ sources: 300, attempts: 3000, inProcess: true });
      const paths = result.endpoints.map((e: { path: string }) => e.path);
      for (const route of [
        "/api/overview",
        "/api/sources",
        "/api/sources?sort=health&dir=desc",
        "/api/sources?sort=errorRate&dir=desc",
        "/api/sources?health=stalled",
      ]) {
        expect(paths).toContain(route);
      }
      for (const e of result.endpoints) expect(e, e.path).toMatchObject({ status: 200 });
    }, 600_000);
  },
);

describe("npm run -s bench -- stories --json", () => {
  it("prints one JSON line with receipt and apply rates, their baselines and ratios", async () => {
    const { stdout } = await run(
      "npm",
      ["run", "-s", "bench", "--", "stories", "--events", "200", "--json"],
      { env: { ...process.env, DATABASE_URL: testServerUrl() ?? "", LOG_LEVEL: "silent" } },
    );
    const lines = stdout.trim().split("\n");
    expect(lines).toHaveLength(1);
    const result = JSON.parse(lines[0] as string);
    expect(Object.keys(result).sort()).toEqual(
      [
        "applyBaselinePerSec",
        "applyPerSec",
        "applyRatio",
        "receiptBaselinePerSec",
        "receiptP50Ms",
        "receiptP99Ms",
        "receiptPerSec",
        "receiptRatio",
      ].sort(),
    );
    expect(result.receiptPerSec).toBeGreaterThan(0);
    expect(result.applyPerSec).toBeGreaterThan(0);
    expect(result.receiptP99Ms).toBeGreaterThanOrEqual(result.receiptP50Ms);
  }, 120_000);
});
