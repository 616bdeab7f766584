import { expect, test } from "@playwright/test";
import { login } from "./fixtures/admin";

// The Queues page: throughput per queue over time, the jobs waiting to retry, the shared time
// range, and pausing a whole queue (audited). Screenshots at 1440 px and 390 px to look at.

const SHOTS = process.env.WIREWATCH_SHOTS_DIR ?? "/tmp/team16/shots";

test.describe.configure({ timeout: 180_000 });

test("throughput, retries, the time range and pause/resume of a queue", async ({
  page,
}, testInfo) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  await login(page, "/queues");
  await expect(page.getByRole("heading", { name: "Depth per stage" })).toBeVisible({
    timeout: 30_000,
  });
  await expect(page.getByRole("heading", { name: "Throughput" })).toBeVisible();
  await expect(page.getByRole("heading", { name: "Waiting to retry" })).toBeVisible();
  // The simulator's sources have been fetched by now: the fetch queue has a throughput chart.
  await expect(page.locator('[data-flow-queue="fetch"]')).toBeVisible({ timeout: 60_000 });
  await expect(page.locator('[data-flow-queue="fetch"]')).toContainText("processed");

  // The range is one choice for the dashboard: still chosen after a reload of the page.
  await page.getByRole("button", { name: "last 6 h" }).click();
  await page.reload();
  await expect(page.getByRole("button", { name: "last 6 h" })).toHaveAttribute(
    "aria-pressed",
    "true",
  );
  await page.getByRole("button", { name: "last 1 h" }).click();

  // Pause a queue the other specs lean on least, for a moment: not fetch or stream.
  const rows = page.getByTestId("depth").locator("tbody tr");
  await expect(rows.first()).toBeVisible();
  const names = await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-queue")));
  const queue = names.find((n) => n && n !== "fetch" && n !== "stream") ?? names[0];
  expect(queue).toBeTruthy();
  const row = page.locator(`[data-testid="depth"] tr[data-queue="${queue}"]`);
  await row.getByRole("button", { name: `Pause ${queue}` }).click();
  await expect(row.locator("[data-paused]")).toHaveAttribute("data-paused", "true");
  await expect(page.getByTestId("paused-queues")).toContainText(`${queue} since`);
  await page.screenshot({ path: `${SHOTS}/queues-1440.png`, fullPage: true });
  await testInfo.attach("queues-1440", {
    path: `${SHOTS}/queues-1440.png`,
    contentType: "image/png",
  });
  await row.getByRole("button", { name: `Resume ${queue}` }).click();
  await expect(row.locator("[data-paused]")).toHaveAttribute("data-paused", "false");
  await expect(page.getByTestId("paused-queues")).toHaveCount(0);

  // Both audited, by the admin.
  const audit = await page.request
    .get("/api/audit?action=queues.*&limit=100")
    .then((r) => r.json());
  const mine = (audit.entries as { action: string; actor: string; target: { queue?: string } }[])
    .filter((e) => e.action.startsWith("queues.") && e.target.queue === queue)
    .map((e) => e.action);
  expect(mine).toEqual(["queues.resume", "queues.pause"]);

  // On the Audit page the target reads as a key and its value, not as JSON.
  await page.goto("/audit");
  const pauseRow = page
    .getByRole("table", { name: "Audit log" })
    .locator("tbody tr", { hasText: "queues.pause" })
    .first();
  await expect(pauseRow.locator("dt", { hasText: /^queue$/ })).toBeVisible();
  await expect(pauseRow.locator("dd", { hasText: new RegExp(`^${queue}$`) })).toBeVisible();
  await expect(pauseRow).not.toContainText("{");
  await page.screenshot({ path: `${SHOTS}/audit-1440.png`, fullPage: true });
  await testInfo.attach("audit-1440", {
    path: `${SHOTS}/audit-1440.png`,
    contentType: "image/png",
  });

  await page.goto("/queues");
  await page.setViewportSize({ width: 390, height: 844 });
  await page.reload();
  await expect(page.getByRole("heading", { name: "Throughput" })).toBeVisible({ timeout: 30_000 });
  await page.screenshot({ path: `${SHOTS}/queues-390.png`, fullPage: true });
  await testInfo.attach("queues-390", {
    path: `${SHOTS}/queues-390.png`,
    contentType: "image/png",
  });
});
