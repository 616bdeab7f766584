import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import {
  detectLanguage,
  normalizeLanguage,
  removeSearchDocs,
  SearchDocInputError,
  storeSearchDocs,
} from "./docs";

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

const seen = new Date("2026-12-01T10:00:00Z");
const doc = (
  entryKey: string,
  title: string,
  summary: string | null,
  lang: string | null = null,
) => ({
  entryKey,
  itemVersion: 1,
  sourceId: "wire",
  lang,
  firstSeenAt: seen,
  title,
  summary,
});

/** Keys of the documents matching q as search parses it (either configuration). */
async function matching(q: string): Promise<string[]> {
  const rows = await db.prisma.$queryRaw<{ entry_key: string }[]>`
    SELECT entry_key FROM search_docs
    WHERE tsv @@ (websearch_to_tsquery('english', ${q}) || websearch_to_tsquery('simple', ${q}))
    ORDER BY entry_key`;
  return rows.map((r) => r.entry_key);
}

describe("detectLanguage", () => {
  it("reads the script: Bengali, Latin, neither; a Bangla headline with a Latin name is Bangla", () => {
    expect(detectLanguage("সিলেটে বন্যায় লাখো মানুষ পানিবন্দী")).toBe("bn");
    expect(detectLanguage("ঢাকায় Apple-এর নতুন দোকান")).toBe("bn");
    expect(detectLanguage("Port strike halts shipments")).toBe("en");
    expect(detectLanguage("১২৩ 456 —")).toBeNull();
    expect(detectLanguage("")).toBeNull();
    expect(detectLanguage(null)).toBeNull();
  });

  it("normalises a feed's tag to its primary subtag", () => {
    expect(normalizeLanguage("en-US")).toBe("en");
    expect(normalizeLanguage("bn_BD")).toBe("bn");
    expect(normalizeLanguage("BEN")).toBe("bn");
    expect(normalizeLanguage(" ")).toBeNull();
    expect(normalizeLanguage("x1")).toBeNull();
  });
});

describe("storeSearchDocs", () => {
  it("stems English and keeps Bangla words whole, title and summary both searchable", async () => {
    await storeSearchDocs(db, [
      doc(
        "en1",
        "Dockworkers strike at Chittagong port",
        "Shipments halted for a second day.",
        "en-GB",
      ),
      doc("bn1", "চট্টগ্রাম বন্দরে শ্রমিকদের ধর্মঘট", "দ্বিতীয় দিনের মতো পণ্য খালাস বন্ধ।"),
      doc("xx1", "১২৩", null),
    ]);
    expect(await matching("strikes")).toEqual(["en1"]); // stemmed: strikes → strike
    expect(await matching("shipment halting")).toEqual(["en1"]);
    expect(await matching("ধর্মঘট")).toEqual(["bn1"]);
    expect(await matching("বন্ধ")).toEqual(["bn1"]); // from the summary
    expect(await matching("ধর্ম")).toEqual([]); // whole words, not parts of them
    const langs = await db.prisma.$queryRaw<{ entry_key: string; lang: string | null }[]>`
      SELECT entry_key, lang FROM search_docs ORDER BY entry_key`;
    expect(langs).toEqual([
      { entry_key: "bn1", lang: "bn" },
      { entry_key: "en1", lang: "en" },
      { entry_key: "xx1", lang: null },
    ]);
  });

  it("weighs the title above the summary", async () => {
    await storeSearchDocs(db, [
      doc("w1", "Floods in Sylhet", "Rain goes on.", "en"),
      doc("w2", "Rain goes on", "Floods in Sylhet.", "en"),
    ]);
    const rows = await db.prisma.$queryRaw<{ entry_key: string }[]>`
      SELECT entry_key FROM search_docs
      WHERE entry_key IN ('w1', 'w2') AND tsv @@ websearch_to_tsquery('english', 'floods')
      ORDER BY ts_rank_cd(tsv, websearch_to_tsquery('english', 'floods')) DESC`;
    expect(rows.map((r) => r.entry_key)).toEqual(["w1", "w2"]);
  });

  it("replaces a document only with the same or a newer item version", async () => {
    await storeSearchDocs(db, [{ ...doc("v1", "Budget passed", null, "en"), itemVersion: 3 }]);
    expect(
      await storeSearchDocs(db, [{ ...doc("v1", "Budget rejected", null, "en"), itemVersion: 2 }]),
    ).toBe(0);
    expect(await matching("passed")).toContain("v1");
    await storeSearchDocs(db, [
      { ...doc("v1", "Budget delayed", null, "en"), itemVersion: 5 },
      { ...doc("v1", "Budget withdrawn", null, "en"), itemVersion: 4 },
    ]);
    expect(await matching("delayed")).toEqual(["v1"]);
    expect(await matching("passed")).toEqual([]);
  });

  it("refuses a row it cannot store, naming it, and stores nothing of the call", async () => {
    await expect(
      storeSearchDocs(db, [
        doc("ok", "Fine", null),
        { ...doc("bad", "x", null), itemVersion: 1.5 },
      ]),
    ).rejects.toThrow(/"bad": item version 1.5/);
    await expect(storeSearchDocs(db, [doc("", "x", null)])).rejects.toBeInstanceOf(
      SearchDocInputError,
    );
    expect(await matching("fine")).toEqual([]);
  });

  it("removes documents by key", async () => {
    expect(await removeSearchDocs(db, ["en1", "nope"])).toBe(1);
    expect(await matching("strike")).toEqual([]);
    expect(await removeSearchDocs(db, [])).toBe(0);
  });
});
