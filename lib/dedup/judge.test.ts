import { describe, expect, it } from "vitest";
import {
  analyze,
  contentKey,
  DEFAULT_THRESHOLDS,
  type DedupThresholds,
  dedupThresholdsSchema,
  EVIDENCE_LIMIT,
  evidence,
  itemKeys,
  judge,
  pairFeatures,
  pairScore,
  retrievable,
} from "./index";

const T = DEFAULT_THRESHOLDS;
const j = (a: string, b: string, t: DedupThresholds = T) => judge({ title: a }, { title: b }, t);
const wide: DedupThresholds = { ...T, retrieval: { ...T.retrieval, radius: 2, maxHamming: 64 } };
/** The shipped thresholds with the anchor lookup off: the SimHash bands alone. */
const bandsOnly: DedupThresholds = { ...T, retrieval: { ...T.retrieval, anchors: 0 } };

describe("judge: the cascade in order", () => {
  it("url: equal urlKey links whatever the text says", () => {
    const r = judge(
      { title: "Budget passed", link: "https://www.example.com/a/1?utm_source=rss" },
      { title: "Completely different words", link: "https://m.example.com/a/1/amp" },
      T,
    );
    expect(r).toEqual({ duplicate: true, stage: "url", score: 1, threshold: 1 });
  });

  it("url needs a key on both sides: two unparsable links are not a match", () => {
    const r = judge(
      { title: "A story", link: "not a url" },
      { title: "Other news", link: "not a url" },
      T,
    );
    expect(r.stage).not.toBe("url");
  });

  it("exact: equal normalised title + summary", () => {
    const a = { title: "Fed raises rates", summary: "By a quarter point." };
    const b = { title: "FED RAISES RATES —", summary: "by a quarter point" };
    expect(judge(a, b, T)).toEqual({ duplicate: true, stage: "exact", score: 1, threshold: 1 });
    expect(itemKeys(a).contentKey).toBe(contentKey("fed raises rates by a quarter point"));
  });

  it("near: a retrieved pair at or above near.duplicate, with the evidence", () => {
    const r = j(
      "Earthquake of magnitude 6.1 strikes off Japan coast, no tsunami warning",
      "Magnitude 6.1 earthquake strikes off coast of Japan; no tsunami warning issued",
    );
    expect(r.duplicate).toBe(true);
    expect(r.stage).toBe("near");
    expect(r.score).toBeGreaterThanOrEqual(T.near.duplicate);
    expect(r.threshold).toBe(T.near.duplicate);
    expect(r.hamming).toBeLessThanOrEqual(T.retrieval.maxHamming);
    expect(r.evidence?.shared).toEqual(
      expect.arrayContaining(["earthquake", "6.1", "japan", "tsunami"]),
    );
    expect(r.evidence?.onlyB).toContain("issued");
  });

  it("review: the grey band is reported, not linked", () => {
    const a = "Police arrest three suspects in Gulshan cafe attack";
    const b = "Police hunt three suspects in Gulshan cafe attack";
    const t: DedupThresholds = { ...wide, near: { duplicate: 0.99, review: 0.9 } };
    const r = j(a, b, t);
    expect(r.stage).toBe("review");
    expect(r.duplicate).toBe(false);
    expect(r.score).toBeGreaterThanOrEqual(0.9);
    expect(r.score).toBeLessThan(0.99);
    // Below the grey band: nothing.
    expect(j(a, b, { ...t, near: { duplicate: 0.999, review: 0.99 } }).stage).toBeNull();
    expect(r.evidence).toBeDefined();
  });

  it("a pair neither lookup would find is not compared, whatever its score", () => {
    const a = "Fed raises interest rates by a quarter point to fight inflation";
    const b = "Fed raises rates by quarter point in fight against inflation";
    const ka = itemKeys({ title: a }).simhash as bigint;
    const kb = itemKeys({ title: b }).simhash as bigint;
    expect(pairScore(a, b)).toBeGreaterThan(T.near.duplicate);
    expect(retrievable(ka, kb, T)).toBe(false); // 15 bits apart, no band within 1 bit
    expect(j(a, b, bandsOnly).stage).toBeNull();
    expect(j(a, b, wide).stage).toBe("near");
    // The rewrite kept its distinctive words (inflation, interest, quarter...): the anchors find it.
    expect(j(a, b)).toMatchObject({ stage: "near", retrieval: "anchors" });
  });

  it("maxHamming drops a candidate of the bands before it is scored, not one the anchors find", () => {
    const a = "Earthquake of magnitude 6.1 strikes off Japan coast, no tsunami warning";
    const b = "Magnitude 6.1 earthquake strikes off coast of Japan; no tsunami warning issued";
    const first = j(a, b);
    expect(first.retrieval).toBe("bands");
    const h = first.hamming as number;
    const t: DedupThresholds = { ...T, retrieval: { ...T.retrieval, maxHamming: h - 1 } };
    expect(j(a, b, { ...t, retrieval: { ...t.retrieval, anchors: 0 } }).stage).toBeNull();
    expect(j(a, b, t)).toMatchObject({ stage: "near", retrieval: "anchors" });
  });

  it("no text, no content keys: two empty items are never duplicates, nor stop words alone", () => {
    expect(itemKeys({ title: "", summary: "  " })).toEqual({
      urlKey: null,
      contentKey: null,
      simhash: null,
      bands: null,
    });
    expect(itemKeys({ title: null, link: "https://x.com/a" }).urlKey).toBe("https://x.com/a");
    expect(j("", "")).toMatchObject({ duplicate: false, stage: null, score: 0 });
    expect(j(" … ", "!!")).toMatchObject({ duplicate: false, stage: null, score: 0 });
    const stop = itemKeys({ title: "What is it?" });
    expect(stop.contentKey).not.toBeNull();
    expect(stop.simhash).toBeNull();
    expect(j("What is it?", "Is it all?")).toMatchObject({ duplicate: false, stage: null });
    expect(j("What is it?", "what is it")).toMatchObject({ duplicate: true, stage: "exact" });
  });

  it("itemKeys: bands are the simhash's, and the stage can pass them back in", () => {
    const item = { title: "Messi scores twice as Inter Miami beat Orlando 3-1" };
    const k = itemKeys(item);
    expect(k.bands).toHaveLength(4);
    const other = { title: "Messi scores twice, Inter Miami beat Orlando City 3-1" };
    expect(judge({ ...item, keys: k }, other, T)).toEqual(judge(item, other, T));
  });
});

