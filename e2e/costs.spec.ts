import { mkdirSync } from "node:fs";
import { expect, type Page, test } from "@playwright/test";

// The Costs page against the e2e server, whose line extracts the simulator's items through the
// simulator's OpenAI-compatible chat endpoint (sim-extract-1, priced like a small commercial
// model) with the local provider behind it: spend by source and the month's forecast appear once
// the first items are extracted, and the most expensive item opens on its item page with its
// extraction. Screenshots at a desktop's and a phone's width go to SHOTS.

const SHOTS = process.env.WIREWATCH_SHOTS_DIR || "/tmp/team/shots";

/**
 * Nothing on the page reaches past the screen's right edge (no sideways scrolling): no element,
 * and no line of text (a long word overflows its box without widening any element's own box).
 */
async function overflowing(page: Page): Promise<string[]> {
  return page.locator("main").evaluate((main) => {
    const edge = document.documentElement.clientWidth;
    const wide = [...main.querySelectorAll("*")]
      .filter((e) => e.getBoundingClientRect().right > edge + 0.5)
      .map((e) => `${e.tagName.toLowerCase()}.${e.className}`);
    const scroll = document.documentElement.scrollWidth;
    return scroll > edge ? [...wide, `the page scrolls sideways: ${scroll} > ${edge} px`] : wide;
  });
}

test("the Costs page: spend by source and a forecast with the simulator's provider on", async ({
  page,
}) => {
  // The server's first seconds are slow (the line starting, the simulator's backlog going
  // through dedup, embed and extract); the first paid extractions follow within a minute or two.
  test.setTimeout(240_000);
  mkdirSync(SHOTS, { recursive: true });
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.goto("/costs", { timeout: 60_000 });
  await expect(page.getByRole("heading", { level: 1, name: "Costs" })).toBeVisible();
  const nav = page.getByRole("navigation", { name: "Dashboard" });
  await expect(nav.getByRole("link", { name: "Costs" })).toHaveAttribute("aria-current", "page");

  // Spend by source: a source whose items' extraction cost something (the page polls every 10 s).
  const sources = page.getByTestId("costs-sources");
  const paid = sources
    .getByTestId("costs-source-row")
    .filter({ has: page.getByTestId("source-spend").filter({ hasNotText: /^\$0$/ }) });
  await expect(paid.first()).toBeVisible({ timeout: 180_000 });
  await expect(paid.first().getByTestId("source-spend")).toHaveText(/^\$\d/);
  await expect(paid.first()).toContainText(/\d+ of \d+/);

  // The month's forecast: what was spent so far and where the rate takes it.
  const forecast = page.getByTestId("costs-forecast");
  await expect(forecast).toContainText(/Forecast for \w+ \d{4}/);
  await expect(forecast).toContainText(/spent so far \+ \$[\d.e-]+ a day/);
  await expect(page.getByTestId("costs-forecast-tile").locator("strong")).toHaveText(
    /^\$(0\.0*[1-9]|[1-9])/,
  );
  // The spend plot, stacked by provider and model, with the simulator's model in its table.
  await expect(
    page.getByRole("img", { name: /Extraction spend over the last 24 hours/ }),
  ).toBeVisible();
  await expect(page.getByRole("table", { name: "Spend by provider and model" })).toContainText(
    "sim-extract-1",
  );
  await expect(page.getByRole("table", { name: "Calls by outcome" })).toContainText("ok");
  await page.screenshot({ path: `${SHOTS}/costs-1280.png`, fullPage: true });

  // Another window re-reads the table.
  await page.getByRole("button", { name: "24 hours", exact: true }).click();
  await expect(page.getByRole("button", { name: "24 hours", exact: true })).toHaveAttribute(
    "aria-pressed",
    "true",
  );
  await expect(paid.first()).toBeVisible();

  // At a phone's width every table is a card of labelled lines, nothing past the screen.
  await page.setViewportSize({ width: 390, height: 844 });
  await expect(page.getByTestId("costs-forecast")).toBeVisible();
  expect(await overflowing(page)).toEqual([]);
  await page.screenshot({ path: `${SHOTS}/costs-390.png`, fullPage: true });

  // The most expensive item opens on its page with its extraction: provider, model and cost.
  await page.setViewportSize({ width: 1280, height: 900 });
  const top = page.getByTestId("costs-top-items").getByRole("link").first();
  await expect(top).toBeVisible();
  await top.click();
  await expect(page).toHaveURL(/\/items\/[0-9a-f]{64}$/);
  const extraction = page.getByTestId("item-extraction");
  await expect(extraction).toContainText("sim-extract-1");
  await expect(extraction.getByTestId("extraction-cost")).toContainText(/\$[\d.e-]+ · \d+ call/);
  await expect(extraction.getByRole("table", { name: "Calls for this item" })).toBeVisible();
  await extraction.scrollIntoViewIfNeeded();
  await page.screenshot({ path: `${SHOTS}/item-extraction-1280.png`, fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: `${SHOTS}/item-extraction-390.png`, fullPage: true });

  // The Overview's extraction tile opens the Costs page. With a daily budget set small enough
  // (WIREWATCH_EXTRACT_LLM_DAILY_BUDGET_USD in the runner's environment reaches the server), the
  // llm provider stops at it and both pages say so.
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.goto("/");
  const tile = page.locator('[data-tile="extraction"]');
  await expect(tile).toHaveAttribute("href", "/costs");
  await expect(tile).toContainText(/\$\d/);
  if (process.env.WIREWATCH_EXTRACT_LLM_DAILY_BUDGET_USD) {
    await expect(page.locator('[data-banner="budget"]')).toContainText(
      "stopped at its daily budget",
      {
        timeout: 60_000,
      },
    );
    await expect(tile).toHaveAttribute("data-level", "amber");
  }
  await page.screenshot({ path: `${SHOTS}/overview-1280.png`, fullPage: true });
  if (process.env.WIREWATCH_EXTRACT_LLM_DAILY_BUDGET_USD) {
    await page.goto("/costs");
    await expect(page.getByTestId("budget-banner")).toContainText("llm");
    await page.screenshot({ path: `${SHOTS}/costs-budget-1280.png`, fullPage: true });
  }
});
