import { writeFileSync } from "node:fs";
import path from "node:path";
import { expect, type Page, type TestInfo, test } from "@playwright/test";
import { login } from "./fixtures/admin";
import { E2E_PORT } from "./fixtures/app";
import { ownServer } from "./fixtures/ownServer";
import { simulator } from "./fixtures/simulator";

// Not the source sources.spec.ts breaks: the files run in parallel.
const BROKEN = "harbour-atom";

test.describe.configure({ timeout: 240_000 });

test("every tile links to its page and the overall status is shown", async ({ page }, testInfo) => {
  await page.goto("/");
  const status = page.getByRole("status").filter({ hasText: /All clear|Needs attention|Alert/ });
  await expect(status).toHaveAttribute("data-status", /^(ok|amber|red)$/);
  const tiles = page.locator("[data-tile]");
  await expect(tiles).toHaveCount(7);
  const links = Object.fromEntries(
    await Promise.all(
      (await tiles.all()).map(async (t) => [
        await t.getAttribute("data-tile"),
        await t.getAttribute("href"),
      ]),
    ),
  );
  expect(links).toEqual({
    ingest: "/items",
    lag: "/queues",
    dlq: "/dead-letters",
    breakers: "/sources",
    errors: "/sources",
    health: "/sources",
    extraction: "/costs",
  });
  await expect(page.locator("table.news")).toBeVisible();
  await screenshot(page, testInfo, "overview");

  await page.locator('[data-tile="lag"]').click();
  await expect(page).toHaveURL(/\/queues$/);
  await expect(page.getByRole("heading", { name: "Queues" })).toBeVisible();
  await expect(page.getByRole("heading", { name: "Depth per stage" })).toBeVisible();
  await page.getByRole("button", { name: "last 6 h" }).click();
  await expect(page.getByRole("button", { name: "last 6 h" })).toHaveAttribute(
    "aria-pressed",
    "true",
  );
  await screenshot(page, testInfo, "queues");
});

test("a failing source turns the overview amber or red, with its breaker counted", async ({
  page,
}, testInfo) => {
  await login(page, `/sources/${BROKEN}`);
  await simulator.inject(BROKEN, { kind: "503" });
  try {
    await fetchUntilBreakerOpens(page, BROKEN);
    await page.goto("/");
    await expect(page.locator("main [data-status]")).toHaveAttribute("data-status", /amber|red/);
    const breakers = page.locator('[data-tile="breakers"]');
    await expect(breakers).toHaveAttribute("data-level", /amber|red/);
    await expect(breakers).toContainText(BROKEN);
    await expect(page.locator('[data-tile="errors"]')).toHaveAttribute("data-level", /amber|red/);
    await expect(page.locator(`table.sources tr[data-source-id="${BROKEN}"] .badge`)).toHaveText(
      "failing",
    );
    await screenshot(page, testInfo, "overview-failing");

    const body = (await (await page.request.get("/api/overview")).json()) as {
      overview: { status: string; breakers: { sources: string[] } };
    };
    expect(body.overview.status).toMatch(/amber|red/);
    expect(body.overview.breakers.sources).toContain(BROKEN);
  } finally {
    await simulator.clear(BROKEN);
  }
});

test.describe("a server whose sources file is invalid", () => {
  const base = ownServer(E2E_PORT + 21, {
    env: { WIREWATCH_WORKERS: "inline" },
    prepare: (dir) => {
      const file = path.join(dir, "wirewatch.config.json");
      // A typo'd field name and a missing url: zod names both.
      writeFileSync(
        file,
        JSON.stringify({ sources: [{ id: "wire", name: "Wire", kind: "feed", uri: "x" }] }),
      );
      return { WIREWATCH_CONFIG: file };
    },
    // Up once it answers health at all (503 is the point here).
    up: (status) => status === 503 || status === 200,
  });

  test("health is 503 with the reason and the Overview shows it in a red banner", async ({
    page,
    request,
  }, testInfo) => {
    await expect
      .poll(async () => (await request.get(`${base}/api/health`)).status(), { timeout: 30_000 })
      .toBe(503);
    const body = await (await request.get(`${base}/api/health`)).json();
    expect(body).toMatchObject({
      status: "unhealthy",
      error: { code: "sources_file_invalid" },
      ingestion: { mode: "inline", state: "failed" },
    });
    expect(body.error.message).toMatch(/sources\[0\]\.url/);

    await page.goto(`${base}/`);
    const banner = page.locator('[data-banner="ingestion"]');
    await expect(banner).toBeVisible();
    await expect(banner).toContainText("Ingestion is not running");
    await expect(banner).toContainText("sources[0].url");
    await expect(page.locator("main [data-status]")).toHaveAttribute("data-status", "red");
    await expect(page.locator('[data-tile="ingest"]')).toHaveAttribute("data-level", "red");
    await screenshot(page, testInfo, "overview-ingestion-down");
  });
});

// ---- helpers ----

/**
 * Breaks a source until its breaker opens, through the source page's "Fetch now" button: each
 * click makes the waiting fetch job due at once, so five failed polls (the breaker's threshold)
 * take seconds instead of five poll intervals. The page must be logged in.
 */
async function fetchUntilBreakerOpens(page: Page, sourceId: string): Promise<void> {
  await page.goto(`/sources/${sourceId}`);
  const breaker = page.getByTestId("breaker");
  await expect(breaker).toBeVisible();
  await expect
    .poll(
      async () => {
        const state = await breaker.getAttribute("data-breaker");
        if (state === "open" || state === "half_open") return state;
        const button = page.getByRole("button", { name: "Fetch now" });
        if (await button.isEnabled()) await button.click();
        await expect(page.getByRole("alert").filter({ hasText: "refused" })).toHaveCount(0);
        return state;
      },
      { timeout: 150_000, intervals: [3_000] },
    )
    .toMatch(/open/);
}

/** A full-page screenshot, attached to the report and kept under test-results. */
async function screenshot(page: Page, testInfo: TestInfo, name: string): Promise<void> {
  const file = testInfo.outputPath(`${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  await testInfo.attach(name, { path: file, contentType: "image/png" });
}
