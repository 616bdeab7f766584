import { mkdirSync } from "node:fs";
import { type Browser, expect, type Page, test } from "@playwright/test";

// The public reader page /news in Chromium, with JavaScript on and off: stories from the read
// model the e2e server builds as its line ingests the simulator, a language filter and the next
// page by plain links, and each story's lang attribute. Screenshots at a desktop's and a phone's
// width go to SHOTS.

const SHOTS = process.env.WIREWATCH_SHOTS_DIR || "/tmp/team16/shots";

/**
 * Waits until the read model holds more than a page of stories: the server's line ingests the
 * simulator's backlog and the builder makes a version every 2 s once the index stage has stories.
 */
async function waitForStories(page: Page): Promise<void> {
  await expect
    .poll(
      async () => {
        const res = await page.request.get("/api/news?limit=20");
        if (res.status() !== 200) return `status ${res.status()}`;
        const body = (await res.json()) as { items: unknown[]; nextCursor: string | null };
        return body.nextCursor ? "more than a page" : `${body.items.length} stories`;
      },
      { timeout: 200_000, intervals: [2_000] },
    )
    .toBe("more than a page");
}

/** Nothing on the page reaches past the screen's right edge (no sideways scrolling). */
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

const stories = (page: Page) => page.locator("main ol > li");
const filters = (page: Page) => page.getByRole("navigation", { name: "Filters" });

/** The first page, a language filter, the next page: every step a link, no script needed. */
async function walk(page: Page, label: string): Promise<void> {
  await page.goto("/news", { timeout: 60_000 });
  await expect(page.getByRole("heading", { level: 1, name: "News" })).toBeVisible();
  await expect(stories(page)).toHaveCount(20);
  const langs = await stories(page).evaluateAll((items) =>
    items.map((i) => i.getAttribute("lang")),
  );
  expect(
    langs.every((l) => l === null || /^[a-z]{2,3}$/.test(l)),
    langs.join(),
  ).toBe(true);
  const firstIds = await stories(page).locator("h2").allTextContents();

  // The next page: another 20 stories (or the rest), none of the first page's.
  await page.getByRole("link", { name: "Next page →" }).click();
  await expect(page).toHaveURL(/\/news\?cursor=[A-Za-z0-9_-]+$/);
  await expect(stories(page).first()).toBeVisible();
  const nextIds = await stories(page).locator("h2").allTextContents();
  expect(nextIds.filter((t) => firstIds.includes(t))).toEqual([]);
  await expect(page.getByRole("link", { name: "← First page" })).toBeVisible();

  // A filter: English only; the link says it is the current one.
  await filters(page).getByRole("link", { name: "English", exact: true }).click();
  await expect(page).toHaveURL(/\/news\?lang=en$/);
  await expect(filters(page).getByRole("link", { name: "English", exact: true })).toHaveAttribute(
    "aria-current",
    "page",
  );
  const english = await stories(page).evaluateAll((items) =>
    items.map((i) => i.getAttribute("lang")),
  );
  expect(
    english.every((l) => l === "en"),
    english.join(),
  ).toBe(true);

  // A topic link keeps the language.
  await filters(page).getByRole("link", { name: "politics", exact: true }).click();
  await expect(page).toHaveURL(/\/news\?category=politics&lang=en$/);
  await expect(page.getByRole("heading", { level: 1, name: "News" })).toBeVisible();
  await page.goto(`/news?lang=bn`);
  await expect(filters(page).getByRole("link", { name: "বাংলা", exact: true })).toHaveAttribute(
    "aria-current",
    "page",
  );
  const bangla = await stories(page).evaluateAll((items) =>
    items.map((i) => i.getAttribute("lang")),
  );
  expect(
    bangla.every((l) => l === "bn"),
    `${label}: ${bangla.join()}`,
  ).toBe(true);
}

async function shots(browser: Browser, javaScriptEnabled: boolean): Promise<void> {
  const suffix = javaScriptEnabled ? "" : "-nojs";
  for (const width of [1280, 390]) {
    const context = await browser.newContext({
      javaScriptEnabled,
      viewport: { width, height: 900 },
    });
    const page = await context.newPage();
    await page.goto("/news");
    await expect(stories(page)).toHaveCount(20);
    expect(await overflowing(page)).toEqual([]);
    await page.screenshot({ path: `${SHOTS}/news-${width}${suffix}.png`, fullPage: true });
    await context.close();
  }
}

test("the /news page with JavaScript on: stories, a filter, the next page", async ({
  page,
  browser,
}) => {
  test.setTimeout(300_000);
  mkdirSync(SHOTS, { recursive: true });
  const problems: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(m.text());
  });
  page.on("pageerror", (e) => problems.push(e.message));
  await waitForStories(page);
  await walk(page, "js on");
  await shots(browser, true);
  expect(problems.filter((p) => /Content Security Policy|hydrat/i.test(p))).toEqual([]);
});

test("the /news page with JavaScript off: the same by plain links", async ({ browser }) => {
  test.setTimeout(300_000);
  mkdirSync(SHOTS, { recursive: true });
  const context = await browser.newContext({ javaScriptEnabled: false });
  const page = await context.newPage();
  await waitForStories(page);
  await walk(page, "js off");
  await context.close();
  await shots(browser, false);
});
