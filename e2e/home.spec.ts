import path from "node:path";
import { expect, type Locator, test } from "@playwright/test";
import { e2eDataDir } from "./fixtures/app";
import { E2E_SOURCE, EXPECTED_ROWS, XSS_TITLE } from "./fixtures/news";

test("the home page lists the latest rows with version, state, origin and audit count", async ({
  page,
}, testInfo) => {
  const dialogs: string[] = [];
  page.on("dialog", (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });

  const response = await page.goto("/");
  expect(response?.status()).toBe(200);
  expect(response?.headers()).toMatchObject({
    "x-content-type-options": "nosniff",
    "referrer-policy": "strict-origin-when-cross-origin",
  });
  // Scripts only with this response's nonce (proxy.ts; e2e/security.spec.ts checks the rest).
  expect(response?.headers()["content-security-policy"]).toMatch(
    /script-src 'self' 'nonce-[A-Za-z0-9+/=]+' 'strict-dynamic';.*frame-ancestors 'none'/,
  );
  await page.waitForLoadState("networkidle");

  // The simulator's news is on the page too; the fixture rows are E2E_SOURCE's (kept the
  // newest by e2e/prepare.ts).
  const rows = page.locator("table.news tbody tr").filter({ hasText: E2E_SOURCE.name });
  await expect(rows).toHaveCount(EXPECTED_ROWS.length);
  const headers = await page.locator("table.news thead th").allTextContents();
  const column = (rows: Locator, name: string) => {
    const index = headers.indexOf(name);
    expect(index, `column "${name}" in ${headers.join(", ")}`).toBeGreaterThanOrEqual(0);
    return rows.locator(`td:nth-child(${index + 1})`);
  };

  // Newest update first; each column checked for every row, in order.
  await expect(column(rows, "Headline")).toHaveText(EXPECTED_ROWS.map((r) => r.title));
  await expect(column(rows, "Source")).toHaveText(EXPECTED_ROWS.map(() => E2E_SOURCE.name));
  await expect(column(rows, "Version")).toHaveText(EXPECTED_ROWS.map((r) => `v${r.version}`));
  await expect(column(rows, "State")).toHaveText(EXPECTED_ROWS.map((r) => r.state));
  await expect(column(rows, "Origin")).toHaveText(EXPECTED_ROWS.map((r) => r.origin));
  await expect(column(rows, "Audit")).toHaveText(EXPECTED_ROWS.map((r) => String(r.audit)));

  // The hostile headline is text, not markup: no <img> was made and nothing ran.
  const hostile = column(rows, "Headline").filter({ hasText: XSS_TITLE });
  await expect(hostile).toHaveCount(1);
  expect(await hostile.evaluate((cell) => cell.textContent)).toBe(XSS_TITLE);
  await expect(page.locator("main img")).toHaveCount(0);
  expect(dialogs).toEqual([]);

  // Sources and their health: the e2e source has no collector running, and says so.
  const source = page.locator(`table.sources tr[data-source-id="${E2E_SOURCE.id}"]`);
  await expect(source).toHaveCount(1);
  // Starting for 1.5 keepalive intervals (22.5 s) after it was added, then stalled.
  await expect(source.locator(".badge")).toHaveText("stalled", { timeout: 30_000 });
  await expect(source).toContainText("no collector has reported yet");

  const screenshot = testInfo.outputPath("home.png");
  await page.screenshot({ path: screenshot, fullPage: true });
  await testInfo.attach("home page", { path: screenshot, contentType: "image/png" });
});

test("GET /api/health is 200 on the embedded database", async ({ request }) => {
  const response = await request.get("/api/health");
  expect(response.status()).toBe(200);
  expect(response.headers()["cache-control"]).toContain("no-store");
  // Ingestion runs in this server (the embedded default); no database address is named.
  const body = await response.json();
  expect(body).toMatchObject({
    status: "ok",
    database: { kind: "pglite" },
    ingestion: { mode: "inline", state: "running" },
  });
  expect(JSON.stringify(body)).not.toContain(path.resolve(e2eDataDir()));
});
