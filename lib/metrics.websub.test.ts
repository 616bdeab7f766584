import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WEBSUB_STATES } from "./codes";
import { emit } from "./events";
import { registerMetrics, scrape } from "./metrics";
import { createTestDatabase, type TestDatabase } from "./testing/db";
import { requireTool } from "./testing/requireTool";

// WebSub's metrics: pushes, verifications and renewals counted from the websub:* events, the
// time from a push's arrival to its entries written, and the subscriptions by state and the
// renewals past due read from websub_subscriptions at scrape time; the alerts that read them.
const promtool = requireTool(
  "promtool",
  "promtool check metrics / test rules on the WebSub metrics",
  "apt-get install prometheus; .ci/run installs it",
);
let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
  registerMetrics();
});
afterAll(async () => {
  await db?.drop();
});

const value = (body: string, series: string): number | undefined => {
  const line = body.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

const FAMILIES = [
  "wirewatch_websub_pushes_total",
  "wirewatch_websub_push_store_seconds",
  "wirewatch_websub_verifications_total",
  "wirewatch_websub_lease_renewals_total",
  "wirewatch_websub_subscriptions",
  "wirewatch_websub_renewals_due",
  "wirewatch_websub_rejected_pushes_total",
];

describe("WebSub metrics", () => {
  it("show verifications, renewals and the push time at 0 before anything happened", async () => {
    const { body } = await scrape();
    for (const mode of ["subscribe", "unsubscribe"]) {
      for (const outcome of ["verified", "denied", "failed", "refused"]) {
        const series = `wirewatch_websub_verifications_total{mode="${mode}",outcome="${outcome}"}`;
        expect(value(body, series), series).toBe(0);
      }
    }
    for (const outcome of ["renewed", "refused", "unreachable", "unverified"]) {
      expect(value(body, `wirewatch_websub_lease_renewals_total{outcome="${outcome}"}`)).toBe(0);
    }
    expect(value(body, "wirewatch_websub_push_store_seconds_count")).toBe(0);
  });

  it("count pushes by source and outcome, and time the accepted ones", async () => {
    emit("websub:push", { source: "harbour", outcome: "accepted", storeSeconds: 0.04 });
    emit("websub:push", { source: "harbour", outcome: "accepted", storeSeconds: 0.3 });
    emit("websub:push", { source: "harbour", outcome: "bad_signature", storeSeconds: null });
    emit("websub:push", { source: "unknown", outcome: "unknown_callback", storeSeconds: null });
    // Nothing from a request can widen the label sets: a URL for a source, a made-up outcome.
    emit("websub:push", {
      source: "https://evil.example/x",
      outcome: "teapot" as "accepted",
      storeSeconds: -1,
    });
    const { body } = await scrape();
    const pushes = (source: string, outcome: string) =>
      value(body, `wirewatch_websub_pushes_total{source="${source}",outcome="${outcome}"}`);
    expect(pushes("harbour", "accepted")).toBe(2);
    expect(pushes("harbour", "bad_signature")).toBe(1);
    expect(pushes("unknown", "unknown_callback")).toBe(1);
    expect(pushes("invalid", "other")).toBe(1);
    expect(value(body, "wirewatch_websub_push_store_seconds_count")).toBe(2);
    expect(value(body, 'wirewatch_websub_push_store_seconds_bucket{le="0.05"}')).toBe(1);
    expect(value(body, 'wirewatch_websub_push_store_seconds_bucket{le="0.5"}')).toBe(2);
  });

  it("count verifications by mode and outcome and renewals by outcome", async () => {
    emit("websub:verification", { source: "harbour", mode: "subscribe", outcome: "verified" });
    emit("websub:verification", { source: "harbour", mode: "subscribe", outcome: "denied" });
    emit("websub:verification", { source: "unknown", mode: "other", outcome: "refused" });
    emit("websub:renewal", { source: "harbour", outcome: "refused" });
    emit("websub:renewal", { source: "harbour", outcome: "refused" });
    emit("websub:renewal", { source: "harbour", outcome: "renewed" });
    const { body } = await scrape();
    const verifications = (mode: string, outcome: string) =>
      value(body, `wirewatch_websub_verifications_total{mode="${mode}",outcome="${outcome}"}`);
    expect(verifications("subscribe", "verified")).toBe(1);
    expect(verifications("subscribe", "denied")).toBe(1);
    expect(verifications("other", "refused")).toBe(1);
    expect(value(body, 'wirewatch_websub_lease_renewals_total{outcome="refused"}')).toBe(2);
    expect(value(body, 'wirewatch_websub_lease_renewals_total{outcome="renewed"}')).toBe(1);
  });

  it("read subscriptions by state and the renewals past due from the table at scrape time", async () => {
    const row = (
      sourceId: string,
      state: string,
      renewInSeconds: number | null,
      rejectedPushes = 0n,
    ) => ({
      sourceId,
      state,
      renewAt: renewInSeconds === null ? null : new Date(Date.now() + renewInSeconds * 1000),
      // A feed that never had a hub never had a callback either.
      token: state === "no_hub" ? null : `token-${sourceId}`,
      rejectedPushes,
    });
    await db.prisma.websubSubscription.createMany({
      data: [
        row("a", "active", 3_600, 3n),
        row("b", "active", -7_200),
        row("c", "active", -60),
        row("d", "no_hub", null),
        row("e", "denied", null),
        row("f", "failed", -7_200, 1n),
      ],
    });
    const { body } = await scrape({ database: async () => db });
    const states = Object.fromEntries(
      WEBSUB_STATES.map((state) => [
        state,
        value(body, `wirewatch_websub_subscriptions{state="${state}"}`),
      ]),
    );
    expect(states).toEqual({
      no_hub: 1,
      pending: 0,
      active: 3,
      denied: 1,
      failed: 1,
      unsubscribing: 0,
      unsubscribed: 0,
    });
    // Only active subscriptions renew: the failed one's old renew_at is not due.
    expect(value(body, "wirewatch_websub_renewals_due")).toBe(2);
    // Refused pushes from the rows, 0 included (a first refusal is an increase), no_hub left out.
    const rejected = body
      .split("\n")
      .filter((l) => l.startsWith("wirewatch_websub_rejected_pushes_total{"));
    expect(rejected.sort()).toEqual([
      'wirewatch_websub_rejected_pushes_total{source="a"} 3',
      'wirewatch_websub_rejected_pushes_total{source="b"} 0',
      'wirewatch_websub_rejected_pushes_total{source="c"} 0',
      'wirewatch_websub_rejected_pushes_total{source="e"} 0',
      'wirewatch_websub_rejected_pushes_total{source="f"} 1',
    ]);
  });

  it.skipIf(promtool.skip)(`pass promtool check metrics${promtool.note}`, async () => {
    const { body } = await scrape({ database: async () => db });
    const belongs = (l: string) =>
      FAMILIES.some((f) => new RegExp(`^(# (HELP|TYPE) )?${f}(_bucket|_sum|_count)?[{ ]`).test(l));
    const picked = body.split("\n").filter(belongs).join("\n");
    for (const f of FAMILIES) expect(picked).toContain(`# TYPE ${f} `);
    const out = execFileSync(promtool.need(), ["check", "metrics"], {
      input: `${picked}\n`,
      encoding: "utf8",
    });
    console.log(
      `promtool check metrics (WebSub: ${picked.split("\n").filter((l) => !l.startsWith("#")).length} series): ${out.trim() || "OK"}`,
    );
  });
});

describe("WebSub alerts and panels", () => {
  it.skipIf(promtool.skip)(
    `have a promtool test rules case for each alert, and they pass${promtool.note}`,
    () => {
      const tests = readFileSync(path.resolve("deploy/alerts.test.yml"), "utf8");
      for (const rule of [
        "WirewatchWebSubPushesRefused",
        "WirewatchWebSubRenewalsFailing",
        "WirewatchWebSubSubscriptionsFailing",
      ]) {
        expect(tests).toContain(`alertname: ${rule}`);
      }
      const out = execFileSync(
        promtool.need(),
        ["test", "rules", path.resolve("deploy/alerts.test.yml")],
        { encoding: "utf8" },
      );
      console.log(`promtool test rules deploy/alerts.test.yml: ${out.trim().split("\n").at(-1)}`);
      expect(out).toMatch(/SUCCESS/);
    },
  );

  it("has panels for subscriptions, pushes, push time, verifications and renewals, each exported", async () => {
    const dashboard = JSON.parse(
      readFileSync(path.resolve("deploy/grafana/wirewatch.json"), "utf8"),
    ) as { panels: { title: string; targets?: { expr: string }[] }[] };
    const wanted: Record<string, string[]> = {
      "WebSub subscriptions by state": ["wirewatch_websub_subscriptions"],
      "WebSub pushes per minute by outcome": ["wirewatch_websub_pushes_total"],
      "WebSub push to store p50 / p99": ["wirewatch_websub_push_store_seconds_bucket"],
      "WebSub verifications and renewals per hour": [
        "wirewatch_websub_verifications_total",
        "wirewatch_websub_lease_renewals_total",
        "wirewatch_websub_renewals_due",
      ],
    };
    const { body } = await scrape({ database: async () => db });
    for (const [title, metrics] of Object.entries(wanted)) {
      const panel = dashboard.panels.find((p) => p.title === title);
      expect(panel, title).toBeDefined();
      const exprs = (panel?.targets ?? []).map((t) => t.expr).join("\n");
      for (const metric of metrics) {
        expect(exprs, title).toContain(metric);
        expect(body).toMatch(new RegExp(`\\n${metric}[{ ]`));
      }
    }
  });
});
