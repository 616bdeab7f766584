import { expect, test } from "@playwright/test";

// The Meaning page against the e2e server, whose line embeds the simulator's items live: the
// vector backend and the search model are always said; the models table holds a row per model
// once the embed stage has stored its first vector, and says why it is empty before that.

test("the Meaning page: the vector backend, the search model, the models table, latency", async ({
  page,
}, testInfo) => {
  // Run first after the server starts, a page load waits out the embed stage's start (its model
  // loading, the simulator's backlog embedded): /api/health took 1.3-2.4 s a request for the
  // first ~12 s on 2 cores, and a page is some twenty requests.
  test.setTimeout(90_000);
  await page.goto("/meaning", { timeout: 60_000 });
  await expect(page.getByRole("heading", { level: 1, name: "Meaning" })).toBeVisible();
  const nav = page.getByRole("navigation", { name: "Dashboard" });
  await expect(nav.getByRole("link", { name: "Meaning" })).toHaveAttribute("aria-current", "page");
  // After Dedup in the navigation.
  const labels = await nav.getByRole("link").allTextContents();
  expect(labels.indexOf("Meaning")).toBe(labels.indexOf("Dedup") + 1);

  await expect(page.getByTestId("meaning-backend")).toContainText(
    /pgvector \(HNSW, an index per model\)|portable: exact scan of sign codes, then cosine/,
  );
  await expect(page.getByTestId("meaning-search-model")).toContainText(
    /ranks by|keyword search only: no model has completed its backfill/,
  );
  await expect(page.getByTestId("meaning-latency")).toContainText("this server process");

  const table = page.getByTestId("meaning-models");
  await expect(table).toBeVisible();
  const rows = table.getByTestId("meaning-model-row");
  // The simulator's first items reach the embed stage within seconds of start when it runs.
  await expect(rows.first().or(table.getByText("No model has embedded anything yet"))).toBeVisible({
    timeout: 30_000,
  });
  const count = await rows.count();
  testInfo.annotations.push({ type: "models", description: String(count) });
  for (let i = 0; i < count; i++) {
    const row = rows.nth(i);
    const kind = await row.locator("[data-kind]").first().getAttribute("data-kind");
    // The lexical fallback is never shown as meaning.
    if (kind === "lexical") await expect(row).toContainText("lexical — not meaning");
    if ((await row.getAttribute("data-model"))?.startsWith("shipped:use-lite")) {
      await expect(row).toContainText("no Bangla ↔ English");
      await expect(row).toContainText("English only");
    }
    if ((await row.getAttribute("data-state")) === "backfilling") {
      await expect(row.getByRole("progressbar")).toBeVisible();
    }
  }

  // At a phone's width nothing on the page reaches past the screen (no sideways scrolling, not
  // even inside the table's box): each model is a card of labelled lines.
  await page.setViewportSize({ width: 390, height: 844 });
  await expect(page.getByTestId("meaning-backend")).toBeVisible();
  const past = await page.locator("main").evaluate((main) => {
    const edge = document.documentElement.clientWidth;
    return [...main.querySelectorAll("*")]
      .filter((e) => e.getBoundingClientRect().right > edge + 0.5)
      .map((e) => `${e.tagName.toLowerCase()}.${e.className}`);
  });
  expect(past).toEqual([]);
});
