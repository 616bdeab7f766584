import { execFileSync } from "node:child_process";
import { beforeAll, describe, expect, it } from "vitest";
import { emit } from "./events";
import { registerMetrics, scrape } from "./metrics";
import { requireTool } from "./testing/requireTool";

// What reading pages costs (workers/refreshPage.ts): CPU per look by how the page was read, and
// the requests a rendered page made that were refused.
const promtool = requireTool(
  "promtool",
  "promtool check metrics on the page-reading metrics",
  "apt-get install prometheus; .ci/run installs it",
);

beforeAll(() => {
  registerMetrics();
});

const value = (body: string, series: string): number | undefined => {
  const line = body.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

describe("page-reading metrics", () => {
  it("time each look's CPU by mode and count refused browser requests by source", async () => {
    emit("page:looked", { source: "pg-http", mode: "http", cpuSeconds: 0.004, blocked: 0 });
    emit("page:looked", { source: "pg-js", mode: "browser", cpuSeconds: 0.3, blocked: 0 });
    emit("page:looked", { source: "pg-js", mode: "browser", cpuSeconds: 1.2, blocked: 4 });
    // A mode outside the enumeration is folded, never a new series.
    emit("page:looked", {
      source: "pg-js",
      mode: "carrier-pigeon" as "http",
      cpuSeconds: 0.1,
      blocked: 0,
    });
    const { body } = await scrape();
    expect(value(body, 'wirewatch_page_look_cpu_seconds_count{mode="http"}')).toBe(1);
    expect(value(body, 'wirewatch_page_look_cpu_seconds_count{mode="browser"}')).toBe(2);
    expect(value(body, 'wirewatch_page_look_cpu_seconds_sum{mode="browser"}')).toBeCloseTo(1.5);
    expect(value(body, 'wirewatch_page_look_cpu_seconds_bucket{le="0.5",mode="browser"}')).toBe(1);
    expect(value(body, 'wirewatch_page_look_cpu_seconds_count{mode="other"}')).toBe(1);
    expect(value(body, 'wirewatch_browser_requests_refused_total{source="pg-js"}')).toBe(4);
    expect(body).not.toContain('wirewatch_browser_requests_refused_total{source="pg-http"}');
  });

  it.skipIf(promtool.skip)(`passes promtool check metrics${promtool.note}`, async () => {
    const { body } = await scrape();
    const families = [
      "wirewatch_page_look_cpu_seconds",
      "wirewatch_browser_requests_refused_total",
    ];
    const picked = body
      .split("\n")
      .filter((l) =>
        families.some((f) =>
          new RegExp(`^(# (HELP|TYPE) )?${f}(_bucket|_sum|_count)?[{ ]`).test(l),
        ),
      )
      .join("\n");
    for (const f of families) expect(picked).toContain(`# TYPE ${f} `);
    const out = execFileSync(promtool.need(), ["check", "metrics"], {
      input: `${picked}\n`,
      encoding: "utf8",
    });
    expect(out.trim()).toBe("");
  });
});
