import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "./config";
import { emit } from "./events";
import { HEALTH_STATES } from "./health";
import { registerMetrics, scrape } from "./metrics";
import { gitHead, readBuildInfo } from "./metrics/buildInfo";
import { createTestDatabase, type TestDatabase } from "./testing/db";
import { seedMetricsRows } from "./testing/metricsSeed";
import { requireTool } from "./testing/requireTool";

// The metrics operators expect (issue 17): processed / failed / dead-lettered jobs and their
// duration per queue, fetch duration by source, every source health state as 0/1, build info;
// and the alerts and panels that read them.
const promtool = requireTool(
  "promtool",
  "promtool check metrics / test rules on the queue, fetch, health and build metrics",
  "apt-get install prometheus; .ci/run installs it",
);
let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
  await seedMetricsRows(db, [10, 40]);
  registerMetrics();
});
afterAll(async () => {
  await db?.drop();
});

const lines = (body: string, prefix: string) =>
  body.split("\n").filter((l) => l.startsWith(prefix));
const value = (body: string, series: string): number | undefined => {
  const line = body.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

describe("queue metrics per stage", () => {
  it("start at 0 for every queue a worker starts, before any job finished", async () => {
    emit("queue:started", { workerId: "w-ops", queues: ["opsidle"] });
    const { body } = await scrape();
    for (const outcome of ["completed", "failed", "dead"]) {
      expect(value(body, `wirewatch_queue_jobs_total{stage="opsidle",outcome="${outcome}"}`)).toBe(
        0,
      );
    }
    for (const outcome of ["completed", "failed"]) {
      const h = `{stage="opsidle",outcome="${outcome}"}`;
      expect(value(body, `wirewatch_queue_job_duration_seconds_count${h}`)).toBe(0);
      expect(value(body, `wirewatch_queue_job_duration_seconds_sum${h}`)).toBe(0);
    }
  });

  it("count processed, failed and dead-lettered jobs and time completed and failed ones", async () => {
    emit("queue:started", { workerId: "w-ops", queues: ["opsdedup"] });
    emit("job:completed", { queue: "opsdedup", durationMs: 4, rescheduled: false });
    emit("job:completed", { queue: "opsdedup", durationMs: 1_500, rescheduled: true });
    emit("job:failed", {
      queue: "opsdedup",
      attempt: 1,
      retryInSeconds: 5,
      error: "42703",
      durationMs: 20,
    });
    // A clock stepped back, a missing duration: counted as failures, not timed.
    for (const durationMs of [-5, Number.NaN]) {
      emit("job:failed", {
        queue: "opsdedup",
        attempt: 2,
        retryInSeconds: null,
        error: "42703",
        durationMs,
      });
    }
    emit("job:dead", {
      queue: "opsdedup",
      attempt: 3,
      error: "42703",
      workerId: "w-ops",
      jobId: "7",
    });
    const { body } = await scrape();
    const jobs = (outcome: string) =>
      value(body, `wirewatch_queue_jobs_total{stage="opsdedup",outcome="${outcome}"}`);
    expect([jobs("completed"), jobs("failed"), jobs("dead")]).toEqual([2, 3, 1]);
    const h = (part: string, labels: string) =>
      value(body, `wirewatch_queue_job_duration_seconds_${part}{${labels}}`);
    const completed = 'stage="opsdedup",outcome="completed"';
    expect(h("count", completed)).toBe(2);
    expect(h("sum", completed)).toBeCloseTo(1.504, 6);
    expect(h("bucket", `le="0.0025",${completed}`)).toBe(0);
    expect(h("bucket", `le="0.005",${completed}`)).toBe(1);
    expect(h("bucket", `le="1",${completed}`)).toBe(1);
    expect(h("bucket", `le="2.5",${completed}`)).toBe(2);
    expect(h("bucket", `le="+Inf",${completed}`)).toBe(2);
    expect(h("count", 'stage="opsdedup",outcome="failed"')).toBe(1);
    expect(h("bucket", 'le="0.025",stage="opsdedup",outcome="failed"')).toBe(1);
  });

  it("keeps the stage label bounded: URLs are invalid, past 32 stages is other", async () => {
    emit("job:completed", { queue: "https://evil.example/q", durationMs: 1, rescheduled: false });
    for (let i = 0; i < 40; i++) {
      emit("job:completed", { queue: `opsmany${i}`, durationMs: 1, rescheduled: false });
    }
    const { body } = await scrape();
    const stages = new Set(
      lines(body, "wirewatch_queue_job_duration_seconds_count{").map(
        (l) => /stage="([^"]*)"/.exec(l)?.[1],
      ),
    );
    expect(stages.has("invalid")).toBe(true);
    expect(stages.has("other")).toBe(true);
    // 32 named stages (opsidle, opsdedup and the first 30 of these), "invalid" and "other".
    expect(stages.size).toBe(34);
    expect(stages.has("opsmany29")).toBe(true);
    expect(stages.has("opsmany30")).toBe(false);
    expect(body).not.toContain("evil.example");
  });
});

