import { readFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import {
  decideLanguage,
  detectItemLanguage,
  type LatinDetector,
  loadLatinDetector,
  scriptMajority,
} from "./language";
import type { ExtractionLanguage } from "./types";

// The detector on the fixtures (testdata/languages.jsonl, written for this: short, long, mixed
// Bangla/English, other languages). "tune" rows set the English margin; "heldout" rows were
// written afterwards and not looked at before the choice (decision 028 has both sets' figures).

interface Fixture {
  set: "tune" | "heldout";
  group: "short" | "long" | "mixed" | "other";
  lang: ExtractionLanguage;
  code?: string;
  text: string;
}

function languageFixtures(): Fixture[] {
  return readFileSync(path.join(import.meta.dirname, "testdata/languages.jsonl"), "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Fixture);
}

const fixtures = languageFixtures();
let latin: LatinDetector;
beforeAll(async () => {
  latin = await loadLatinDetector();
}, 30_000);

function accuracy(rows: Fixture[], detect: (text: string) => ExtractionLanguage) {
  const wrong = rows.filter((r) => detect(r.text) !== r.lang);
  return { share: 1 - wrong.length / rows.length, wrong: wrong.map((r) => `${r.lang}: ${r.text}`) };
}

describe("language detection on the fixtures", () => {
  it("has the groups and sizes the decision's figures are over", () => {
    const count = (g: string) => fixtures.filter((f) => f.group === g).length;
    expect([count("short"), count("long"), count("mixed"), count("other")]).toEqual([
      110, 70, 75, 80,
    ]);
    expect(fixtures.filter((f) => f.set === "heldout")).toHaveLength(116);
  });

  // Measured (eld large): short 110/110, long 70/70, mixed 75/75, other 79/80 (the one missed:
  // "L'inflation ralentit en octobre", English by the prior). Floors a little under, so a
  // change that loses two or three texts of a group fails here.
  const FLOORS = { short: 0.97, long: 0.98, mixed: 0.97, other: 0.95 } as const;
  for (const [group, floor] of Object.entries(FLOORS)) {
    it(`${group}: accuracy at least ${floor}`, () => {
      const rows = fixtures.filter((f) => f.group === group);
      const { share, wrong } = accuracy(rows, (t) => decideLanguage(t, latin).language);
      expect(wrong.length <= rows.length * (1 - floor) ? [] : wrong).toEqual([]);
      expect(share).toBeGreaterThanOrEqual(floor);
    });
  }

  it("beats the script-majority baseline where the baseline fails: mixed lines and other languages", () => {
    for (const group of ["mixed", "other"] as const) {
      const rows = fixtures.filter((f) => f.group === group);
      const ours = accuracy(rows, (t) => decideLanguage(t, latin).language).share;
      const base = accuracy(rows, scriptMajority).share;
      // Baseline measured: mixed 66/75 (0.88), other 26/80 (0.33).
      expect(ours - base).toBeGreaterThan(group === "other" ? 0.5 : 0.08);
    }
  });

  it("detectItemLanguage agrees with decideLanguage on every fixture", async () => {
    for (const f of fixtures) {
      expect(await detectItemLanguage(f.text)).toBe(decideLanguage(f.text, latin).language);
    }
  });
});

describe("the rules", () => {
  it("counts words, not letters: a Bangla line full of English names is Bangla", () => {
    const text = "Square Pharmaceuticals, Beximco Pharma ও Renata-র শেয়ারে দরপতন";
    expect(scriptMajority(text)).toBe("en");
    expect(decideLanguage(text, latin)).toMatchObject({ language: "bn", by: "script" });
  });

  it("leaves quotations out while words stand outside them, both ways", () => {
    expect(decideLanguage("মেসি বললেন, 'This is my last World Cup'", latin).language).toBe("bn");
    expect(
      decideLanguage("Students chant 'আমার সোনার বাংলা' at the rally in Dhaka", latin).language,
    ).toBe("en");
    // Nothing but a name outside the quotes: the quoted words are read by the detector.
    expect(decideLanguage("Yunus: 'Reform is our priority'", latin).language).toBe("en");
  });

  it("calls Bengali script with ৰ or ৱ Assamese: other", () => {
    expect(decideLanguage("অসমৰ মুখ্যমন্ত্ৰীয়ে নতুন আঁচনি ঘোষণা কৰিলে", latin)).toMatchObject({
      language: "other",
      by: "assamese",
    });
  });

  it("tickers and figures weigh nothing; Bengali digits alone are Bangla; else the tag, else other", () => {
    expect(decideLanguage("DSE: GP ৫% বেড়েছে", latin).language).toBe("bn");
    expect(decideLanguage("$AAPL up 2% premarket; NASDAQ: MSFT flat", latin).language).toBe("en");
    expect(decideLanguage("১২৩", latin)).toMatchObject({ language: "bn", by: "digits" });
    expect(decideLanguage("2024 — 17.5%", latin, { hint: "en-US" })).toMatchObject({
      language: "en",
      by: "hint",
    });
    expect(decideLanguage("2024", latin, { hint: "fr" })).toMatchObject({ language: "other" });
    expect(decideLanguage("", latin)).toMatchObject({ language: "other", by: "none" });
  });

  it("does not let the tag overrule the text", () => {
    expect(decideLanguage("সিলেটে বন্যা", latin, { hint: "en-US" }).language).toBe("bn");
    expect(decideLanguage("Floods hit Sylhet", latin, { hint: "bn" }).language).toBe("en");
  });

  it("calls Latin text another language only when the detector puts it clearly ahead of English", () => {
    const ahead: LatinDetector = () => ({ top: "es", englishShare: 0.6 });
    const near: LatinDetector = () => ({ top: "es", englishShare: 0.9 });
    expect(decideLanguage("words", ahead)).toMatchObject({ language: "other", by: "detector" });
    expect(decideLanguage("words", near)).toMatchObject({ language: "en", by: "prior" });
    expect(decideLanguage("words", () => ({ top: null, englishShare: 0 }))).toMatchObject({
      language: "en",
      by: "prior",
    });
  });

  it("other scripts are other by script, Hindi with English names too", () => {
    expect(decideLanguage("Sensex 800 अंक उछला, Nifty नए रिकॉर्ड पर", latin)).toMatchObject({
      language: "other",
      by: "script",
    });
    expect(decideLanguage("上海股市上涨", latin).language).toBe("other");
  });
});
