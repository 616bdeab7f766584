import { expect, test } from "@playwright/test";
import { E2E_SOURCE, XSS_TITLE } from "./fixtures/news";

test("search items and read one item's observation timeline", async ({ page }, testInfo) => {
  const dialogs: string[] = [];
  page.on("dialog", (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  const shot = async (name: string) => {
    const file = testInfo.outputPath(`${name}.png`);
    await page.screenshot({ path: file, fullPage: true });
    await testInfo.attach(name, { path: file, contentType: "image/png" });
  };

  await page.goto("/items");
  const rows = page.getByRole("table", { name: "Items" }).locator("tbody tr");
  await expect(rows.first()).toBeVisible();
  await page.getByLabel("Source id").fill(E2E_SOURCE.id);
  await page.getByLabel("Headline contains").fill("central bank");
  await expect(rows).toHaveCount(1);
  await expect(rows).toContainText("Central bank holds rates steady, signals a cut in March");
  await shot("items-search");

  await rows.getByRole("link").click();
  await expect(page).toHaveURL(/\/items\/[0-9a-f]{64}$/);
  await expect(page.getByTestId("item-title")).toHaveText(
    "Central bank holds rates steady, signals a cut in March",
  );
  // The timeline: the first observation inserted v1, the edit updated it to v2.
  const timeline = page.getByRole("table", { name: "Observations" }).locator("tbody tr");
  await expect(timeline).toHaveCount(2);
  await expect(timeline.nth(0)).toContainText("inserted");
  await expect(timeline.nth(0)).toContainText("Central bank holds rates steady");
  await expect(timeline.nth(0)).toContainText("primary");
  await expect(timeline.nth(0)).toContainText("v1");
  await expect(timeline.nth(1)).toContainText("updated");
  await expect(timeline.nth(1)).toContainText("v2");
  await expect(page.getByTestId("tombstone")).toHaveText("none");
  await shot("item-timeline");

  // The retracted item: a tombstone, the row kept.
  await page.goto("/items");
  await page.getByLabel("Source id").fill(E2E_SOURCE.id);
  await page.getByLabel("Headline contains").fill("minister");
  await expect(rows).toHaveCount(1);
  await rows.getByRole("link").click();
  await expect(page.getByTestId("tombstone")).toContainText("retracted");
  await expect(
    page.getByRole("table", { name: "Observations" }).locator("tbody tr").nth(1),
  ).toContainText("tombstoned");

  // A hostile headline is text on both pages: no <img> is made, nothing runs.
  await page.goto("/items");
  await page.getByLabel("Headline contains").fill("onerror");
  await expect(rows.filter({ hasText: XSS_TITLE })).toHaveCount(1);
  await rows.filter({ hasText: XSS_TITLE }).getByRole("link").click();
  await expect(page.getByTestId("item-title")).toHaveText(XSS_TITLE);
  const timelineTwo = page.getByRole("table", { name: "Observations" }).locator("tbody tr");
  await expect(timelineTwo).toHaveCount(2);
  await expect(timelineTwo.nth(1)).toContainText("unchanged");
  await expect(timelineTwo.nth(1)).toContainText("B");
  await expect(page.locator('main img[src="x"]')).toHaveCount(0);
  expect(dialogs).toEqual([]);
  await shot("item-xss");
});