describe("fetch duration by source", () => {
  it("times each source's attempts, the first 100 sources by name and the rest as other", async () => {
    const fetched = (source: string, durationSeconds: number) =>
      emit("fetch:finished", {
        source,
        collector: "A",
        code: "ok",
        status: 200,
        bytes: 10,
        durationSeconds,
      });
    fetched("alpha", 0.3);
    fetched("alpha", 0.07);
    fetched("https://feeds.example.com/x.xml", 1);
    for (let i = 1; i <= 150; i++) fetched(`src${i}`, 2);
    const { body } = await scrape();
    const h = (part: string, labels: string) =>
      value(body, `wirewatch_fetch_duration_seconds_${part}{${labels}}`);
    expect(h("count", 'source="alpha"')).toBe(2);
    expect(h("sum", 'source="alpha"')).toBeCloseTo(0.37, 6);
    expect(h("bucket", 'le="0.1",source="alpha"')).toBe(1);
    expect(h("bucket", 'le="0.5",source="alpha"')).toBe(2);
    expect(h("count", 'source="invalid"')).toBe(1);
    // 100 label sets (alpha, invalid, src1 … src98), then every later source under "other".
    const counts = lines(body, "wirewatch_fetch_duration_seconds_count{");
    expect(counts).toHaveLength(101);
    expect(h("count", 'source="src98"')).toBe(1);
    expect(h("count", 'source="src99"')).toBeUndefined();
    expect(h("count", 'source="other"')).toBe(52);
    // Nothing is dropped: the sources' counts add up to every attempt.
    const total = counts.reduce((n, l) => n + Number(l.split(" ")[1]), 0);
    expect(total).toBe(153);
    expect(body).not.toContain("feeds.example.com");
  });
});

describe("source health for every state", () => {
  it("exports 0 or 1 for each state of each source, exactly one 1 a source", async () => {
    const { body } = await scrape({ database: async () => db });
    const series = lines(body, "wirewatch_source_health{");
    const bySource = new Map<string, Map<string, number>>();
    for (const l of series) {
      const [, source, state, v] = /source="([^"]+)",state="([^"]+)"\} (\S+)/.exec(l) ?? [];
      if (!source || !state) throw new Error(`unexpected series ${l}`);
      const states = bySource.get(source) ?? new Map<string, number>();
      states.set(state, Number(v));
      bySource.set(source, states);
    }
    // lib/testing/metricsSeed.ts: meridian's breaker is open, wire's stream is alive.
    expect([...bySource.keys()].sort()).toEqual(["meridian", "wire"]);
    for (const [source, states] of bySource) {
      expect([...states.keys()].sort(), source).toEqual([...HEALTH_STATES].sort());
      expect(
        [...states.values()].every((v) => v === 0 || v === 1),
        source,
      ).toBe(true);
      expect(
        [...states.values()].reduce((a, b) => a + b, 0),
        source,
      ).toBe(1);
    }
    expect(bySource.get("meridian")?.get("failing")).toBe(1);
    expect(bySource.get("meridian")?.get("healthy")).toBe(0);
    // The alert's expression has a series for a source that is not failing: 0, not absent.
    expect(bySource.get("wire")?.get("failing")).toBe(0);
  });

  it("moves a source's 1 to its new state at the next scrape", async () => {
    await db.prisma
      .$executeRaw`UPDATE source_state SET breaker_state = 'closed' WHERE source_id = 'meridian'`;
    await db.prisma.$executeRaw`UPDATE sources SET enabled = false WHERE id = 'meridian'`;
    try {
      const { body } = await scrape({ database: async () => db });
      const health = (state: string) =>
        value(body, `wirewatch_source_health{source="meridian",state="${state}"}`);
      expect(health("disabled")).toBe(1);
      expect(health("failing")).toBe(0);
    } finally {
      await db.prisma.$executeRaw`UPDATE sources SET enabled = true WHERE id = 'meridian'`;
      await db.prisma
        .$executeRaw`UPDATE source_state SET breaker_state = 'open' WHERE source_id = 'meridian'`;
    }
  });
});

