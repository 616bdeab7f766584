import { expect, type Page, test } from "@playwright/test";
import { login } from "./fixtures/admin";
import { E2E_BASE_URL } from "./fixtures/app";
import { shots } from "./fixtures/shots";
import { simulator } from "./fixtures/simulator";

/**
 * The browser fetch path (issue 17, part 9) from the dashboard: a site with no feed whose front
 * page is built by a script (the simulator's <outlet>-js pages) is added as a page read in a
 * browser and its headlines arrive, with what each look costs on the source page; the same kind
 * of page read as served finds none, is offered the browser, and the preview renders it once,
 * refusing what a hostile script asks for. Photographed at 1440 px and 390 px.
 */

test.describe.configure({ mode: "serial", timeout: 240_000 });

async function addPage(page: Page, path: string, render: "http" | "browser"): Promise<string> {
  await login(page, "/sources");
  await page.getByText("Add a source", { exact: true }).click();
  await page.getByLabel("Site or feed URL").fill(`${simulator.url()}${path}`);
  await page
    .getByLabel(/Allow private addresses/)
    .first()
    .check();
  await page.getByRole("button", { name: "Find feeds" }).click();
  const found = page.getByRole("region", { name: "Feeds found" });
  await expect(found).toContainText("no_feed", { timeout: 60_000 });
  await found.getByRole("button", { name: "Watch this page for headlines instead" }).click();
  const save = page.getByRole("form", { name: "Save source" });
  await expect(save.getByLabel("Kind")).toHaveValue("page");
  await save.getByLabel("Read the page").selectOption(render);
  await save.getByLabel("Poll every (seconds)").fill("10");
  await save.getByRole("button", { name: "Save source" }).click();
  const saved = save.getByRole("status");
  await expect(saved).toContainText("added");
  const id = ((await saved.getByRole("link").textContent()) ?? "").replace(/^Open /, "");
  await saved.getByRole("link").click();
  return id;
}

test("a script-built page read in a browser: its headlines arrive, and the source page shows the cost", async ({
  page,
}, testInfo) => {
  const id = await addPage(page, "/s/wire-js/", "browser");
  try {
    await expect
      .poll(
        async () => {
          const { source } = await (await page.request.get(`/api/sources/${id}`)).json();
          const browser = source.reading?.modes.find((m: { mode: string }) => m.mode === "browser");
          return browser?.headlinesMedian ?? 0;
        },
        { timeout: 120_000, intervals: [2_000] },
      )
      .toBeGreaterThan(0);
    const reading = page.getByTestId("page-reading");
    await expect(reading).toContainText("Browser (rendered)", { timeout: 15_000 });
    await expect(reading.getByTestId("cpu-browser")).toContainText("ms");
    await expect(page.getByTestId("attempts")).toContainText("ok");
    await shots(page, testInfo, "1-rendered-source");
  } finally {
    await removeSource(page, id);
  }
});

test("the same kind of page read as served finds no headline, is offered the browser, and the preview refuses a hostile script's requests", async ({
  page,
}, testInfo) => {
  await simulator.inject("meridian-js", { kind: "hostile-script" });
  let id = "";
  try {
    id = await addPage(page, "/s/meridian-js/", "http");
    const offer = page.getByTestId("browser-offer");
    await expect(offer).toBeVisible({ timeout: 120_000 });
    await expect(page.getByTestId("reading-costs")).toContainText("HTTP (as served)");
    await shots(page, testInfo, "2-offered");
    await offer.getByRole("button", { name: "Try it in a browser" }).click();
    const preview = page.getByTestId("render-preview");
    await expect(preview).toContainText("As served: 0 headlines", { timeout: 60_000 });
    await expect(preview.getByTestId("rendered-count")).not.toHaveText("0");
    await expect(preview).toContainText("4 refused");
    await shots(page, testInfo, "3-preview");
  } finally {
    await simulator.clear("meridian-js");
    if (id) await removeSource(page, id);
  }
});

/**
 * Removed when done: polled every 10 s (one of them rendered), they would add to the fetch
 * figures and the CPU the later specs judge.
 */
async function removeSource(page: Page, id: string): Promise<void> {
  const res = await page.request.delete(`/api/sources/${encodeURIComponent(id)}`, {
    headers: { origin: E2E_BASE_URL, "content-type": "application/json" },
    data: {},
  });
  expect(res.status(), await res.text()).toBeLessThan(300);
}
