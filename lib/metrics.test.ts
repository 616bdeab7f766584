import { execFileSync } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type EventMap, emit } from "./events";
import { LabelGuard, LIMITS, metricsAuthorized, registerMetrics, scrape } from "./metrics";
import { createTestDatabase, type TestDatabase } from "./testing/db";
import { seedMetricsRows } from "./testing/metricsSeed";
import { requireTool } from "./testing/requireTool";
import { seedStoryRows } from "./testing/storiesSeed";

const TOKEN = "metrics-token-for-tests-0123456789";
// promtool checks the exposition, the alert rules and the scrape config; CI installs it.
const promtool = requireTool(
  "promtool",
  "the promtool checks (metrics exposition, deploy/alerts.yml, deploy/prometheus.yml)",
  "apt-get install prometheus; .ci/run installs it",
);
let db: TestDatabase;

vi.mock("@/lib/db", async (real) => ({
  ...(await real<typeof import("./db")>()),
  getDb: () => Promise.resolve(db),
}));
vi.mock("@/lib/config", async (real) => {
  const actual = await real<typeof import("./config")>();
  return { ...actual, config: () => ({ ...actual.config(), METRICS_TOKEN: TOKEN }) };
});

/** Series lines (name{labels} value) of an exposition text. */
function series(text: string): string[] {
  return text.split("\n").filter((l) => l !== "" && !l.startsWith("#"));
}

function labelValues(text: string): string[] {
  return series(text).flatMap((l) =>
    [...l.matchAll(/="((?:[^"\\]|\\.)*)"/g)].map((m) => m[1] ?? ""),
  );
}

describe("LabelGuard", () => {
  it("keeps enumerated labels to their enumeration and identifiers free of URLs", () => {
    const g = new LabelGuard(["source"], { code: ["ok", "timeout"] });
    expect(g.labels({ source: "wire", code: "ok" })).toEqual({ source: "wire", code: "ok" });
    expect(g.labels({ source: "https://evil.example/x", code: "teapot" })).toEqual({
      source: "invalid",
      code: "other",
    });
    expect(g.labels({ source: "a b", code: 3 }).source).toBe("invalid");
  });

  it("caps distinct values per label and label sets per metric, folding the rest into other", () => {
    const g = new LabelGuard(["source"], { result: ["a", "b"] }, 3, 5);
    const got = ["s1", "s2", "s3", "s4"].map((s) => g.labels({ source: s, result: "a" }).source);
    expect(got).toEqual(["s1", "s2", "s3", "other"]);
    expect(g.labels({ source: "s1", result: "b" }).source).toBe("s1"); // 5th set: the last
    expect(g.labels({ source: "s2", result: "b" }).source).toBe("other");
  });
});

describe("metricsAuthorized", () => {
  it("needs the bearer token when one is set", () => {
    expect(metricsAuthorized(null, "")).toBe(true);
    expect(metricsAuthorized(null, TOKEN)).toBe(false);
    expect(metricsAuthorized(`Bearer ${TOKEN}`, TOKEN)).toBe(true);
    expect(metricsAuthorized(`Bearer ${TOKEN}x`, TOKEN)).toBe(false);
    expect(metricsAuthorized(`Basic ${TOKEN}`, TOKEN)).toBe(false);
    expect(metricsAuthorized("Bearer ", TOKEN)).toBe(false);
  });
});

