import { expect, type Page, test } from "@playwright/test";

// Debian's headless Chromium has no Bengali font: without the shipped face (components/fonts/
// bengali.ts) every Bangla letter is drawn as the same .notdef box. Two checks that would fail
// then: the face is in document.fonts and loaded, and two Bangla strings of the same length in
// code points measure differently (boxes are all one width; real glyphs and conjuncts are not).

const SHOTS = process.env.WIREWATCH_SHOTS_DIR ?? "/tmp/team16/shots";

/** Widths of `texts` drawn in the page's own font stack, and in one with no Bengali font. */
async function widths(page: Page, texts: string[]) {
  return page.evaluate(async (texts) => {
    const root = getComputedStyle(document.documentElement);
    const stack = root.fontFamily;
    const bengali = root.getPropertyValue("--font-bengali").trim();
    await document.fonts.load(`16px ${stack}`, texts.join(""));
    const measure = (text: string, family: string) => {
      const span = document.createElement("span");
      span.style.font = `400 32px ${family}`;
      span.style.whiteSpace = "pre";
      span.textContent = text;
      document.body.append(span);
      const w = span.getBoundingClientRect().width;
      span.remove();
      return w;
    };
    // The page's stack without the shipped face (its first family): what the page drew before.
    const bare = stack.split(",").slice(1).join(",");
    return {
      bengali,
      faces: [...document.fonts].map((f) => ({
        family: f.family,
        status: f.status,
        range: f.unicodeRange,
      })),
      page: texts.map((t) => measure(t, stack)),
      bare: texts.map((t) => measure(t, bare)),
    };
  }, texts);
}

test("Bangla renders with the shipped font, Latin keeps the system one", async ({
  page,
}, testInfo) => {
  await page.goto("/news?lang=bn");
  await expect(page.getByRole("link", { name: "বাংলা", exact: true })).toBeVisible();
  // Six code points each: as .notdef boxes they would measure the same.
  const a = "কলকাতা"; // ka la ka aa ta aa: plain letters and vowel signs
  const b = "ক্ষত্র"; // ka virama ssa ta virama ra: two conjuncts
  const latin = "Overview · Dead letters";
  const m = await widths(page, [a, b, latin, "বাংলা"]);

  expect(m.bengali, "the --font-bengali variable is on <html>").not.toBe("");
  const family = m.bengali.split(",")[0]?.replace(/['"]/g, "").trim();
  const face = m.faces.filter((f) => f.family.replace(/['"]/g, "") === family);
  expect(face.length, `a face named ${family} in document.fonts`).toBeGreaterThan(0);
  expect(face.some((f) => f.status === "loaded")).toBe(true);
  // Limited to Bengali, so Latin never uses it.
  expect(face[0]?.range).toContain("U+980-9FE");

  const [pageA, pageB, pageLatin] = m.page as [number, number, number];
  const [bareA, bareB, bareLatin] = m.bare as [number, number, number];
  // Without a Bengali font the two strings are boxes of one width (the premise of the check).
  expect(Math.abs(bareA - bareB)).toBeLessThan(1);
  // With the shipped face they are glyphs: different widths, and not the boxes' width.
  // (One of the two may by chance measure close to six boxes: কলকাতা did, within 0.5 px.)
  expect(Math.abs(pageA - pageB)).toBeGreaterThan(4);
  expect(Math.max(Math.abs(pageA - bareA), Math.abs(pageB - bareB))).toBeGreaterThan(4);
  // Latin text measures as it did with the system font alone.
  expect(Math.abs(pageLatin - bareLatin)).toBeLessThan(0.5);
  testInfo.annotations.push({
    type: "widths",
    description: JSON.stringify({ page: m.page, bare: m.bare }),
  });

  await page.screenshot({ path: `${SHOTS}/fonts-news-bn.png`, fullPage: true });
  await testInfo.attach("news-bn", {
    path: `${SHOTS}/fonts-news-bn.png`,
    contentType: "image/png",
  });
});
