import { expect, type Page, test } from "@playwright/test";
import { adminPost, chaos, login } from "./fixtures/admin";
import { E2E_BASE_URL } from "./fixtures/app";
import { CHAOS_SOURCE_ID } from "./fixtures/news";

// One story, in order: make the fetch stage fail for a source → its jobs park as dead letters
// under one fingerprint → requeue with the fault still set (they run and die again) → clear the
// fault, requeue the group → the count drops to nothing, and every probe ran once more and
// succeeded.
test.describe.configure({ mode: "serial" });

const PROBES = 3;

async function groupRow(page: Page) {
  return page.getByRole("table", { name: "Dead-letter groups" }).locator("tbody tr");
}

async function shot(page: Page, name: string, testInfo: import("@playwright/test").TestInfo) {
  const file = testInfo.outputPath(`${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  await testInfo.attach(name, { path: file, contentType: "image/png" });
}

test("a failing stage parks its jobs under one fingerprint; requeue after the fix empties the group", async ({
  page,
}, testInfo) => {
  test.setTimeout(120_000);
  await login(page, "/dead-letters");

  // Make the fetch stage fail for the source, and put its jobs on the queue now.
  const set = await chaos.set(page, CHAOS_SOURCE_ID, { probes: PROBES });
  expect(set.probeIds).toHaveLength(PROBES);

  // Scope the page to that source: other specs break other sources meanwhile.
  await page.getByLabel("Source").fill(CHAOS_SOURCE_ID);
  const groups = await groupRow(page);
  await expect(groups).toHaveCount(1, { timeout: 30_000 });
  await expect(groups.getByTestId("group-count")).toHaveText(String(PROBES), { timeout: 30_000 });
  await expect(groups).toContainText("chaos");
  await expect(groups).toContainText(`chaos: injected fetch fault for source ${CHAOS_SOURCE_ID}`);
  await expect(page.getByTestId("dlq-depth")).toHaveText(String(PROBES));

  // Inspect one: payload and the full error with its stack.
  await page
    .getByRole("table", { name: "Dead letters" })
    .getByRole("button", { name: "Inspect" })
    .first()
    .click();
  const inspector = page.getByRole("region", { name: /^Dead letter \d+$/ });
  await expect(inspector).toContainText("PermanentJobError");
  await expect(inspector).toContainText(`"sourceId": "${CHAOS_SOURCE_ID}"`);
  await shot(page, "dead-letters-group", testInfo);
  await inspector.getByRole("button", { name: "Close" }).click();

  // Requeue the group while the fault is still set: the dry run counts first, then they run
  // again and die again, under the same fingerprint.
  await groups.getByRole("button", { name: "Requeue group…" }).click();
  const dialog = page.getByRole("dialog", { name: "Requeue dead letters" });
  await expect(dialog.getByTestId("dry-run-count")).toContainText(
    `Dry run: ${PROBES} of ${PROBES} matching dead letters would be requeued`,
  );
  await shot(page, "dead-letters-confirm", testInfo);
  await dialog.getByRole("button", { name: `Requeue ${PROBES}` }).click();
  await expect(page.locator("main").getByRole("status")).toContainText(
    `Requeued ${PROBES} of ${PROBES}`,
  );
  // Wait until every requeued probe has run and died again (requeues are spread 10 a second, so
  // the group's count alone can still show the old 3 before they left, or 1 of them back).
  await expect
    .poll(
      async () => {
        const back = await Promise.all(
          set.probeIds.map(async (id: string) => {
            const res = await page.request.get(`/api/dead-letters/${id}`);
            return res.ok() && (await res.json()).requeues >= 1;
          }),
        );
        return back.every(Boolean);
      },
      { timeout: 30_000 },
    )
    .toBe(true);
  await expect(groups.getByTestId("group-count")).toHaveText(String(PROBES), { timeout: 30_000 });

  // Fix the cause, then requeue the group: the count drops and nothing comes back.
  await chaos.clear(page, CHAOS_SOURCE_ID);
  await groups.getByRole("button", { name: "Requeue group…" }).click();
  await expect(dialog.getByTestId("dry-run-count")).toContainText(
    `Dry run: ${PROBES} of ${PROBES}`,
  );
  await dialog.getByRole("button", { name: `Requeue ${PROBES}` }).click();
  await expect(page.getByText("No dead letters match.")).toBeVisible({ timeout: 15_000 });
  // Leaving the dead letters is not running: each probe must have been claimed a third time
  // (its first run, the requeue under the fault, this one) and have finished without failing
  // (completing a job deletes it): done, 3 claims, still 2 failures. Requeued jobs are due at
  // once, 10 a second.
  await expect
    .poll(
      async () => {
        const res = await page.request.get(`/api/chaos?probes=${set.probeIds.join(",")}`);
        return res.ok() ? (await res.json()).probes : `HTTP ${res.status()}`;
      },
      { timeout: 30_000 },
    )
    .toEqual(set.probeIds.map((id) => ({ id, state: "done", claims: 3, failures: 2 })));
  await expect(page.getByTestId("dlq-depth")).toHaveText("0");
  const left = await page.request.get(`/api/dead-letters/groups?source=${CHAOS_SOURCE_ID}`);
  expect((await left.json()).depth).toBe(0);
  await shot(page, "dead-letters-empty", testInfo);

  // Every action is in the audit log, by the logged-in admin, dry runs included.
  await page.goto("/audit");
  await page.getByLabel("Action").selectOption("dead_letters.requeue");
  const audit = page.getByRole("table", { name: "Audit log" }).locator("tbody tr");
  await expect(audit).toHaveCount(4);
  await expect(audit.first()).toContainText("admin");
  await expect(audit.filter({ hasText: "dry run" })).toHaveCount(2);
  await page.getByLabel("Action").selectOption("");
  await expect(page.getByRole("table", { name: "Audit log" })).toContainText("chaos.set");
  await shot(page, "audit", testInfo);
});

test("a source's recurring job that died and was made again is resolved by one click", async ({
  page,
}, testInfo) => {
  test.setTimeout(120_000);
  // A simulator feed no other spec breaks: its one recurring fetch job (source + collector) dies
  // under a permanent fault; resuming the source syncs the frontier, which makes a new job with
  // the same key. Requeueing the dead one can then only resolve it, in one click.
  const SOURCE = "padma-rdf";
  await login(page, "/dead-letters");
  await chaos.set(page, SOURCE);
  await adminPost(page, `/api/sources/${SOURCE}/fetch-now`, {});
  const depth = async () =>
    (await (await page.request.get(`/api/dead-letters/groups?source=${SOURCE}`)).json()).depth;
  await expect.poll(depth, { timeout: 30_000 }).toBe(1);
  await chaos.clear(page, SOURCE);
  await adminPost(page, `/api/sources/${SOURCE}/pause`, {});
  await adminPost(page, `/api/sources/${SOURCE}/resume`, {});

  await page.getByLabel("Source").fill(SOURCE);
  const groups = await groupRow(page);
  await expect(groups.getByTestId("group-count")).toHaveText("1", { timeout: 30_000 });
  await groups.getByRole("button", { name: "Requeue group…" }).click();
  const dialog = page.getByRole("dialog", { name: "Requeue dead letters" });
  await expect(dialog.getByTestId("dry-run-superseded")).toContainText(
    /1 would be resolved, not requeued: already queued as job \d+/,
  );
  await shot(page, "dead-letters-resolve", testInfo);
  await dialog.getByRole("button", { name: "Resolve 1" }).click();
  await expect(page.locator("main").getByRole("status")).toContainText(
    /Requeued 0 of 1; 1 resolved \(already queued as job \d+\)/,
  );
  await expect(page.getByText("No dead letters match.")).toBeVisible({ timeout: 15_000 });
  expect(await depth()).toBe(0);

  // Audited, with the job that holds the key.
  const audit = await page.request.get("/api/audit?action=dead_letters.requeue");
  expect(JSON.stringify(await audit.json())).toMatch(/superseded/);
});

test("admin actions are refused without a login", async ({ page }) => {
  const res = await page.request.post("/api/dead-letters/requeue", {
    data: { filter: { source: CHAOS_SOURCE_ID } },
    headers: { origin: E2E_BASE_URL },
  });
  expect([401, 403]).toContain(res.status());
});