describe("build info", () => {
  let dir = "";
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), "ww-build-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const hash = "0123456789abcdef0123456789abcdef01234567";
  const repo = (name: string, files: Record<string, string>) => {
    const root = path.join(dir, name);
    for (const [file, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
      writeFileSync(path.join(root, file), text);
    }
    return root;
  };

  it("reads HEAD's commit from .git's files: loose ref, packed ref, detached, worktree", () => {
    expect(
      gitHead(
        repo("loose", {
          ".git/HEAD": "ref: refs/heads/main\n",
          ".git/refs/heads/main": `${hash}\n`,
        }),
      ),
    ).toBe(hash);
    expect(
      gitHead(
        repo("packed", {
          ".git/HEAD": "ref: refs/heads/main\n",
          ".git/packed-refs": `# pack-refs with: peeled fully-peeled sorted\n${"f".repeat(40)} refs/heads/other\n${hash} refs/heads/main\n`,
        }),
      ),
    ).toBe(hash);
    expect(gitHead(repo("detached", { ".git/HEAD": `${hash}\n` }))).toBe(hash);
    const common = repo("common", {
      ".git/refs/heads/feature": `${hash}\n`,
      ".git/worktrees/wt/HEAD": "ref: refs/heads/feature\n",
      ".git/worktrees/wt/commondir": "../..\n",
    });
    expect(
      gitHead(repo("worktree", { ".git": `gitdir: ${path.join(common, ".git/worktrees/wt")}\n` })),
    ).toBe(hash);
    expect(gitHead(repo("none", { "README.md": "no git here" }))).toBeNull();
    expect(gitHead(repo("garbage", { ".git/HEAD": "ref: refs/heads/gone\n" }))).toBeNull();
  });

  it("prefers WIREWATCH_COMMIT, falls back to .git, then to unknown", () => {
    const checkout = path.join(dir, "loose");
    expect(readBuildInfo({ commit: "ABCDEF1234", root: checkout, node: "v20.19.0" })).toEqual({
      version: JSON.parse(readFileSync("package.json", "utf8")).version,
      commit: "abcdef1234",
      node: "v20.19.0",
    });
    expect(readBuildInfo({ root: checkout }).commit).toBe(process.env.WIREWATCH_COMMIT ?? hash);
    expect(readBuildInfo({ root: path.join(dir, "none") }).commit).toBe(
      process.env.WIREWATCH_COMMIT ?? "unknown",
    );
    expect(readBuildInfo({ commit: "not a commit", root: checkout }).commit).toBe("unknown");
  });

  it("refuses a WIREWATCH_COMMIT that is not a commit hash, naming the setting", () => {
    expect(() => parseConfig({ WIREWATCH_COMMIT: "main; rm -rf /" })).toThrow(
      /WIREWATCH_COMMIT: must be a git commit hash/,
    );
    expect(parseConfig({ WIREWATCH_COMMIT: hash }).WIREWATCH_COMMIT).toBe(hash);
  });

  it("exports wirewatch_build_info 1 with version, commit and node", async () => {
    const { body } = await scrape();
    const info = lines(body, "wirewatch_build_info{");
    expect(info).toHaveLength(1);
    const [, version, commit, node, v] =
      /\{version="([^"]*)",commit="([^"]*)",node="([^"]*)"\} (\S+)$/.exec(info[0] ?? "") ?? [];
    expect(version).toBe(JSON.parse(readFileSync("package.json", "utf8")).version);
    expect(commit).toMatch(/^([0-9a-f]{7,40}|unknown)$/);
    expect(commit).toBe(readBuildInfo().commit);
    expect(node).toBe(process.version);
    expect(v).toBe("1");
  });
});

