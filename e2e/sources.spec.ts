import { expect, type Page, type TestInfo, test } from "@playwright/test";
import { login } from "./fixtures/admin";
import { simulator } from "./fixtures/simulator";

// A feed the other specs leave alone, so its breaker is this file's to open.
const BROKEN = "ledger-rss";
const PAUSED = "padma-rss";

test.describe.configure({ timeout: 240_000 });

test("a source answering 503 shows failing with its breaker open, on Sources and its page", async ({
  page,
}, testInfo) => {
  await login(page, `/sources/${BROKEN}`);
  await simulator.inject(BROKEN, { kind: "503" });
  try {
    await fetchUntilBreakerOpens(page, BROKEN);
    await expect(page.getByTestId("health")).toHaveAttribute("data-health", "failing");
    await expect(page.locator("main")).toContainText("breaker open after http_5xx");
    // The attempts behind it, and the chart of outcomes by code.
    await expect(page.getByTestId("attempts")).toContainText("http_5xx");
    await expect(page.getByRole("img", { name: /fetch outcomes by code/ })).toBeVisible();
    await screenshot(page, testInfo, "source-breaker-open");

    await page.goto("/sources");
    const row = page.locator(`table.sources tr[data-source-id="${BROKEN}"]`);
    await expect(row).toHaveAttribute("data-health", "failing");
    await expect(row).toHaveAttribute("data-breaker", /open/);
    await expect(row.locator(".badge")).toHaveText("failing");
    await expect(row).toContainText(/since .* ago/);
    await expect(row).toContainText(/probe (in|now|.* ago)/);
    // Error rate over the last hour, with its sparkline.
    await expect(row.getByRole("img", { name: /failed fetches per 5 minutes/ })).toBeVisible();
    expect(await row.locator("td").nth(4).textContent()).toMatch(/[1-9]\d*%/);
    await screenshot(page, testInfo, "sources");
  } finally {
    await simulator.clear(BROKEN);
  }
});

test("pause stops a source and survives until resumed; both are admin actions", async ({
  page,
}, testInfo) => {
  await login(page, `/sources/${PAUSED}`);
  await page.getByRole("button", { name: "Pause" }).click();
  await expect(page.getByRole("status").filter({ hasText: "Pause:" })).toContainText("paused");
  await expect(page.getByTestId("health")).toHaveText("paused");
  await expect(page.locator("main")).toContainText("paused by an admin");
  await expect(page.getByRole("button", { name: "Fetch now" })).toBeDisabled();
  await screenshot(page, testInfo, "source-paused");

  await page.getByRole("button", { name: "Resume" }).click();
  await expect(page.getByTestId("health")).not.toHaveText("paused");
  await expect(page.getByTestId("jobs")).toContainText(`${PAUSED}/A`);

  // Both actions were recorded.
  const audit = await page.request.get("/api/audit");
  if (audit.ok()) {
    const text = await audit.text();
    expect(text).toContain("sources.pause");
    expect(text).toContain("sources.resume");
  }
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