describe("metrics from events and the database", () => {
  beforeAll(async () => {
    db = await createTestDatabase();
    await seedMetricsRows(db, [10, 40, 200, 900, 3_000]);
    await seedStoryRows(db);
    registerMetrics();
  });
  afterAll(async () => {
    await db.drop();
  });

  it("counts events and computes the database gauges at scrape time", async () => {
    emit("observation:written", {
      source: "wire",
      collector: "A",
      origin: "primary",
      result: "inserted",
    });
    emit("fetch:finished", {
      source: "meridian",
      collector: "A",
      code: "not_modified",
      status: 304,
      bytes: 0,
      durationSeconds: 0.12,
    });
    emit("buffer:waited", { stage: "store" });
    emit("job:claimed", { queue: "fetch", workerId: "w1", count: 3, reclaimed: 2, waitsMs: [] });
    emit("job:completed", { queue: "fetch", durationMs: 12, rescheduled: false });
    emit("job:failed", {
      queue: "fetch",
      attempt: 1,
      retryInSeconds: 5,
      error: "boom",
      durationMs: 40,
    });
    emit("job:expired", {
      queue: "fetch",
      count: 2,
      parked: 1,
      leaseAgesMs: [31_000, 32_000],
      workerId: "w2",
    });
    emit("breaker:opened", {
      source: "meridian",
      code: "http_5xx",
      failures: 5,
      openForSeconds: 60,
      reopened: false,
    });
    emit("stream:connected", { source: "wire", collector: "A" });
    emit("stream:events", { source: "wire", collector: "A", count: 7 });
    emit("stream:disconnected", {
      source: "wire",
      collector: "A",
      code: "reset",
      connectedSeconds: 9,
    });
    const { body } = await scrape({ database: async () => db });
    expect(body).toMatch(
      /wirewatch_observations_total\{source="wire",collector="A",origin="primary",result="inserted"\} 1/,
    );
    expect(body).toMatch(
      /wirewatch_fetch_requests_total\{source="meridian",code="not_modified"\} 1/,
    );
    expect(body).toMatch(/wirewatch_backpressure_waits_total\{stage="store"\} 1/);
    expect(body).toMatch(/wirewatch_leases_reclaimed_total\{stage="fetch"\} 2/);
    expect(body).toMatch(/wirewatch_queue_jobs_total\{stage="fetch",outcome="completed"\} 1/);
    expect(body).toMatch(/wirewatch_queue_jobs_total\{stage="fetch",outcome="failed"\} 1/);
    expect(body).toMatch(/wirewatch_queue_jobs_total\{stage="fetch",outcome="expired"\} 2/);
    expect(body).toMatch(/wirewatch_queue_jobs_total\{stage="fetch",outcome="dead"\} 1/);
    expect(body).toMatch(/wirewatch_breaker_transitions_total\{to="open"\} 1/);
    expect(body).toMatch(/wirewatch_stream_connections_total\{source="wire",collector="A"\} 1/);
    expect(body).toMatch(/wirewatch_stream_events_total\{source="wire",collector="A"\} 7/);
    expect(body).toMatch(
      /wirewatch_stream_disconnects_total\{source="wire",collector="A",code="reset"\} 1/,
    );
    expect(body).toMatch(/wirewatch_dlq_depth\{stage="fetch"\} 1/);
    expect(body).toMatch(/wirewatch_dlq_oldest_age_seconds\{stage="fetch"\} 7[12]\d\d/);
    expect(body).toMatch(/wirewatch_breaker_state\{source="meridian"\} 2/);
    expect(body).toMatch(/wirewatch_breaker_open 1/);
    expect(body).toMatch(/wirewatch_local_outage 1/);
    expect(body).toMatch(/wirewatch_source_health\{source="meridian",state="failing"\} 1/);
    expect(body).toMatch(/wirewatch_admin_actions_total\{action="dlq.requeue"\} 1/);
    expect(body).toMatch(
      /wirewatch_collector_last_activity_timestamp_seconds\{source="wire",collector="A"\} \d+/,
    );
    expect(body).toMatch(/wirewatch_queue_lag_seconds_count\{stage="fetch"\} 5/);
    expect(body).toMatch(/wirewatch_queue_lag_seconds_bucket\{le="0.05",stage="fetch"\} 2/);
    expect(body).toMatch(/wirewatch_queue_lag_seconds_bucket\{le="1",stage="fetch"\} 4/);
    expect(
      Number(body.match(/wirewatch_queue_lag_seconds_sum\{stage="fetch"\} (\S+)/)?.[1]),
    ).toBeCloseTo(4.15);
    expect(body).toMatch(/wirewatch_metrics_database_up 1/);
    expect(body).toMatch(/process_cpu_seconds_total/);
    // The lag fold moves on: a second scrape does not count the same claims again.
    expect((await scrape({ database: async () => db })).body).toMatch(
      /wirewatch_queue_lag_seconds_count\{stage="fetch"\} 5/,
    );
  });

  it("counts story webhooks and notifications, and reads the story-API copy at scrape time", async () => {
    const webhook = (e: Partial<EventMap["story:webhook"]>) =>
      emit("story:webhook", {
        source: "newsfilter",
        outcome: "accepted",
        reason: "",
        lagSeconds: null,
        ...e,
      });
    webhook({ lagSeconds: 0.4 });
    webhook({ lagSeconds: 42 });
    webhook({ outcome: "duplicate", reason: "replayed_id" });
    webhook({ outcome: "rejected", reason: "bad_signature" });
    webhook({ source: "", outcome: "rejected", reason: "unknown_source" });
    webhook({ outcome: "rejected", reason: "https://evil.example/<b>" });
    emit("story:notification", { source: "newsfilter", outcome: "sent" });
    emit("story:notification", { source: "newsfilter", outcome: "already_claimed" });
    const { body } = await scrape({ database: async () => db });
    expect(body).toMatch(
      /wirewatch_story_webhooks_total\{source="newsfilter",outcome="accepted",reason="none"\} 2/,
    );
    expect(body).toMatch(
      /wirewatch_story_webhooks_total\{source="newsfilter",outcome="duplicate",reason="replayed_id"\} 1/,
    );
    expect(body).toMatch(
      /wirewatch_story_webhooks_total\{source="unknown",outcome="rejected",reason="unknown_source"\} 1/,
    );
    expect(body).toMatch(
      /wirewatch_story_webhooks_total\{source="newsfilter",outcome="rejected",reason="other"\} 1/,
    );
    expect(body).toMatch(/wirewatch_story_webhook_lag_seconds_count\{source="newsfilter"\} 2/);
    expect(body).toMatch(
      /wirewatch_story_webhook_lag_seconds_bucket\{le="0.5",source="newsfilter"\} 1/,
    );
    expect(body).toMatch(
      /wirewatch_story_webhook_lag_seconds_bucket\{le="60",source="newsfilter"\} 2/,
    );
    expect(body).toMatch(
      /wirewatch_story_notifications_total\{source="newsfilter",outcome="already_claimed"\} 1/,
    );
    // From the database (lib/testing/storiesSeed.ts: caught up 42 s ago, 4 open and 3 closed).
    const age = Number(
      body.match(/wirewatch_story_cursor_age_seconds\{source="newsfilter"\} (\S+)/)?.[1],
    );
    expect(age).toBeGreaterThanOrEqual(42);
    expect(age).toBeLessThan(120);
    expect(body).toMatch(/wirewatch_stories\{source="newsfilter",state="open"\} 4/);
    expect(body).toMatch(/wirewatch_stories\{source="newsfilter",state="closed"\} 3/);
    expect(body).toMatch(/wirewatch_story_missed_webhooks_total\{source="newsfilter"\} 2/);
    expect(body).toMatch(/wirewatch_story_unlisted_events_total\{source="newsfilter"\} 1/);
    expect(body).toMatch(/wirewatch_story_reloads_total\{source="newsfilter"\} 1/);
    expect(body).toMatch(
      /wirewatch_story_webhooks_rejected_total\{source="newsfilter",reason="bad_signature"\} 3/,
    );
    expect(body).toMatch(
      /wirewatch_story_webhooks_rejected_total\{source="unknown",reason="unknown_source"\} 2/,
    );
    expect(body).not.toContain("whsec_");
  });

  it("a story-api source that never caught up ages from when it was added; a disabled one has no age", async () => {
    await db.prisma.source.createMany({
      data: [
        {
          id: "fresh",
          name: "Fresh",
          kind: "story-api",
          createdAt: new Date(Date.now() - 600_000),
        },
        { id: "off", name: "Off", kind: "story-api", enabled: false },
      ],
    });
    try {
      const { body } = await scrape({ database: async () => db });
      const age = Number(
        body.match(/wirewatch_story_cursor_age_seconds\{source="fresh"\} (\S+)/)?.[1],
      );
      expect(age).toBeGreaterThanOrEqual(600);
      expect(body).not.toMatch(/wirewatch_story_cursor_age_seconds\{source="off"\}/);
      expect(body).toMatch(/wirewatch_stories\{source="off",state="open"\} 0/);
    } finally {
      await db.prisma.source.deleteMany({ where: { id: { in: ["fresh", "off"] } } });
    }
  });

  it("counts queue workers by state, a worker not heard from for 30 s as lost", async () => {
    await db.prisma.$executeRaw`
      INSERT INTO queue_workers (id, host, pid, queues, state, in_flight, seen_at)
      VALUES ('m-gone', 'h', 2, '{fetch}', 'running', 1, now() - interval '10 minutes'),
             ('m-alive', 'h', 3, '{fetch}', 'running', 0, now()),
             ('m-done', 'h', 4, '{fetch}', 'stopped', 0, now() - interval '1 hour')`;
    try {
      const { body } = await scrape({ database: async () => db });
      const value = (state: string) =>
        Number(body.match(new RegExp(`wirewatch_queue_workers\\{state="${state}"\\} (\\d+)`))?.[1]);
      const before = { lost: value("lost"), running: value("running") };
      expect(before.lost).toBeGreaterThanOrEqual(1);
      expect(value("draining")).toBeGreaterThanOrEqual(0);
      expect(value("stopped")).toBeGreaterThanOrEqual(1);
      await db.prisma.$executeRaw`UPDATE queue_workers SET seen_at = now() WHERE id = 'm-gone'`;
      const after = await scrape({ database: async () => db });
      const again = (state: string) =>
        Number(
          after.body.match(new RegExp(`wirewatch_queue_workers\\{state="${state}"\\} (\\d+)`))?.[1],
        );
      expect(again("lost")).toBe(before.lost - 1);
      expect(again("running")).toBe(before.running + 1);
    } finally {
      await db.prisma.$executeRaw`DELETE FROM queue_workers WHERE id LIKE 'm-%'`;
    }
  });

  it("the route answers 401 without the token, the registry's content type with it", async () => {
    // WebSub's per-source series, so promtool (the next test) checks them too.
    emit("websub:push", { source: "meridian", outcome: "bad_signature", storeSeconds: null });
    await db.prisma.websubSubscription.create({
      data: { sourceId: "meridian", state: "active", token: "t-meridian", rejectedPushes: 1n },
    });
    const { GET } = await import("@/app/api/metrics/route");
    const denied = await GET(new Request("http://localhost/api/metrics"));
    expect(denied.status).toBe(401);
    expect((await denied.json()).error.code).toBe("unauthorized");
    const res = await GET(
      new Request("http://localhost/api/metrics", {
        headers: { authorization: `Bearer ${TOKEN}` },
      }),
    );
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe(registerMetrics().own.contentType);
    const text = await res.text();
    expect(text).toMatch(/wirewatch_dlq_depth\{stage="fetch"\} 1/);
    // The story and WebSub families are in what promtool checks (the next test).
    for (const family of [
      "wirewatch_story_webhooks_total",
      "wirewatch_story_webhook_lag_seconds_bucket",
      "wirewatch_story_notifications_total",
      "wirewatch_story_cursor_age_seconds",
      "wirewatch_story_missed_webhooks_total",
      "wirewatch_story_unlisted_events_total",
      "wirewatch_story_reloads_total",
      "wirewatch_stories",
      "wirewatch_story_webhooks_rejected_total",
      "wirewatch_websub_pushes_total",
      "wirewatch_websub_push_store_seconds_bucket",
      "wirewatch_websub_verifications_total",
      "wirewatch_websub_lease_renewals_total",
      "wirewatch_websub_subscriptions",
      "wirewatch_websub_rejected_pushes_total",
    ]) {
      expect(text).toContain(`\n${family}{`);
    }
    expect(text).toMatch(/\nwirewatch_websub_renewals_due 0\n/);
  });

  it.skipIf(promtool.skip)(
    `the route's output passes promtool check metrics${promtool.note}`,
    async () => {
      const bin = promtool.need();
      const { GET } = await import("@/app/api/metrics/route");
      const res = await GET(
        new Request("http://localhost/api/metrics", {
          headers: { authorization: `Bearer ${TOKEN}` },
        }),
      );
      const text = await res.text();
      // promtool exits non-zero on format errors and on lint problems (missing help, bad names).
      const out = execFileSync(bin, ["check", "metrics"], { input: text, encoding: "utf8" });
      console.log(
        `promtool check metrics (route output, ${series(text).length} series): ${out.trim() || "OK"}`,
      );
    },
  );

  it("stays bounded after 10,000 distinct sources with URLs in their rows", async () => {
    await db.prisma.$executeRaw`
      INSERT INTO sources (id, name, kind, url)
      SELECT 'src-' || i, 'Source ' || i, 'feed', 'https://host' || i || '.example.com/feed.xml'
      FROM generate_series(1, 10000) AS i`;
    await db.prisma.$executeRaw`
      INSERT INTO collector_status (source_id, collector, last_activity_at, last_content_at)
      SELECT 'src-' || i, 'A', now(), now() FROM generate_series(1, 10000) AS i`;
    await db.prisma.$executeRaw`
      INSERT INTO source_state (source_id, breaker_state)
      SELECT 'src-' || i, CASE WHEN i % 7 = 0 THEN 'open' ELSE 'closed' END
      FROM generate_series(1, 10000) AS i`;
    for (let i = 1; i <= 10_000; i++) {
      const source = i % 10 === 0 ? `https://host${i}.example.com/feed.xml` : `src-${i}`;
      emit("observation:written", {
        source,
        collector: i % 2 ? "A" : "B",
        origin: "poll",
        result: "inserted",
      });
      emit("fetch:finished", {
        source,
        collector: "A",
        code: i % 3 ? "ok" : `weird ${i}`,
        status: 200,
        bytes: 100,
        durationSeconds: 0.2,
      });
      emit("story:webhook", {
        source,
        outcome: i % 5 ? "accepted" : "rejected",
        reason: i % 3 ? "" : `weird ${i}`,
        lagSeconds: null,
      });
    }
    const { body } = await scrape({ database: async () => db });
    const values = labelValues(body);
    expect(values.filter((v) => v.includes("://"))).toEqual([]);
    const ours = series(body).filter((l) => l.startsWith("wirewatch_"));
    const byMetric = new Map<string, number>();
    for (const l of ours) {
      const name = (l.match(/^[a-z_]+/)?.[0] ?? "").replace(/_(bucket|sum|count)$/, "");
      byMetric.set(name, (byMetric.get(name) ?? 0) + 1);
    }
    // The stated bound: LIMITS.series label sets per metric plus the folded ones (see lib/metrics/labels.ts).
    const folded = 4 * 6 + 1; // at most origins × results (+ "unknown" origin) for observations
    // Histograms count 13+ lines a label set; source health has 7 states a source.
    const histogramLines = 13;
    const own: Record<string, number> = {
      // The first 100 sources, then "other" (lib/metrics/definitions.ts FETCH_DURATION_SOURCES).
      wirewatch_fetch_duration_seconds: (100 + 1) * histogramLines,
      wirewatch_source_health: LIMITS.sources * 7,
    };
    for (const [name, n] of byMetric) {
      if (name === "wirewatch_queue_lag_seconds") continue;
      expect(n, name).toBeLessThanOrEqual(own[name] ?? LIMITS.series + folded);
    }
    const bound =
      byMetric.size * (LIMITS.series + folded) + 2 * 20 + LIMITS.sources * 7 + 101 * histogramLines;
    console.log(
      `cardinality after 10,000 sources: ${ours.length} wirewatch_ series (bound ${bound}); ` +
        [...byMetric].map(([k, v]) => `${k}=${v}`).join(", "),
    );
    expect(ours.length).toBeLessThanOrEqual(bound);
    expect(body).toMatch(/wirewatch_observations_total\{source="other"/);
    expect(body).toMatch(/wirewatch_breaker_open 1429/); // counted in SQL, not capped
  });
});

// promtool check rules on the alert rules shipped in deploy/.
describe("deploy/alerts.yml", () => {
  it.skipIf(promtool.skip)(`passes promtool check rules${promtool.note}`, () => {
    const out = execFileSync(
      promtool.need(),
      ["check", "rules", path.resolve("deploy/alerts.yml")],
      {
        encoding: "utf8",
      },
    );
    console.log(`promtool check rules deploy/alerts.yml: ${out.trim()}`);
    expect(out).toMatch(/SUCCESS/);
  });

  it.skipIf(promtool.skip)(
    `prometheus.yml passes promtool check config (syntax: the token file lives on the server)${promtool.note}`,
    () => {
      const out = execFileSync(
        promtool.need(),
        ["check", "config", "--syntax-only", path.resolve("deploy/prometheus.yml")],
        { encoding: "utf8" },
      );
      expect(out).toMatch(/SUCCESS/);
    },
  );
});
