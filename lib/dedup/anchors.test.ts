import { describe, expect, it } from "vitest";
import {
  analyze,
  anchorOf,
  anchorRetrievable,
  anchorStem,
  anchors,
  DEFAULT_THRESHOLDS,
  type DedupThresholds,
  itemKeys,
  judge,
  retrievedBy,
  sharedAnchors,
} from "./index";

const T = DEFAULT_THRESHOLDS;
const of = (text: string, k = T.retrieval.anchors) => anchors(analyze(text), k);
const shared = (a: string, b: string) => sharedAnchors(of(a), of(b));
const found = (a: string, b: string) => anchorRetrievable(of(a), of(b), T.retrieval.minShared);

describe("anchorStem", () => {
  it("Latin words: the first 5 code points, so inflected forms meet", () => {
    expect(anchorStem("accused")).toBe("accus");
    expect(anchorStem("accuses")).toBe("accus");
    expect(anchorStem("officials")).toBe(anchorStem("official"));
    expect(anchorStem("bank")).toBe("bank");
  });

  it("Bengali words: the first 4 code points (vowel signs and nukta count), case endings drop", () => {
    const dhaka = ["ঢাকায়", "ঢাকার", "ঢাকাকে", "ঢাকা"].map((w) => anchorStem(w.normalize("NFC")));
    expect(new Set(dhaka).size).toBe(1);
    expect(anchorStem("সিলেটে")).toBe(anchorStem("সিলেটের"));
    // Different places stay apart.
    expect(anchorStem("সিলেটে")).not.toBe(anchorStem("ঢাকায়"));
  });

  it("no anchor from stop words, words under 4 code points or one-digit numbers", () => {
    for (const w of ["the", "said", "would", "থেকে", "কিন্তু", "bus", "৫", "7"]) {
      expect(anchorStem(w)).toBeNull();
    }
    // When and who-said words are in every other story: no anchor, whole words only.
    for (const w of ["tuesday", "yesterday", "million", "বলেছেন", "জানিয়েছে", "সোমবার"]) {
      expect(anchorStem(w.normalize("NFC"))).toBeNull();
    }
    expect(anchorStem("policy")).toBe("polic");
    expect(anchorStem("2003")).toBe("2003");
    expect(anchorStem("1.5")).toBe("1.5");
  });
});

describe("anchors", () => {
  it("at most K distinct signed 32-bit integers, deterministic", () => {
    const text =
      "Prosecutors accused the former chairman of Bangladesh Biman Airlines of embezzling 12 million";
    const a = of(text);
    expect(a).toHaveLength(T.retrieval.anchors);
    expect(new Set(a).size).toBe(a.length);
    for (const x of a) {
      expect(Number.isInteger(x)).toBe(true);
      expect(x).toBeGreaterThanOrEqual(-(2 ** 31));
      expect(x).toBeLessThan(2 ** 31);
    }
    expect(of(text)).toEqual(a);
    expect(of(text, 3)).toEqual(a.slice(0, 3));
    expect(of(text, 0)).toEqual([]);
  });

  it("the longest words first, whatever their place in the text", () => {
    const a = of("embezzlement charge against chairman", 1);
    expect(a).toEqual([anchorOf("embez")]);
    expect(of("chairman faces charge of embezzlement", 1)).toEqual(a);
  });

  it("none for a text of stop words, short words and one-digit numbers", () => {
    expect(of("What is it? 3 of 5")).toEqual([]);
    expect(of("")).toEqual([]);
  });

  it("a word repeated or inflected twice is one anchor", () => {
    expect(of("officials official officials")).toHaveLength(1);
  });
});

describe("anchor retrieval", () => {
  it("English inflection: a rewrite keeps its distinctive stems and is found", () => {
    const a = "Prosecutors accused the airline chairman of embezzling pension funds";
    const b = "The airline's chairman is accused by prosecutors of embezzlement of pension money";
    expect(shared(a, b)).toBeGreaterThanOrEqual(T.retrieval.minShared);
    expect(found(a, b)).toBe(true);
  });

  it("Bangla inflection: case endings and reordering, still found", () => {
    const a = "রাজধানী ঢাকায় সড়ক দুর্ঘটনায় ৫ জন নিহত, আহত ১২";
    const b = "রাজধানী ঢাকার সড়কে দুর্ঘটনা: ৫ জন নিহত, ১২ জন আহত";
    expect(shared(a, b)).toBeGreaterThanOrEqual(T.retrieval.minShared);
    const A = itemKeys({ title: a });
    const B = itemKeys({ title: b });
    expect(
      retrievedBy(
        { simhash: A.simhash as bigint, anchors: of(a) },
        { simhash: B.simhash as bigint, anchors: of(b) },
        T,
      ),
    ).toBe("anchors");
  });

  it("unrelated texts sharing only common words are not found by anchors", () => {
    const pairs: [string, string][] = [
      [
        "The minister said on Monday that the government would not change its plans",
        "Police said on Monday that they would not release the names of the victims",
      ],
      [
        "Shares of the company fell after the report was released on Tuesday",
        "Heavy rain fell across the country after the storm on Tuesday",
      ],
      ["সরকার বলেছে যে তারা এই বছর নতুন পরিকল্পনা করবে", "পুলিশ বলেছে যে তারা এই ঘটনার তদন্ত করবে"],
    ];
    for (const [a, b] of pairs) {
      expect(shared(a, b)).toBeLessThan(T.retrieval.minShared);
      expect(found(a, b)).toBe(false);
      expect(judge({ title: a }, { title: b }, T).stage).toBeNull();
    }
  });

  it("minShared is the rule: one shared anchor finds a pair only at minShared 1", () => {
    const a = "Flooding in Sylhet strands thousands";
    const b = "Sylhet cricket ground hosts the final";
    expect(shared(a, b)).toBe(1);
    expect(anchorRetrievable(of(a), of(b), 2)).toBe(false);
    expect(anchorRetrievable(of(a), of(b), 1)).toBe(true);
    expect(anchorRetrievable([], [], 1)).toBe(false);
  });

  it("anchors 0 turns the lookup off in judge: the bands alone decide", () => {
    const a = "Fed raises interest rates by a quarter point to fight inflation";
    const b = "Fed raises rates by quarter point in fight against inflation";
    const off: DedupThresholds = { ...T, retrieval: { ...T.retrieval, anchors: 0 } };
    expect(judge({ title: a }, { title: b }, T).retrieval).toBe("anchors");
    expect(judge({ title: a }, { title: b }, off).retrieval).toBeNull();
    // Anchors computed by the caller are used as given (the stage passes the stored ones).
    expect(judge({ title: a, anchors: [1, 2] }, { title: b, anchors: [1, 2] }, off).retrieval).toBe(
      null,
    );
    expect(judge({ title: a, anchors: [] }, { title: b, anchors: [] }, T).retrieval).toBeNull();
  });
});
