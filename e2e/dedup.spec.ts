import { expect, type Locator, type Page, type TestInfo, test } from "@playwright/test";
import { login } from "./fixtures/admin";
import { DEDUP_ITEMS, type DedupItemName, dedupItemKey } from "./fixtures/dedup";

// The Dedup page over the clusters e2e/fixtures/dedup.ts had the real stage make (the
// simulator's own stories are decided live beside them, so nothing here counts rows globally).
// The steps build on each other: undo, then the review queue, then a re-run that changes the
// thresholds in force, last.
test.describe.configure({ mode: "serial" });

const title = (name: DedupItemName) => DEDUP_ITEMS.find((i) => i.name === name)?.title as string;

function shooter(page: Page, testInfo: TestInfo) {
  return async (name: string) => {
    for (const [width, height, suffix] of [
      [1280, 900, "1280"],
      [390, 844, "390"],
    ] as const) {
      await page.setViewportSize({ width, height });
      const file = testInfo.outputPath(`${name}-${suffix}.png`);
      await page.screenshot({ path: file, fullPage: true });
      await testInfo.attach(`${name}-${suffix}`, { path: file, contentType: "image/png" });
    }
    await page.setViewportSize({ width: 1280, height: 900 });
  };
}

test("the Dedup page: the stage plot, the latency plot, per-source rates and clusters", async ({
  page,
}, testInfo) => {
  const shot = shooter(page, testInfo);
  await page.goto("/dedup");
  const plot = page.getByRole("region", { name: "Decisions by stage" });
  await expect(plot.locator(".recharts-bar-rectangle").first()).toBeVisible({ timeout: 30_000 });
  await expect(
    page.getByRole("region", { name: "Decision latency" }).locator("svg").first(),
  ).toBeVisible();
  const rates = page.getByRole("table", { name: "Duplicate rate per source" });
  // Dedup Daily: a copy, a tracked link and a rewrite among its 5 items (3 duplicates).
  await expect(rates.locator("tr").filter({ hasText: "Dedup Daily" })).toContainText("60%");
  await expect(
    page.getByRole("table", { name: "Clusters" }).locator("tbody tr").first(),
  ).toBeVisible();
  await expect(page.getByTestId("pending-reviews")).not.toHaveText("0");
  await shot("dedup-page");
});

test("an item's cluster, the evidence, and undoing a link", async ({ page }, testInfo) => {
  const shot = shooter(page, testInfo);
  await login(page, "/dedup");
  // From the item page, through its cluster section.
  await page.goto(`/items/${dedupItemKey("floodsRewrite")}`);
  const section = page.getByRole("region", { name: "Cluster" });
  await expect(section.getByTestId("dedup-outcome")).toContainText("Linked by a near match");
  await expect(section.getByRole("table", { name: "Cluster members" })).toContainText(
    title("floods"),
  );
  await shot("dedup-item-cluster");
  await section.getByRole("link", { name: /^cluster \d+$/ }).click();
  await expect(page).toHaveURL(/\/dedup\/clusters\/\d+$/);
  await expect(page.getByTestId("cluster-title")).toHaveText(title("floods"));

  const members = page.getByRole("region", { name: "Members" }).locator("article");
  await expect(members).toHaveCount(4);
  await expect(members.first()).toContainText("Canonical");
  const byUrl = members.filter({ hasText: title("floodsTracked") });
  await expect(byUrl).toContainText("same story URL");
  await expect(byUrl.getByTestId("evidence")).toContainText("Same normalised URL");
  const near = members.filter({ hasText: title("floodsRewrite") });
  await expect(near).toContainText("near match");
  await expect(near.getByTestId("score")).toContainText("threshold");
  const evidence = near.getByTestId("evidence");
  await expect(evidence.getByRole("list", { name: "Shared words" })).toContainText("highway");
  await expect(evidence).toContainText("Only in this item");
  await shot("dedup-cluster");

  // Undo, after the confirmation: the member leaves, the link is history.
  await near.getByRole("button", { name: "Undo link…" }).click();
  const dialog = page.getByRole("dialog", { name: "Undo link" });
  await expect(dialog).toContainText(title("floodsRewrite"));
  await dialog.getByRole("button", { name: "Undo the link" }).click();
  await expect(members).toHaveCount(3);
  await expect(members.filter({ hasText: title("floodsRewrite") })).toHaveCount(0);
  const ended = page.getByRole("table", { name: "Ended links" });
  await expect(ended.locator("tr").filter({ hasText: title("floodsRewrite") })).toContainText(
    "undone by admin",
  );
});