describe("judge: English headlines", () => {
  it.each([
    [
      "Fed raises interest rates by a quarter point to fight inflation",
      "UPDATE 2-Fed raises interest rates by a quarter point to fight inflation",
    ],
    [
      "Messi scores twice as Inter Miami beat Orlando 3-1",
      "Messi scores twice, Inter Miami beat Orlando City 3-1",
    ],
    [
      "Earthquake of magnitude 6.1 strikes off Japan coast, no tsunami warning",
      "Magnitude 6.1 earthquake strikes off coast of Japan; no tsunami warning issued",
    ],
  ])("an edit merges: %s / %s", (a, b) => {
    expect(j(a, b)).toMatchObject({ duplicate: true, stage: "near" });
  });

  it.each([
    [
      "Apple unveils new iPhone at California event",
      "Apple shares fall after California court ruling",
    ],
    ["Fed raises interest rates by a quarter point", "Fed holds interest rates steady"],
  ])("headlines sharing a few words do not merge: %s / %s", (a, b) => {
    expect(j(a, b).duplicate).toBe(false);
  });

  it.each([
    ["Dhaka stocks rise 2% on bank rally", "Dhaka stocks fall 2% on bank selloff", "rise", "fall"],
    ["City wins the derby against United", "City loses the derby against United", "wins", "loses"],
    [
      "Parliament approves the budget bill",
      "Parliament rejects the budget bill",
      "approves",
      "rejects",
    ],
    ["ঢাকায় শেয়ারের দাম বাড়ল", "ঢাকায় শেয়ারের দাম কমল", "বাড়ল", "কমল"],
    [
      "Fed raises interest rates by a quarter point",
      "Fed holds interest rates steady",
      "raises",
      "holds",
    ],
  ])(
    "opposite outcomes share every other word, yet go to review, never linked: %s / %s",
    (a, b, x, y) => {
      // Antonyms score as high as an edit (0.67 for the first); the anchors find the pair. The
      // polarity guard holds the link back and names the words; meaning or an operator decides.
      expect(j(a, b, bandsOnly).duplicate).toBe(false);
      const got = j(a, b);
      expect(got).toMatchObject({ duplicate: false, stage: "review" });
      expect(got.evidence?.opposed).toEqual([x, y]);
    },
  );

  it.each([
    ["Floods cut off 26 villages in Madaripur", "Floods cut off 49 villages in Barguna"],
    ["নেত্রকোনার ২৯ পৌরসভায় নির্বাচনের তফসিল ঘোষণা", "মৌলভীবাজারের ১০ পৌরসভায় নির্বাচনের তফসিল ঘোষণা"],
  ])("one frame, other particulars (a place and a figure each) go to review: %s / %s", (a, b) => {
    const got = j(a, b);
    expect(got).toMatchObject({ duplicate: false, stage: "review" });
    expect(got.evidence?.swapped?.kind).toBe("particulars");
  });

  it.each([
    ["Bus crash kills 7 in Sylhet", "Bus crash kills 9 in Sylhet"],
    [
      "Storm knocks out power to thousands in the capital",
      "Storm cuts power to thousands in the capital",
    ],
  ])("an edit changing a figure or a word still links: %s / %s", (a, b) => {
    expect(j(a, b)).toMatchObject({ duplicate: true, stage: "near" });
  });

  it("the same direction in other words still links", () => {
    const got = j("Dhaka stocks rise 2% on bank rally", "Dhaka stocks climb 2% on bank rally");
    expect(got).toMatchObject({ duplicate: true, stage: "near" });
  });

  it("a different figure weighs against a link", () => {
    const a = "Bus crash kills 7 in Sylhet";
    expect(pairScore(a, "Bus crash kills 70 in Sylhet district")).toBeLessThan(
      pairScore(a, "Bus crash kills 7 in Sylhet district"),
    );
  });
});