describe("the exposition, the alerts and the panels", () => {
  const families = [
    "wirewatch_queue_jobs_total",
    "wirewatch_queue_job_duration_seconds",
    "wirewatch_fetch_duration_seconds",
    "wirewatch_source_health",
    "wirewatch_build_info",
  ];

  it.skipIf(promtool.skip)(`passes promtool check metrics${promtool.note}`, async () => {
    const { body } = await scrape({ database: async () => db });
    const belongs = (l: string) =>
      families.some((f) => new RegExp(`^(# (HELP|TYPE) )?${f}(_bucket|_sum|_count)?[{ ]`).test(l));
    const picked = body.split("\n").filter(belongs).join("\n");
    for (const f of families) expect(picked).toContain(`# TYPE ${f} `);
    const out = execFileSync(promtool.need(), ["check", "metrics"], {
      input: `${picked}\n`,
      encoding: "utf8",
    });
    console.log(
      `promtool check metrics (queue, fetch duration, source health, build info: ${picked.split("\n").filter((l) => !l.startsWith("#")).length} series): ${out.trim() || "OK"}`,
    );
  });

  it.skipIf(promtool.skip)(
    `has a promtool test rules case for each new alert, and they pass${promtool.note}`,
    () => {
      const tests = readFileSync(path.resolve("deploy/alerts.test.yml"), "utf8");
      for (const rule of [
        "WirewatchQueueFailing",
        "WirewatchQueueDeadLettering",
        "WirewatchSourceFailing",
        "WirewatchMixedBuilds",
      ]) {
        expect(tests).toContain(`alertname: ${rule}`);
      }
      const checked = execFileSync(
        promtool.need(),
        ["check", "rules", path.resolve("deploy/alerts.yml")],
        { encoding: "utf8" },
      );
      expect(checked).toMatch(/SUCCESS/);
      const out = execFileSync(
        promtool.need(),
        ["test", "rules", path.resolve("deploy/alerts.test.yml")],
        { encoding: "utf8" },
      );
      console.log(`promtool check rules: ${checked.trim().split("\n").at(-1)}`);
      console.log(`promtool test rules deploy/alerts.test.yml: ${out.trim().split("\n").at(-1)}`);
      expect(out).toMatch(/SUCCESS/);
    },
  );

  it("has panels for jobs by outcome, failure share, job and fetch duration, health and builds, each exported", async () => {
    const dashboard = JSON.parse(
      readFileSync(path.resolve("deploy/grafana/wirewatch.json"), "utf8"),
    ) as { panels: { title: string; targets?: { expr: string }[] }[] };
    const wanted: Record<string, string> = {
      "Jobs per minute by queue: processed, failed, dead-lettered": "wirewatch_queue_jobs_total",
      "Job failure share by queue (failed / completed + failed)": "wirewatch_queue_jobs_total",
      "Job duration p50 / p99 by queue (completed)": "wirewatch_queue_job_duration_seconds_bucket",
      "Fetch duration p99 by source (top 10)": "wirewatch_fetch_duration_seconds_bucket",
      "Sources by health state": "wirewatch_source_health",
      "Builds by instance (wirewatch_build_info)": "wirewatch_build_info",
    };
    const { body } = await scrape({ database: async () => db });
    for (const [title, metric] of Object.entries(wanted)) {
      const panel = dashboard.panels.find((p) => p.title === title);
      expect(panel, title).toBeDefined();
      const exprs = (panel?.targets ?? []).map((t) => t.expr).join("\n");
      expect(exprs, title).toContain(metric);
      expect(body).toContain(`\n${metric}{`);
    }
  });
});
