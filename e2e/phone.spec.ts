import { expect, type Page, type TestInfo, test } from "@playwright/test";
import { PAGES } from "@/components/pages";
import { login } from "./fixtures/admin";

// Every dashboard page on a 390 × 844 phone: nothing wider than the screen (wide tables scroll in
// their own box), the navigation folded behind "Menu" and opening, "Log out" in reach.

const SHOTS = process.env.WIREWATCH_SHOTS_DIR ?? "/tmp/team16/shots";
const PHONE = { width: 390, height: 844 };

test.describe.configure({ timeout: 240_000 });
test.use({ viewport: PHONE });

async function pageWidth(page: Page): Promise<number> {
  return page.evaluate(() => document.scrollingElement?.scrollWidth ?? Number.POSITIVE_INFINITY);
}

async function check(page: Page, testInfo: TestInfo, path: string, name: string) {
  await page.goto(path);
  await expect(page.locator("main h1").first()).toBeVisible({ timeout: 30_000 });
  // Let the page's first query answer and its charts lay out before measuring.
  await page.waitForLoadState("networkidle", { timeout: 5_000 }).catch(() => undefined);
  const width = await pageWidth(page);
  const file = `${SHOTS}/phone-${name}.png`;
  await page.screenshot({ path: file, fullPage: true });
  await testInfo.attach(`phone-${name}`, { path: file, contentType: "image/png" });
  expect.soft(width, `${path} is ${width} px wide on a 390 px phone`).toBeLessThanOrEqual(390);
}

/** The first link on `listPath` whose href matches `pattern`, for the detail pages. */
async function firstLink(page: Page, listPath: string, pattern: RegExp): Promise<string | null> {
  await page.goto(listPath);
  await page.waitForLoadState("networkidle", { timeout: 5_000 }).catch(() => undefined);
  const hrefs = await page
    .locator("main a[href]")
    .evaluateAll((as) => as.map((a) => a.getAttribute("href") ?? ""));
  return hrefs.find((h) => pattern.test(h)) ?? null;
}

test("every dashboard page fits a 390 px phone, the menu opens and Log out is in reach", async ({
  page,
}, testInfo) => {
  await login(page, "/");

  // The header: the menu button and Log out on screen, the links hidden until the menu opens.
  const menu = page.getByRole("button", { name: "Menu" });
  await expect(menu).toBeVisible();
  const nav = page.getByRole("navigation", { name: "Dashboard" });
  await expect(nav).toBeHidden();
  const logout = page.getByRole("button", { name: "Log out" });
  await expect(logout).toBeVisible();
  const box = await logout.boundingBox();
  expect(box && box.x + box.width).toBeLessThanOrEqual(PHONE.width);
  await menu.click();
  await expect(nav).toBeVisible();
  await expect(nav.getByRole("link")).toHaveCount(PAGES.length);
  await page.screenshot({ path: `${SHOTS}/phone-menu-open.png` });
  await testInfo.attach("phone-menu-open", {
    path: `${SHOTS}/phone-menu-open.png`,
    contentType: "image/png",
  });
  // Following a link closes the menu.
  await nav.getByRole("link", { name: "Queues" }).click();
  await expect(page).toHaveURL(/\/queues$/);
  await expect(nav).toBeHidden();

  for (const p of PAGES) {
    await check(page, testInfo, p.href, p.href === "/" ? "overview" : p.href.slice(1));
  }
  await check(page, testInfo, "/news", "news");

  // The detail pages the lists link to, where there is one yet.
  const details: [string, RegExp][] = [
    ["/items", /^\/items\/[0-9a-f]{64}$/],
    ["/sources", /^\/sources\/[^/?#]+$/],
    ["/dedup", /^\/dedup\/clusters\/\d+$/],
  ];
  for (const [list, pattern] of details) {
    const href = await firstLink(page, list, pattern);
    if (href) await check(page, testInfo, href, href.slice(1).replace(/\//g, "-").slice(0, 40));
  }
});