test("the review queue: confirm one pair, reject another", async ({ page }, testInfo) => {
  const shot = shooter(page, testInfo);
  await login(page, "/dedup");
  const queue = page.getByRole("region", { name: "Review queue" });
  // A pair is its two headlines (the stage may have opened other pairs with either of them).
  const pair = (a: DedupItemName, b: DedupItemName) =>
    queue
      .locator("article")
      .filter({ hasText: title(a) })
      .filter({ hasText: title(b) });
  const villages = pair("villages", "visit");
  const fuel = pair("fuelAgain", "fuel");
  // The queue is newest first, ten a page, and the simulator's pairs are newer than the
  // fixture's: page back until the pair shows.
  const pageTo = async (target: Locator) => {
    const newest = queue.getByRole("button", { name: "← Newest" });
    if (await newest.isEnabled()) await newest.click();
    const first = queue.locator("article").first();
    for (let i = 0; i < 50; i++) {
      await expect(first).toBeVisible();
      if ((await target.count()) > 0) break;
      const older = queue.getByRole("button", { name: "Older →" });
      if (!(await older.isEnabled())) break;
      const id = (await first.getAttribute("data-review-id")) ?? "";
      await older.click();
      await expect(first).not.toHaveAttribute("data-review-id", id);
    }
    await expect(target).toHaveCount(1);
  };
  await pageTo(villages);
  await expect(villages.getByTestId("score")).toContainText("threshold");
  await villages.getByText("Evidence").click();
  await expect(villages.getByRole("list", { name: "Shared words" })).toContainText("villages");
  await shot("dedup-reviews");

  await villages.getByRole("button", { name: "Confirm: same story" }).click();
  await expect(villages).toHaveCount(0);
  await pageTo(fuel);
  await fuel.getByRole("button", { name: "Reject: different" }).click();
  await expect(fuel).toHaveCount(0);

  // Confirmed: linked by review; rejected: still alone.
  await page.goto(`/items/${dedupItemKey("villages")}`);
  await expect(page.getByTestId("dedup-outcome")).toContainText("an operator's confirmation");
  await page.goto(`/items/${dedupItemKey("fuelAgain")}`);
  await expect(page.getByTestId("dedup-outcome")).not.toContainText("Linked by");
});

test("thresholds: edit, dry run with its diff, apply with progress to done", async ({
  page,
}, testInfo) => {
  test.setTimeout(180_000);
  const shot = shooter(page, testInfo);
  await login(page, "/dedup");
  const form = page.getByRole("form", { name: "Thresholds" });
  // Nothing scored below 1 is linked or reviewed any more: the storm rewrite's near link goes.
  await form.getByLabel("Near: link at score ≥").fill("1");
  await form.getByLabel("Near: review at score ≥").fill("1");
  await page.getByRole("button", { name: "Dry run with these" }).click();
  const panel = page.getByRole("region", { name: /^Dedup run \d+$/ });
  await expect(panel).toContainText("dry run · finished", { timeout: 90_000 });
  await expect(panel.getByTestId("run-progress")).toContainText("(100%)");
  // At least the storm rewrite's link would go (Playwright trims a string, so a pattern).
  await expect(panel.getByTestId("run-progress")).toContainText(/, [1-9]\d* would go/);
  await expect(
    panel.getByRole("table", { name: "Run diff" }).locator("tr[data-change]").first(),
  ).toBeVisible();
  const runId = (await panel.getAttribute("aria-label"))?.match(/\d+/)?.[0] as string;
  // The storm rewrite is in the diff as a link that goes (the API's pages, by entry key).
  const storm = dedupItemKey("stormRewrite");
  const change = await page.request
    .get(
      `/api/dedup/runs/${runId}?after=${(BigInt(`0x${storm}`) - 1n).toString(16).padStart(64, "0")}&limit=1`,
    )
    .then((r) => r.json());
  expect(change.changes[0]).toMatchObject({ entryKey: storm, change: "go" });
  await shot("dedup-dry-run");

  await panel.getByRole("button", { name: "Apply…" }).click();
  const dialog = page.getByRole("dialog", { name: "Apply dedup run" });
  await expect(dialog).toContainText(`Apply run ${runId}`);
  await dialog.getByRole("button", { name: "Apply the run" }).click();
  await expect(panel).toContainText("apply ·", { timeout: 10_000 });
  await expect(panel.getByRole("progressbar", { name: "Run progress" })).toBeVisible();
  await expect(panel).toContainText("apply · finished", { timeout: 120_000 });
  await expect(panel.getByTestId("run-progress")).toContainText("(100%)");
  const history = page.getByRole("table", { name: "Dedup runs" }).locator("tbody tr");
  await expect(history.nth(0)).toContainText("apply");
  await expect(history.nth(0).getByTestId("run-state")).toHaveText("finished");
  await expect(history.nth(1)).toContainText("dry run");
  // In force now, and the storm rewrite stands alone.
  await expect(
    page.getByRole("region", { name: "Thresholds" }).locator(".lede").first(),
  ).toContainText("set by admin");
  await shot("dedup-applied");

  // Saved without a re-run: a new revision for the decisions to come, after its confirmation.
  const lede = page.getByRole("region", { name: "Thresholds" }).locator(".lede").first();
  const revision = Number((await lede.textContent())?.match(/revision (\d+)/)?.[1]);
  await form.getByLabel("Window (hours)").fill("48");
  await page.getByRole("button", { name: "Save without re-run…" }).click();
  const save = page.getByRole("dialog", { name: "Save thresholds" });
  await expect(save).toContainText("Window (hours)");
  await save.getByRole("button", { name: "Save thresholds" }).click();
  await expect(lede).toContainText(`revision ${revision + 1}, set by admin`);
  await expect(form.getByLabel("Window (hours)")).toHaveValue("48");

  await page.goto(`/items/${storm}`);
  await expect(page.getByTestId("dedup-outcome")).not.toContainText("Linked by");

  // Every action of this file is in the audit, by the admin.
  const audit = await page.request.get("/api/audit?action=dedup.*&limit=100").then((r) => r.json());
  const actions = (audit.entries as { action: string; actor: string }[])
    .filter((e) => e.actor === "admin")
    .map((e) => e.action);
  for (const a of [
    "dedup.thresholds",
    "dedup.undo",
    "dedup.review_confirm",
    "dedup.review_reject",
    "dedup.rerun_dry_run",
    "dedup.rerun_apply",
  ]) {
    expect(actions, a).toContain(a);
  }
});
