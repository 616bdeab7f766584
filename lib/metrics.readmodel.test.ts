import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { emit } from "./events";
import { registerMetrics, scrape } from "./metrics";
import {
  hitRatio,
  readPathProcess,
  resetReadPathProcess,
  TTFB_EDGES,
  ttfbQuantile,
} from "./metrics/readPath";
import { createTestDatabase, type TestDatabase } from "./testing/db";
import { requireTool } from "./testing/requireTool";

// The read path's metrics (issue 16): builds, lag from fetch and requests counted from the
// readmodel:* events; the model's age and version read from read_model_builds at scrape time.
const promtool = requireTool(
  "promtool",
  "promtool check metrics on the read path metrics",
  "apt-get install prometheus; .ci/run installs it",
);
let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
  registerMetrics();
  resetReadPathProcess();
});
afterAll(async () => {
  await db?.drop();
});

const value = (body: string, series: string): number | undefined => {
  const line = body.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

const built = (over: Partial<Parameters<typeof emit<"readmodel:built">>[1]> = {}) =>
  emit("readmodel:built", {
    modelVersion: 1,
    seconds: 0.3,
    stories: 100,
    changed: 3,
    payloads: 40,
    bytes: 120_000,
    lagSeconds: [1.5, 4, 700],
    trigger: "changed",
    ...over,
  });

async function build(version: number, finishedSecondsAgo: number, error: string | null = null) {
  await db.prisma.$executeRaw`
    INSERT INTO read_model_builds (model_version, started_at, finished_at, build_ms, changed,
                                   lag_p50_ms, lag_p99_ms, trigger, error)
    VALUES (${version}, now() - make_interval(secs => ${finishedSecondsAgo + 0.5}),
            now() - make_interval(secs => ${finishedSecondsAgo}), 500, 3, 2000, 9000,
            'changed', ${error})`;
}

describe("read path metrics", () => {
  it("counts builds and observes each changed story's lag from fetch", async () => {
    built();
    built({ modelVersion: 2, seconds: 1.2, lagSeconds: [2, -0.5, Number.NaN] });
    emit("readmodel:failed", { seconds: 0.1, error: "database down" });
    const { body } = await scrape({ database: async () => db });
    expect(value(body, 'wirewatch_read_model_builds_total{outcome="built"}')).toBe(2);
    expect(value(body, 'wirewatch_read_model_builds_total{outcome="failed"}')).toBe(1);
    expect(value(body, "wirewatch_read_model_build_seconds_count")).toBe(2);
    expect(value(body, "wirewatch_read_model_build_seconds_sum")).toBeCloseTo(1.5, 10);
    // 1.5, 4, 700, 2 and a clock-skewed -0.5 as 0; NaN is not an observation.
    expect(value(body, "wirewatch_read_model_lag_seconds_count")).toBe(5);
    expect(value(body, 'wirewatch_read_model_lag_seconds_bucket{le="0.5"}')).toBe(1);
    expect(value(body, 'wirewatch_read_model_lag_seconds_bucket{le="2"}')).toBe(3);
    expect(value(body, 'wirewatch_read_model_lag_seconds_bucket{le="600"}')).toBe(4);
    expect(value(body, 'wirewatch_read_model_lag_seconds_bucket{le="+Inf"}')).toBe(5);
  });

  it("counts requests by route and outcome with their time to first byte, bounded", async () => {
    const request = (route: "list" | "story" | "page", outcome: string, seconds: number) =>
      emit("readmodel:request", { route, outcome: outcome as "hit", seconds });
    for (let i = 0; i < 6; i++) request("list", "hit", 0.0008);
    request("list", "not_modified", 0.0004);
    request("list", "miss", 0.04);
    request("story", "not_found", 0.003);
    request("page", "stale", 1.5);
    request("list", "rate_limited", 0.0002);
    // Not an outcome nor a route of the contract: "other", never the text.
    emit("readmodel:request", { route: "<x>" as "list", outcome: "<script>" as "hit", seconds: 9 });
    const { body } = await scrape({ database: async () => db });
    const c = (labels: string) => value(body, `wirewatch_read_requests_total{${labels}}`);
    expect(c('route="list",outcome="hit"')).toBe(6);
    expect(c('route="list",outcome="not_modified"')).toBe(1);
    expect(c('route="list",outcome="miss"')).toBe(1);
    expect(c('route="story",outcome="not_found"')).toBe(1);
    expect(c('route="page",outcome="stale"')).toBe(1);
    expect(c('route="list",outcome="rate_limited"')).toBe(1);
    expect(c('route="other",outcome="other"')).toBe(1);
    expect(body).not.toContain("<script>");
    const h = (le: string) =>
      value(body, `wirewatch_read_request_seconds_bucket{le="${le}",route="list"}`);
    expect(h("0.001")).toBe(8);
    expect(h("0.05")).toBe(9);
    expect(value(body, 'wirewatch_read_request_seconds_count{route="list"}')).toBe(9);

    // The dashboard's copy: 7 hits (a 304 is one) of 7 + miss + stale + the unknown (an error).
    const p = readPathProcess();
    expect(p.requests).toMatchObject({ hit: 6, not_modified: 1, miss: 1, stale: 1, error: 1 });
    expect(hitRatio(p.requests)).toBeCloseTo(7 / 10, 10);
    expect(p.ttfb.reduce((n, c) => n + c, 0)).toBe(12);
    // 8 of 12 under 1 ms, then 2, 3 ms, 40 ms, 1.5 s, 9 s: the p99 lies past the last edge.
    expect(ttfbQuantile(p.ttfb, 0.5)).toBeLessThanOrEqual(0.001);
    expect(ttfbQuantile(p.ttfb, 0.99)).toBe(TTFB_EDGES.at(-1));
  });

  it("shows the store in use and the fallback from the last readmodel:store", async () => {
    let { body } = await scrape();
    expect(body).not.toMatch(/^wirewatch_read_model_store\{/m);
    emit("readmodel:store", { kind: "redis", fallback: false, error: null });
    ({ body } = await scrape());
    expect(value(body, 'wirewatch_read_model_store{kind="redis"}')).toBe(1);
    expect(value(body, 'wirewatch_read_model_store{kind="memory"}')).toBe(0);
    expect(value(body, "wirewatch_read_model_store_fallback")).toBe(0);
    emit("readmodel:store", {
      kind: "memory",
      fallback: true,
      error: "connect ECONNREFUSED 127.0.0.1:6379\n    at TCPConnectWrap",
    });
    ({ body } = await scrape());
    expect(value(body, 'wirewatch_read_model_store{kind="redis"}')).toBe(0);
    expect(value(body, 'wirewatch_read_model_store{kind="memory"}')).toBe(1);
    expect(value(body, "wirewatch_read_model_store_fallback")).toBe(1);
    expect(readPathProcess().store).toMatchObject({
      kind: "memory",
      fallback: true,
      error: "connect ECONNREFUSED 127.0.0.1:6379",
    });
    emit("readmodel:store", { kind: "redis", fallback: false, error: null });
    ({ body } = await scrape());
    expect(value(body, "wirewatch_read_model_store_fallback")).toBe(0);
    expect(readPathProcess().store).toMatchObject({ kind: "redis", fallback: false });
  });

  it("reads the model's version and age from the newest finished build at scrape time", async () => {
    let { body } = await scrape({ database: async () => db });
    // Before the first build: version 0 and an age of NaN (the stale alert reads the version).
    expect(value(body, "wirewatch_read_model_version")).toBe(0);
    expect(value(body, "wirewatch_read_model_age_seconds")).toBeNaN();
    await build(7, 400);
    await build(8, 90);
    // A failed build and one still running are not the model readers get.
    await build(9, 5, "database down");
    await db.prisma.$executeRaw`
      INSERT INTO read_model_builds (model_version, started_at, trigger)
      VALUES (10, now(), 'changed')`;
    ({ body } = await scrape({ database: async () => db }));
    expect(value(body, "wirewatch_read_model_version")).toBe(8);
    const age = value(body, "wirewatch_read_model_age_seconds") ?? -1;
    expect(age).toBeGreaterThanOrEqual(90);
    expect(age).toBeLessThan(120);
  });

  it.skipIf(promtool.skip)(`passes promtool check metrics${promtool.note}`, async () => {
    const { body } = await scrape({ database: async () => db });
    const families = body
      .split("\n")
      .filter((l) => /wirewatch_read_/.test(l))
      .join("\n");
    const out = execFileSync(promtool.need(), ["check", "metrics"], {
      input: `${families}\n`,
      encoding: "utf8",
    });
    console.log(
      `promtool check metrics (read path families, ${families.split("\n").filter((l) => !l.startsWith("#")).length} series): ${out.trim() || "OK"}`,
    );
  });
});

// The Read path row of the Grafana dashboard names only read path metrics this app exports
// (lib/metrics.dedup.test.ts parses every panel's query with promtool), and the alerts test
// file fires each read path rule (promtool test rules, also run there).
describe("deploy/: the read path's panels and alerts", () => {
  it("has a Read path row whose panels read the read path metrics, each exported", async () => {
    const dashboard = JSON.parse(
      readFileSync(path.resolve("deploy/grafana/wirewatch.json"), "utf8"),
    ) as { panels: { title: string; targets?: { expr: string }[] }[] };
    const panels = dashboard.panels.filter((p) => p.title.startsWith("Read path:"));
    expect(panels.map((p) => p.title)).toEqual(
      expect.arrayContaining([
        "Read path: lag fetch → read model p50 / p99",
        "Read path: cache hit ratio",
        "Read path: time to first byte p50 / p99 by route",
        "Read path: model age",
        "Read path: build duration p50 / p99",
      ]),
    );
    const { body } = await scrape({ database: async () => db });
    const exported = new Set(
      body.split("\n").flatMap((l) => (l.startsWith("# TYPE ") ? [l.split(" ")[2] as string] : [])),
    );
    const named = panels.flatMap((p) =>
      (p.targets ?? []).flatMap((t) =>
        [...t.expr.matchAll(/\bwirewatch_[a-z_]+/g)].map((m) => m[0]),
      ),
    );
    expect(named.length).toBeGreaterThanOrEqual(8);
    const family = (name: string) => name.replace(/_(bucket|sum|count)$/, "");
    expect(named.filter((n) => !exported.has(n) && !exported.has(family(n)))).toEqual([]);
  });

  it.skipIf(promtool.skip)(
    `fires each read path alert in promtool test rules${promtool.note}`,
    () => {
      const file = readFileSync(path.resolve("deploy/alerts.test.yml"), "utf8");
      for (const rule of [
        "WirewatchReadModelStale",
        "WirewatchReadPathSlow",
        "WirewatchReadCacheHitRatioLow",
        "WirewatchReadModelLagHigh",
        "WirewatchReadModelStoreFallback",
      ]) {
        expect(file).toContain(`alertname: ${rule}`);
      }
      const out = execFileSync(
        promtool.need(),
        ["test", "rules", path.resolve("deploy/alerts.test.yml")],
        { encoding: "utf8" },
      );
      expect(out).toMatch(/SUCCESS/);
    },
  );
});
