import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { emit } from "./events";
import { registerMetrics, scrape } from "./metrics";
import { createTestDatabase, type TestDatabase } from "./testing/db";
import { DEDUP_SEED, seedDedupRows } from "./testing/dedupSeed";
import { requireTool } from "./testing/requireTool";

// The dedup stage's metrics: counted from dedup:decided, read from its tables at scrape time.
const promtool = requireTool(
  "promtool",
  "promtool check metrics on the dedup metrics",
  "apt-get install prometheus; .ci/run installs it",
);
let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
  await seedDedupRows(db);
  registerMetrics();
});
afterAll(async () => {
  await db?.drop();
});

const value = (body: string, series: string): number | undefined => {
  const line = body.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

describe("dedup metrics", () => {
  it("counts decisions by stage and outcome and times them, with bounded labels", async () => {
    emit("dedup:decided", { stage: "url", outcome: "duplicate", ms: 0.4 });
    emit("dedup:decided", { stage: "near", outcome: "duplicate", ms: 3 });
    emit("dedup:decided", { stage: "near", outcome: "review", ms: 4 });
    emit("dedup:decided", { stage: null, outcome: "unique", ms: 1.5 });
    emit("dedup:decided", { stage: null, outcome: "unique", ms: 30 });
    // Whatever a future stage says, labels stay in their sets; a bad duration is not timed.
    emit("dedup:decided", { stage: "https://evil.example/x", outcome: "<b>", ms: Number.NaN });
    emit("dedup:decided", { stage: "exact", outcome: "duplicate", ms: -1 });
    const { body } = await scrape({ database: async () => db });
    const d = (labels: string) => value(body, `wirewatch_dedup_decisions_total{${labels}}`);
    expect(d('stage="url",outcome="duplicate"')).toBe(1);
    expect(d('stage="near",outcome="duplicate"')).toBe(1);
    expect(d('stage="near",outcome="review"')).toBe(1);
    expect(d('stage="none",outcome="unique"')).toBe(2);
    expect(d('stage="other",outcome="other"')).toBe(1);
    expect(d('stage="exact",outcome="duplicate"')).toBe(1);
    const h = (s: string) => value(body, `wirewatch_dedup_decision_seconds_${s}`);
    expect(h('count{outcome="unique"}')).toBe(2);
    expect(h('bucket{le="0.002",outcome="unique"}')).toBe(1);
    expect(h('bucket{le="0.05",outcome="unique"}')).toBe(2);
    expect(h('bucket{le="0.005",outcome="review"}')).toBe(1);
    // The NaN and the negative duration: counted as decisions, not timed.
    expect(h('count{outcome="duplicate"}')).toBe(2);
    expect(h('count{outcome="other"}')).toBeUndefined();
    expect(body).not.toContain("evil.example");
  });

  it("reads reviews, clusters, the last hour's duplicate share and the backlog at scrape", async () => {
    const { body } = await scrape({ database: async () => db });
    expect(value(body, "wirewatch_dedup_review_queue_depth")).toBe(DEDUP_SEED.pendingReviews);
    // The oldest pending pair was queued 10 minutes before the seed ran.
    expect(value(body, "wirewatch_dedup_review_oldest_age_seconds")).toBeGreaterThanOrEqual(600);
    expect(value(body, "wirewatch_dedup_review_oldest_age_seconds")).toBeLessThan(900);
    expect(value(body, "wirewatch_dedup_clusters")).toBe(DEDUP_SEED.liveClusters);
    // Decided in the last hour: 10 items (the retracted one is no decision), 2 linked.
    expect(value(body, "wirewatch_dedup_duplicate_ratio")).toBeCloseTo(0.2, 5);
    const last = value(body, "wirewatch_dedup_last_decision_timestamp_seconds") as number;
    expect(Date.now() / 1000 - last).toBeGreaterThanOrEqual(300);
    expect(Date.now() / 1000 - last).toBeLessThan(600);
    expect(value(body, "wirewatch_dedup_undecided")).toBe(0);
    expect(value(body, "wirewatch_dedup_undecided_oldest_age_seconds")).toBe(0);
  });

  it("counts an item edited after its decision as undecided, with its wait, until decided again", async () => {
    const key = DEDUP_SEED.keys.unique1;
    await db.prisma.$executeRaw`
      UPDATE news SET version = 2, updated_at = now() - interval '7 minutes' WHERE entry_key = ${key}`;
    // And one never decided at all, changed a moment ago; one older than the hour is not counted.
    await db.prisma.$executeRaw`
      INSERT INTO news (entry_key, source_id, canonical_id, quality, title, version, first_seen_at,
                        first_source, first_collector, last_result, updated_at)
      VALUES (${"f".repeat(64)}, 'wire', 'fresh', 'authoritative', 'Fresh', 1, now(), 'wire', 'A',
              'inserted', now() - interval '1 minute'),
             (${"e".repeat(64)}, 'wire', 'stale', 'authoritative', 'Stale', 1, now(), 'wire', 'A',
              'inserted', now() - interval '2 hours')`;
    const { body } = await scrape({ database: async () => db });
    expect(value(body, "wirewatch_dedup_undecided")).toBe(2);
    const age = value(body, "wirewatch_dedup_undecided_oldest_age_seconds") as number;
    expect(age).toBeGreaterThanOrEqual(420);
    expect(age).toBeLessThan(600);
    await db.prisma.$executeRaw`UPDATE dedup_items SET version = 2 WHERE entry_key = ${key}`;
    const after = await scrape({ database: async () => db });
    expect(value(after.body, "wirewatch_dedup_undecided")).toBe(1);
    expect(value(after.body, "wirewatch_dedup_undecided_oldest_age_seconds")).toBeLessThan(120);
  });

  it("says 0 for the ratio and the last decision before the stage decided anything", async () => {
    const empty = await createTestDatabase();
    try {
      const { body } = await scrape({ database: async () => empty });
      expect(value(body, "wirewatch_dedup_review_queue_depth")).toBe(0);
      expect(value(body, "wirewatch_dedup_clusters")).toBe(0);
      expect(value(body, "wirewatch_dedup_duplicate_ratio")).toBe(0);
      expect(value(body, "wirewatch_dedup_last_decision_timestamp_seconds")).toBe(0);
    } finally {
      await empty.drop();
    }
  });

  it.skipIf(promtool.skip)(`passes promtool check metrics${promtool.note}`, async () => {
    const { body } = await scrape({ database: async () => db });
    const dedup = body
      .split("\n")
      .filter((l) => l.includes("wirewatch_dedup_"))
      .join("\n");
    const out = execFileSync(promtool.need(), ["check", "metrics"], {
      input: `${dedup}\n`,
      encoding: "utf8",
    });
    console.log(
      `promtool check metrics (dedup families, ${dedup.split("\n").filter((l) => !l.startsWith("#")).length} series): ${out.trim() || "OK"}`,
    );
  });
});

// The dedup alerts against series that should and should not fire them (deploy/alerts.test.yml).
describe("deploy/alerts.yml, the dedup rules", () => {
  it.skipIf(promtool.skip)(`pass promtool test rules${promtool.note}`, () => {
    const out = execFileSync(
      promtool.need(),
      ["test", "rules", path.resolve("deploy/alerts.test.yml")],
      { encoding: "utf8" },
    );
    console.log(`promtool test rules deploy/alerts.test.yml: ${out.trim().split("\n").at(-1)}`);
    expect(out).toMatch(/SUCCESS/);
  });
});

// The Grafana dashboard: every panel's query parses as PromQL (as a recording rule, through
// promtool), and every wirewatch_ metric a query names is one the app exports.
describe("deploy/grafana/wirewatch.json", () => {
  const dashboard = JSON.parse(
    readFileSync(path.resolve("deploy/grafana/wirewatch.json"), "utf8"),
  ) as {
    panels: { title: string; targets?: { expr: string }[] }[];
  };
  const exprs = dashboard.panels.flatMap((p) =>
    (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })),
  );

  it.skipIf(promtool.skip)(`every query parses${promtool.note}`, () => {
    const dir = mkdtempSync(path.join(tmpdir(), "ww-grafana-"));
    try {
      const file = path.join(dir, "panels.yml");
      const rules = exprs.map(
        (e, i) => `      - record: panel_${i}\n        expr: ${JSON.stringify(e.expr)}`,
      );
      writeFileSync(file, `groups:\n  - name: panels\n    rules:\n${rules.join("\n")}\n`);
      const out = execFileSync(promtool.need(), ["check", "rules", file], { encoding: "utf8" });
      expect(out).toMatch(/SUCCESS/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("names only metrics the app exports", async () => {
    const { body } = await scrape({ database: async () => db });
    const exported = new Set(
      body.split("\n").flatMap((l) => (l.startsWith("# TYPE ") ? [l.split(" ")[2] as string] : [])),
    );
    const family = (name: string) => name.replace(/_(bucket|sum|count)$/, "");
    const named = exprs.flatMap((e) =>
      [...e.expr.matchAll(/\bwirewatch_[a-z_]+/g)].map((m) => ({ panel: e.panel, name: m[0] })),
    );
    expect(named.filter((n) => n.panel.startsWith("Dedup")).length).toBeGreaterThan(5);
    const unknown = named.filter((n) => !exported.has(n.name) && !exported.has(family(n.name)));
    expect(unknown).toEqual([]);
  });
});
