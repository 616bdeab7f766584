import { expect, test } from "@playwright/test";
import { simulator } from "./fixtures/simulator";
import { STORIES } from "./fixtures/stories";

test("the Stories page shows a story-api source's copy, catch-up, webhooks and notifications", async ({
  page,
}, testInfo) => {
  const dialogs: string[] = [];
  page.on("dialog", (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  // A refused delivery that names no source, with a hostile name: other specs refuse deliveries
  // too, so this one is sent last before the page is read, and the row shows its detail.
  const hostile = await page.request.post(
    `/api/webhooks/stories?source=${encodeURIComponent("<script>alert(1)</script>")}`,
    { data: "{}", headers: { "content-type": "application/json" } },
  );
  expect(hostile.status()).toBe(404);
  await page.goto("/");
  await page
    .getByRole("navigation", { name: "Dashboard" })
    .getByRole("link", { name: "Stories" })
    .click();
  await expect(page).toHaveURL(/\/stories$/);
  await expect(page.getByRole("heading", { level: 1, name: "Stories" })).toBeVisible();
  await expect(page.getByRole("link", { name: "Stories" })).toHaveAttribute("aria-current", "page");

  const source = page.getByRole("region", { name: STORIES.name });
  await expect(source.getByRole("heading", { level: 2, name: STORIES.name })).toBeVisible();
  await expect(source.locator("[data-health]")).toHaveAttribute("data-health", "caught_up");
  await expect(source.locator("[data-health]")).toHaveText(/^caught up \d+(\.\d)? (s|min) ago$/);
  await expect(source).toContainText("snapshot mode · 2 secrets (rotation)");

  // Per ticker: open, closed, and whether its one-time load happened.
  const tickers = source.getByRole("table");
  await expect(tickers.getByRole("columnheader")).toHaveText([
    "Ticker",
    "Open",
    "Closed",
    "Loaded",
  ]);
  const acme = tickers.getByRole("row", { name: /^ACME/ });
  await expect(acme.getByRole("cell")).toHaveText([
    String(STORIES.open.ACME),
    String(STORIES.closed.ACME),
    /ago$/,
  ]);
  const brk = tickers.getByRole("row", { name: /^BRK\.B/ });
  await expect(brk.getByRole("cell")).toHaveText([
    String(STORIES.open["BRK.B"]),
    String(STORIES.closed["BRK.B"]),
    "pending (one-time load)",
  ]);

  const tile = (name: string) => source.getByRole("region", { name, exact: true });
  await expect(tile("Stories").getByTestId("value")).toHaveText("4 open");
  await expect(tile("Stories")).toContainText("3 closed");
  const webhooks = tile("Webhook deliveries · 24 h");
  await expect(webhooks.getByTestId("value")).toHaveText(String(STORIES.verified));
  await expect(webhooks.getByTestId("webhook-split")).toHaveText(
    `${STORIES.verified - STORIES.replays} first · ${STORIES.replays} replays`,
  );
  await expect(webhooks).toContainText(`last hour, ${STORIES.recentEvents} events`);
  const rejected = tile("Rejected deliveries");
  await expect(rejected.getByTestId("value")).toHaveText("4");
  await expect(rejected).toHaveAttribute("data-level", "red");
  await expect(rejected.locator('[data-reason="bad_signature"]')).toContainText("bad_signature 3");
  await expect(rejected.locator('[data-reason="stale_timestamp"]')).toContainText(
    "stale_timestamp 1",
  );
  await expect(tile("Missed webhooks").getByTestId("value")).toHaveText(
    String(STORIES.missedWebhooks),
  );
  await expect(tile("Unlisted events").getByTestId("value")).toHaveText(
    String(STORIES.unlistedEvents),
  );
  await expect(tile("Reloads").getByTestId("value")).toHaveText(String(STORIES.reloads));
  const notifications = tile("Notifications claimed");
  await expect(notifications.getByTestId("value")).toHaveText(String(STORIES.claimed));
  await expect(notifications.getByTestId("notification-split")).toHaveText(
    `${STORIES.sent} sent · ${STORIES.lost} lost`,
  );

  // A refused delivery that named no source, its hostile detail shown as text.
  const unattributed = page.getByTestId("unattributed");
  const unknown = unattributed.locator('tr[data-reason="unknown_source"]');
  // The seeded two and the one above, at least.
  await expect(unknown).toContainText(/unknown_source([3-9]|\d\d)/);
  await expect(unknown).toContainText('no enabled story-api source "<script>alert(1)</script>"');
  expect(dialogs).toEqual([]);

  // Secrets are never shown nor sent.
  await expect(page.locator("main")).not.toContainText("whsec_");
  const api = await page.request.get("/api/stories");
  expect(api.status()).toBe(200);
  expect(await api.text()).not.toContain("whsec_");

  const file = testInfo.outputPath("stories.png");
  await page.screenshot({ path: file, fullPage: true });
  await testInfo.attach("stories", { path: file, contentType: "image/png" });
});

test("the simulator's story API, live: signed webhooks and the catch-up keep the copy equal to the API", async ({
  page,
}) => {
  await simulator.stories.step(40);
  const { stats } = await simulator.stories.flush();
  expect(Object.values(stats).reduce((n, s) => n + s.failed, 0)).toBe(0);

  await page.goto("/stories");
  const source = page.getByRole("region", { name: "Story desk (story API)" });
  // The desk keeps publishing on its own: compare with a fresh snapshot until they agree.
  await expect(async () => {
    const truth = await simulator.stories.snapshot();
    await page.reload();
    const rows = source.getByRole("table").getByRole("row");
    for (const ticker of ["ACME", "GLOBX", "INITECH", "UMBRA"]) {
      const open = truth.open.filter((s) => s.ticker === ticker).length;
      await expect(
        rows
          .filter({ hasText: new RegExp(`^${ticker}`) })
          .getByRole("cell")
          .first(),
        `${ticker} open`,
      ).toHaveText(String(open), { timeout: 1_000 });
    }
  }).toPass({ timeout: 45_000 });
  const tile = (name: string) => source.getByRole("region", { name, exact: true });
  await expect(tile("Rejected deliveries").getByTestId("value")).toHaveText("0");
  await expect(tile("Webhook deliveries · 24 h").getByTestId("value")).not.toHaveText("0");
});

test("POST /api/webhooks/stories refuses what it cannot trust, saying why", async ({ request }) => {
  const event = JSON.stringify({ id: "evt_e2e", type: "story.created" });
  const now = String(Math.floor(Date.now() / 1000));
  const forged = await request.post("/api/webhooks/stories?source=story-desk", {
    data: event,
    headers: {
      "content-type": "application/json",
      "webhook-id": "evt_e2e",
      "webhook-timestamp": now,
      "webhook-signature": `v1,${Buffer.alloc(32).toString("base64")}`,
    },
  });
  expect(forged.status()).toBe(401);
  expect(await forged.json()).toMatchObject({ outcome: "rejected", reason: "bad_signature" });

  const huge = await request.post("/api/webhooks/stories?source=story-desk", {
    data: "x".repeat(1024 * 1024 + 1),
    headers: { "content-type": "application/json" },
  });
  expect(huge.status()).toBe(413);
  expect(await huge.json()).toMatchObject({ reason: "too_large" });

  const unsigned = await request.post("/api/webhooks/stories?source=story-desk", { data: event });
  expect(unsigned.status()).toBe(401);
  expect(await unsigned.json()).toMatchObject({ reason: "missing_headers" });
});