describe("judge: Bangla", () => {
  it.each([
    ["ঢাকায় সড়ক দুর্ঘটনায় ৫ জন নিহত", "ঢাকার সড়ক দুর্ঘটনায় ৫ জন নিহত"],
    ["সিলেটে বন্যায় লাখো মানুষ পানিবন্দী", "সিলেটের বন্যায় লাখো মানুষ পানিবন্দী"],
    ["প্রধানমন্ত্রীর সঙ্গে বিশ্বব্যাংকের প্রেসিডেন্টের বৈঠক", "প্রধানমন্ত্রীর সাথে বিশ্বব্যাংক প্রেসিডেন্টের বৈঠক"],
    ["শেয়ারবাজারে সূচকের বড় পতন, লেনদেন কমেছে", "শেয়ারবাজারে সূচকের বড় পতন, কমেছে লেনদেনও"],
    ["প্রধানমন্ত্রী আজ জাতিসংঘের সাধারণ পরিষদে ভাষণ দেবেন", "জাতিসংঘের সাধারণ পরিষদে আজ ভাষণ দেবেন প্রধানমন্ত্রী"],
  ])("a rewrite with inflection changes merges: %s / %s", (a, b) => {
    expect(j(a, b)).toMatchObject({ duplicate: true, stage: "near" });
  });

  it("a heavier rewrite: the bands need radius 2, the anchors find it at the shipped defaults", () => {
    const a = "রাজধানী ঢাকায় সড়ক দুর্ঘটনায় ৫ জন নিহত, আহত ১২";
    const b = "রাজধানী ঢাকার সড়কে দুর্ঘটনা: ৫ জন নিহত, ১২ জন আহত";
    expect(pairScore(a, b)).toBeGreaterThan(T.near.duplicate);
    expect(j(a, b, bandsOnly).stage).toBeNull();
    expect(j(a, b, { ...wide, retrieval: { ...wide.retrieval, anchors: 0 } })).toMatchObject({
      duplicate: true,
      stage: "near",
      retrieval: "bands",
    });
    expect(j(a, b)).toMatchObject({ duplicate: true, stage: "near", retrieval: "anchors" });
  });

  it("ZWJ/ZWNJ, Bengali vs Latin digits and য়/য+় spellings are the same exact text", () => {
    const pairs = [
      ["র\u200d্যাবের অভিযানে ১২ জন আটক", "র্যাবের অভিযানে 12 জন আটক"],
      ["নয়া\u200c দিগন্ত", "নয\u09BCা দিগন্ত"],
      ["\u09DC\u09BE \u09DDাকা ২০২৬", "\u09A1\u09BC\u09BE \u09A2\u09BCাকা 2026"],
    ];
    for (const [a, b] of pairs) {
      expect(contentKey(a as string)).toBe(contentKey(b as string));
      expect(j(a as string, b as string).stage).toBe("exact");
    }
    expect(contentKey("নয়া দিগন্ত")).not.toBe(contentKey("নযা দিগন্ত"));
  });

  it.each([
    ["রাজধানী ঢাকায় সড়ক দুর্ঘটনায় ৫ জন নিহত, আহত ১২", "ঢাকায় ডেঙ্গুতে ৫ জনের মৃত্যু, হাসপাতালে ভর্তি ১২"],
    ["রাজধানী ঢাকায় সড়ক দুর্ঘটনায় ৫ জন নিহত, আহত ১২", "চট্টগ্রামে বন্যায় ৩০ হাজার মানুষ পানিবন্দী"],
    ["বাংলাদেশ ব্যাংক নীতি সুদহার বাড়িয়ে ১০ শতাংশ করেছে", "বাংলাদেশ ব্যাংকের নতুন গভর্নর নিয়োগ"],
  ])("two different stories do not merge, even at radius 2: %s / %s", (a, b) => {
    expect(j(a, b).duplicate).toBe(false);
    expect(j(a, b, wide).duplicate).toBe(false);
  });
});

