import { expect, type Page, test } from "@playwright/test";
import { E2E_PORT } from "./fixtures/app";
import { E2E_SOURCE, XSS_TITLE } from "./fixtures/news";
import { ownServer } from "./fixtures/ownServer";

interface DashboardPage {
  path: string;
  /** The page lists the fixtures' headlines, so the hostile one must show there, as text. */
  headline?: boolean;
  /** What a person does first to see it (a search). */
  show?: (page: Page) => Promise<void>;
}

/** Every dashboard page. Adding a page is one line. */
const DASHBOARD_PAGES: DashboardPage[] = [
  { path: "/", headline: true },
  { path: "/sources" },
  { path: `/sources/${E2E_SOURCE.id}` },
  { path: "/queues" },
  { path: "/read-path" },
  { path: "/dead-letters" },
  { path: "/items", headline: true, show: (p) => p.getByLabel("Source id").fill(E2E_SOURCE.id) },
  { path: "/repairs" },
  { path: "/dedup" },
  { path: "/meaning" },
  { path: "/costs" },
  { path: "/stories" },
  { path: "/audit" },
  { path: "/login" },
];

/** Records dialogs (an alert() that ran) and CSP violations the browser reports. */
function watch(page: Page) {
  const dialogs: string[] = [];
  const violations: string[] = [];
  page.on("dialog", (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  page.on("console", (message) => {
    const text = message.text();
    if (/Content Security Policy|Refused to (execute|load|apply|evaluate)/i.test(text)) {
      violations.push(text);
    }
  });
  page.on("pageerror", (error) => violations.push(`page error: ${error.message}`));
  return { dialogs, violations };
}

const CSP = /script-src 'self' 'nonce-([A-Za-z0-9+/=]+)' 'strict-dynamic';/;

test.describe("security headers", () => {
  test("pages: a fresh script nonce each time, no eval, no framing, nosniff", async ({
    request,
  }) => {
    const nonces = [];
    for (let i = 0; i < 2; i++) {
      const response = await request.get("/");
      const headers = response.headers();
      const csp = headers["content-security-policy"] ?? "";
      expect(csp).toMatch(CSP);
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).toContain("object-src 'none'");
      expect(csp).not.toContain("unsafe-eval");
      expect(csp).not.toMatch(/script-src[^;]*'unsafe-inline'/);
      expect(headers).toMatchObject({
        "x-content-type-options": "nosniff",
        "x-frame-options": "DENY",
        "referrer-policy": "strict-origin-when-cross-origin",
      });
      expect(headers["cache-control"]).toContain("no-store");
      nonces.push(csp.match(CSP)?.[1]);
      // The nonce Next.js put on its scripts is this response's.
      expect(await response.text()).toContain(`nonce="${csp.match(CSP)?.[1]}"`);
    }
    expect(nonces[0]).not.toBe(nonces[1]);
  });

  test("API answers: nothing loads, nothing frames, nothing is stored", async ({ request }) => {
    for (const url of ["/api/health", "/api/auth/session"]) {
      const headers = (await request.get(url)).headers();
      expect(headers["content-security-policy"]).toBe("default-src 'none'; frame-ancestors 'none'");
      expect(headers["cache-control"]).toContain("no-store");
      expect(headers["x-content-type-options"]).toBe("nosniff");
    }
    expect((await request.get("/login")).headers()["cache-control"]).toContain("no-store");
  });

  test("a cross-site or non-JSON mutation is refused", async ({ request }) => {
    const crossSite = await request.post("/api/auth/logout", {
      headers: { origin: "https://evil.example", "content-type": "application/json" },
      data: "{}",
    });
    expect(crossSite.status()).toBe(403);
    const form = await request.post("/api/auth/logout", {
      headers: { origin: `http://localhost:${E2E_PORT}`, "content-type": "text/plain" },
      data: "x",
    });
    expect(form.status()).toBe(415);
  });
});

test.describe("the hostile headline is text on every dashboard page", () => {
  for (const { path: pagePath, headline, show } of DASHBOARD_PAGES) {
    test(pagePath, async ({ page }) => {
      const { dialogs, violations } = watch(page);
      const response = await page.goto(pagePath);
      expect(response?.status()).toBe(200);
      await page.waitForLoadState("load");
      await show?.(page);
      if (headline) {
        const hostile = page.locator("main").getByText(XSS_TITLE, { exact: true }).first();
        await expect(hostile).toBeVisible();
        expect(await hostile.evaluate((el) => el.textContent)).toBe(XSS_TITLE);
      } else {
        await expect(page.locator("main h1").first()).toBeVisible();
      }
      // Let polling panels render a round, then: no <img src=x>, nothing ran, nothing refused.
      await page.waitForTimeout(1_000);
      await expect(page.locator('img[src="x"]')).toHaveCount(0);
      expect(dialogs).toEqual([]);
      expect(violations).toEqual([]);
    });
  }
});

test.describe("without ADMIN_PASSWORD on the embedded default", () => {
  const base = ownServer(E2E_PORT + 11);

  test("the header says admin actions work from this machine only", async ({ page }) => {
    const { dialogs, violations } = watch(page);
    await page.goto(`${base}/`);
    await expect(page.getByTestId("admin-status")).toHaveText(
      "Admin actions from this machine only",
    );
    await page.goto(`${base}/login`);
    await expect(page.locator("main")).toContainText("no ADMIN_PASSWORD set");
    expect(dialogs).toEqual([]);
    expect(violations).toEqual([]);
  });
});

test.describe("with ADMIN_PASSWORD", () => {
  const PASSWORD = "e2e-security-password";
  const base = ownServer(E2E_PORT + 12, { env: { ADMIN_PASSWORD: PASSWORD } });
  test("log in through /login, see the status, log out", async ({ page, context }) => {
    const { dialogs, violations } = watch(page);
    await page.goto(`${base}/`);
    const status = page.getByTestId("admin-status");
    await expect(status).toHaveText("Log in");
    await status.getByRole("link", { name: "Log in" }).click();
    await expect(page).toHaveURL(`${base}/login`);

    await page.getByLabel("Password").fill("not the password");
    await page.getByRole("button", { name: "Log in" }).click();
    await expect(page.locator("main [role=alert]")).toHaveText("Wrong password.");

    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Log in" }).click();
    await expect(page).toHaveURL(`${base}/`);
    await expect(status).toContainText("Admin: logged in");

    const [cookie] = (await context.cookies(base)).filter((c) => c.name === "wirewatch_admin");
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Strict", secure: false });
    expect(cookie?.value).not.toContain(PASSWORD);
    const session = await page.request.get(`${base}/api/auth/session`);
    expect(await session.json()).toMatchObject({ loggedIn: true, adminActions: true });

    await status.getByRole("button", { name: "Log out" }).click();
    await expect(status).toHaveText("Log in");
    // The old cookie no longer opens a session, even if a browser kept it.
    const again = await fetch(`${base}/api/auth/session`, {
      headers: { cookie: `wirewatch_admin=${cookie?.value}` },
    });
    expect(await again.json()).toMatchObject({ loggedIn: false });
    expect(dialogs).toEqual([]);
    expect(violations).toEqual([]);
  });
});
