import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { metricsAuthorized, registerMetrics, scrape } from "./metrics";
import { createTestDatabase, type TestDatabase } from "./testing/db";
import { seedMetricsRows } from "./testing/metricsSeed";
import { requireTool } from "./testing/requireTool";
import { STORY_SEED, seedStoryRows } from "./testing/storiesSeed";

// A real Prometheus (Debian's package, as CI installs it) scraping our exposition over loopback,
// with its own config and data directory, queried through its HTTP API.
const TOKEN = "prometheus-integration-token-0123";
// Missing outside CI: skipped loudly; missing in CI (which installs it): a failure.
const prometheusTool = requireTool(
  "prometheus",
  "the Prometheus integration test",
  "apt-get install prometheus; .ci/run installs it",
);

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  const { port } = s.address() as AddressInfo;
  await new Promise((resolve) => s.close(resolve));
  return port;
}

describe.skipIf(prometheusTool.skip)(
  `Prometheus scraping the metrics endpoint${prometheusTool.note}`,
  () => {
    let db: TestDatabase;
    let server: Server;
    let prometheus: ChildProcess;
    let promUrl = "";
    let dir = "";
    let logs = "";

    beforeAll(async () => {
      db = await createTestDatabase();
      await seedMetricsRows(db, [10, 40, 200, 900, 3_000]);
      await seedStoryRows(db);
      registerMetrics();
      server = createServer((req, res) => {
        if (!metricsAuthorized(req.headers.authorization ?? null, TOKEN)) {
          res.writeHead(401).end();
          return;
        }
        scrape({ database: async () => db }).then(
          ({ contentType, body }) => res.writeHead(200, { "content-type": contentType }).end(body),
          (err) => res.writeHead(500).end(String(err)),
        );
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      const target = `127.0.0.1:${(server.address() as AddressInfo).port}`;

      dir = mkdtempSync(path.join(tmpdir(), "ww-prometheus-"));
      writeFileSync(
        path.join(dir, "prometheus.yml"),
        [
          "global: { scrape_interval: 1s, evaluation_interval: 1s }",
          "scrape_configs:",
          "  - job_name: wirewatch-web",
          "    metrics_path: /metrics",
          `    authorization: { type: Bearer, credentials: ${TOKEN} }`,
          `    static_configs: [{ targets: ["${target}"] }]`,
          "",
        ].join("\n"),
      );
      const port = await freePort();
      promUrl = `http://127.0.0.1:${port}`;
      prometheus = spawn(
        prometheusTool.need(),
        [
          `--config.file=${path.join(dir, "prometheus.yml")}`,
          `--storage.tsdb.path=${path.join(dir, "data")}`,
          `--web.listen-address=127.0.0.1:${port}`,
          "--log.level=warn",
        ],
        { stdio: ["ignore", "pipe", "pipe"] },
      );
      prometheus.stdout?.on("data", (d) => {
        logs += d;
      });
      prometheus.stderr?.on("data", (d) => {
        logs += d;
      });
    });

    afterAll(async () => {
      if (prometheus && prometheus.exitCode === null) {
        const exited = new Promise((resolve) => prometheus.once("exit", resolve));
        prometheus.kill("SIGTERM");
        await exited;
      }
      await new Promise((resolve) => server?.close(resolve));
      await db?.drop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    /** Polls an instant query until it has a result (scrapes every second), for up to 40 s. */
    async function query(
      expr: string,
    ): Promise<{ metric: Record<string, string>; value: [number, string] }[]> {
      const deadline = Date.now() + 40_000;
      for (;;) {
        try {
          const res = await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(expr)}`);
          const body = (await res.json()) as { status: string; data?: { result: [] } };
          const result = body.data?.result ?? [];
          if (body.status === "success" && result.length > 0) return result;
        } catch {
          // Prometheus is still starting.
        }
        if (Date.now() > deadline)
          throw new Error(`no result for ${expr}; prometheus said:\n${logs}`);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }

    it("reads the dead-letter depth and the queue lag p99 through Prometheus's API", async () => {
      const up = await query('up{job="wirewatch-web"} == 1');
      expect(up).toHaveLength(1);
      const dlq = await query("wirewatch_dlq_depth");
      expect(dlq.map((r) => [r.metric.stage, r.value[1]])).toEqual([["fetch", "1"]]);
      const p99 = await query(
        "histogram_quantile(0.99, sum by (stage, le) (wirewatch_queue_lag_seconds_bucket))",
      );
      const value = Number(p99[0]?.value[1]);
      console.log(`Prometheus: wirewatch_dlq_depth{stage="fetch"} = 1; queue lag p99 = ${value} s`);
      // Waits of 0.01, 0.04, 0.2, 0.9 and 3 s: the 99th percentile lies in the (2.5, 5] bucket.
      expect(value).toBeGreaterThan(2.5);
      expect(value).toBeLessThanOrEqual(5);
    });

    it("reads the story-API copy: stories by state, refused deliveries, the cursor's age", async () => {
      const stories = await query("sum by (state) (wirewatch_stories)");
      expect(Object.fromEntries(stories.map((r) => [r.metric.state, r.value[1]]))).toEqual({
        open: "4",
        closed: "3",
      });
      const refused = await query(
        'wirewatch_story_webhooks_rejected_total{reason="bad_signature"}',
      );
      expect(refused.map((r) => [r.metric.source, r.value[1]])).toEqual([
        [STORY_SEED.source, String(STORY_SEED.rejected.bad_signature)],
      ]);
      // Under deploy/alerts.yml's 15 minutes: WirewatchStoryCatchUpStale stays quiet.
      const age = await query("max by (source) (wirewatch_story_cursor_age_seconds)");
      expect(Number(age[0]?.value[1])).toBeGreaterThanOrEqual(STORY_SEED.caughtUpSecondsAgo);
      expect(Number(age[0]?.value[1])).toBeLessThan(900);
    });
  },
);