describe("evidence", () => {
  it("lists shared phrases and each side's own words, at most EVIDENCE_LIMIT each", () => {
    const many = (p: string) => Array.from({ length: 60 }, (_, i) => `${p}${i}`).join(" ");
    const e = evidence(`${many("alpha")} common words here`, `${many("beta")} common words here`);
    expect(e.shared).toEqual(["common", "words", "here"]);
    expect(e.sharedPhrases).toEqual(["common words", "words here"]);
    expect(e.onlyA).toHaveLength(EVIDENCE_LIMIT);
    expect(e.onlyB).toHaveLength(EVIDENCE_LIMIT);
    expect(e.onlyA[0]).toBe("alpha0");
  });
});

describe("pairScore", () => {
  it("reads the same features whichever text comes first, each a finite number", () => {
    const a = analyze("Fed raises interest rates by a quarter point, the first rise since 2019");
    const b = analyze("The Fed raised rates a quarter point for the first time since 2019");
    const f = pairFeatures(a, b);
    expect(pairFeatures(b, a)).toEqual(f);
    for (const v of Object.values(f)) expect(Number.isFinite(v)).toBe(true);
    expect(f.lcsMax).toBeGreaterThan(0.5);
    expect(f.numbers).toBe(0);
  });

  it("is 1 for equal texts, 0 for disjoint ones, symmetric, in [0, 1]", () => {
    expect(pairScore("Fed raises rates", "fed RAISES rates!")).toBe(1);
    expect(pairScore("Fed raises rates", "ঢাকায় বন্যা")).toBe(0);
    const texts = ["Fed raises rates 5", "Fed rates 7 held", "ঢাকায় ১২ জন", "", "the of"];
    for (const a of texts) {
      for (const b of texts) {
        const s = pairScore(a, b);
        expect(s).toBeGreaterThanOrEqual(0);
        expect(s).toBeLessThanOrEqual(1);
        expect(s).toBe(pairScore(b, a));
      }
    }
  });
});

