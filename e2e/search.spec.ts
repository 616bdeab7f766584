import { expect, test } from "@playwright/test";
import { simulator } from "./fixtures/simulator";

// Search by meaning (seed 002: "ask about a topic in your own words and find the relevant
// coverage even if the article never used those words"): a story the wire publishes now, found
// on the Items page by a query that shares no word with its title or summary, with the reason
// shown (a meaning similarity by the shipped model, no lexical rank).

const TITLE = "Floods cut off 41 villages in Sunamganj";
const SUMMARY =
  "Rivers in the district rose past the danger mark overnight; officials opened shelters.";
const QUERY = "heavy rain leaves towns under water";

test("a query in other words finds the story by meaning, and says why", async ({
  page,
  request,
}, testInfo) => {
  // The first load after the server starts waits out the embed stage's start (model loading,
  // the simulator's backlog embedded on a 2-core machine).
  test.setTimeout(180_000);
  const words = (s: string) => new Set(s.toLowerCase().match(/[a-z]+/g));
  const shared = [...words(QUERY)].filter((w) => words(`${TITLE} ${SUMMARY}`).has(w));
  expect(shared, "the query must share no word with the story").toEqual([]);

  await simulator.publish({ outlet: "wire", language: "en", title: TITLE, summary: SUMMARY });
  // Through the stream, the writer, dedup and embed: searchable once its vector is stored.
  await expect
    .poll(
      async () => {
        const res = await request.get(`/api/search?q=${encodeURIComponent(QUERY)}&limit=20`);
        if (!res.ok()) return [];
        const body = (await res.json()) as { hits: { title: string | null }[] };
        return body.hits.map((h) => h.title);
      },
      { timeout: 120_000, intervals: [1_000, 2_000, 5_000] },
    )
    .toContain(TITLE);

  await page.goto("/items", { timeout: 60_000 });
  const box = page.getByTestId("search-box");
  await box.getByLabel("Words or meaning").fill(QUERY);
  await box.getByRole("button", { name: /search/i }).click();
  const results = page.getByTestId("search-results");
  const hit = results.getByTestId("search-hit").filter({ hasText: TITLE });
  await expect(hit).toBeVisible({ timeout: 30_000 });
  // Why it matched: meaning, by the shipped model, with its similarity; no lexical rank.
  const reasons = hit.getByTestId("search-reason");
  await expect(reasons.filter({ hasText: /meaning/i })).toContainText("shipped:use-lite");
  await expect(reasons.filter({ hasText: /lexical #/ })).toHaveCount(0);
  await expect(page.getByTestId("search-model")).toContainText("shipped:use-lite");

  const file = testInfo.outputPath("search-by-meaning.png");
  await page.screenshot({ path: file, fullPage: true });
  await testInfo.attach("search-by-meaning", { path: file, contentType: "image/png" });
});
