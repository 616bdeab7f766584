import { expect, test } from "@playwright/test";
import { login } from "./fixtures/admin";
import { REPAIR_ROW } from "./fixtures/news";

test("a repair: dry run with the diff, apply with progress, both in the history", async ({
  page,
}, testInfo) => {
  test.setTimeout(120_000);
  await login(page, "/repairs");
  const shot = async (name: string) => {
    const file = testInfo.outputPath(`${name}.png`);
    await page.screenshot({ path: file, fullPage: true });
    await testInfo.attach(name, { path: file, contentType: "image/png" });
  };

  // Dry run: the damaged fixture row shows up, field by field; nothing is written.
  await page.getByRole("button", { name: "Dry run", exact: true }).click();
  const panel = page.getByRole("region", { name: /^Repair run \d+$/ });
  await expect(panel).toContainText("dry run · finished", { timeout: 60_000 });
  await expect(panel.getByTestId("repair-progress")).toContainText("(100%)");
  const diff = panel.getByRole("table", { name: "Repair diff" });
  const row = diff.locator("tr").filter({ hasText: REPAIR_ROW.field });
  await expect(row.first()).toContainText(REPAIR_ROW.repaired);
  await expect(row.first()).toContainText("∅");
  await shot("repairs-dry-run");

  // Apply, after the confirmation: the bar fills, the row is written.
  await page.getByRole("button", { name: "Apply…" }).click();
  await expect(page.getByRole("dialog", { name: "Apply repair" })).toContainText(
    "The last dry run",
  );
  await page.getByRole("button", { name: "Apply the repair" }).click();
  await expect(panel).toContainText("apply ·", { timeout: 10_000 });
  await expect(panel.getByRole("progressbar", { name: "Repair progress" })).toBeVisible();
  await expect(panel).toContainText("apply · finished", { timeout: 60_000 });
  await expect(panel.getByTestId("repair-progress")).toContainText("(100%)");
  await expect(diff.locator("tr").filter({ hasText: REPAIR_ROW.field }).first()).toContainText(
    "yes",
  );
  // Applied: nothing left to apply until a dry run finds something again.
  await expect(page.getByRole("button", { name: "Apply…" })).toBeDisabled();
  await expect(page.getByTestId("nothing-to-repair")).toContainText("Nothing to repair");

  // History: both runs, newest first, by the admin.
  const history = page.getByRole("table", { name: "Repair runs" }).locator("tbody tr");
  await expect(history.nth(0)).toContainText("apply");
  await expect(history.nth(0).getByTestId("run-status")).toHaveText("finished");
  await expect(history.nth(1)).toContainText("dry run");
  await expect(history.nth(0)).toContainText("admin");
  await shot("repairs-applied");

  // A second dry run finds nothing left to repair for the fixture row.
  await page.getByRole("button", { name: "Dry run", exact: true }).click();
  await expect(panel).toContainText("dry run · finished", { timeout: 60_000 });
  await expect(
    panel.locator(`tr[data-entry-key]`).filter({ hasText: REPAIR_ROW.field }),
  ).toHaveCount(0);
  // 0 rows differ: Apply is not offered, and the page says why.
  await expect(panel).toContainText("would change 0");
  await expect(page.getByRole("button", { name: "Apply…" })).toBeDisabled();
  await expect(page.getByTestId("nothing-to-repair")).toContainText("found 0 rows that differ");
});