describe("dedupThresholdsSchema", () => {
  it("accepts the defaults", () => {
    expect(dedupThresholdsSchema.parse(DEFAULT_THRESHOLDS)).toEqual(DEFAULT_THRESHOLDS);
  });

  it.each([
    [{ windowHours: 0 }, ["windowHours"], "at least 1"],
    [{ windowHours: 1.5 }, ["windowHours"], "whole number"],
    [{ windowHours: "72" }, ["windowHours"], "number of hours"],
    [{ retrieval: { radius: 3, maxHamming: 28 } }, ["retrieval", "radius"], "0, 1 or 2"],
    [{ retrieval: { radius: 1, maxHamming: 65 } }, ["retrieval", "maxHamming"], "between 0 and 64"],
    [
      { retrieval: { ...DEFAULT_THRESHOLDS.retrieval, anchors: 17 } },
      ["retrieval", "anchors"],
      "between 0 and 16",
    ],
    [
      { retrieval: { ...DEFAULT_THRESHOLDS.retrieval, minShared: 0 } },
      ["retrieval", "minShared"],
      "between 1 and 16",
    ],
    [
      { retrieval: { ...DEFAULT_THRESHOLDS.retrieval, anchors: 2, minShared: 3 } },
      ["retrieval", "minShared"],
      "not be above retrieval.anchors",
    ],
    [
      { retrieval: { ...DEFAULT_THRESHOLDS.retrieval, postingCap: 0 } },
      ["retrieval", "postingCap"],
      "between 1 and 4096",
    ],
    [{ near: { duplicate: 1.2, review: 0.4 } }, ["near", "duplicate"], "at most 1"],
    [{ near: { duplicate: 0.5, review: 0 } }, ["near", "review"], "above 0"],
    [{ near: { duplicate: 0.5, review: 0.6 } }, ["near", "review"], "not be above near.duplicate"],
  ])("rejects %j at %j with a message naming it", (patch, path, message) => {
    const r = dedupThresholdsSchema.safeParse({ ...DEFAULT_THRESHOLDS, ...patch });
    expect(r.success).toBe(false);
    const issue = r.error?.issues.find((i) => i.path.join(".") === path.join("."));
    expect(issue?.message).toContain(message);
  });

  it("thresholds stored before the anchors existed still parse, with the anchor defaults", () => {
    const stored = { windowHours: 48, retrieval: { radius: 1, maxHamming: 22 }, near: T.near };
    expect(dedupThresholdsSchema.parse(stored)).toEqual({
      ...stored,
      retrieval: { radius: 1, maxHamming: 22, anchors: 6, minShared: 2, postingCap: 256 },
    });
    // anchors 0 turns the lookup off, whatever minShared says.
    const off = { ...stored, retrieval: { radius: 1, maxHamming: 22, anchors: 0, minShared: 3 } };
    expect(dedupThresholdsSchema.parse(off).retrieval.anchors).toBe(0);
  });

  it("rejects a missing field", () => {
    const { near: _near, ...rest } = DEFAULT_THRESHOLDS;
    expect(dedupThresholdsSchema.safeParse(rest).success).toBe(false);
  });
});
