import { describe, expect, it } from "vitest";
import {
  compareMeaning,
  cosine,
  type MeaningPair,
  type MeaningRule,
  textLanguage,
} from "./compare";

const RULE: MeaningRule = {
  model: "test:model@1",
  languages: ["en"],
  cosineWeight: 1,
  meaningThreshold: 0.8,
  distinctThreshold: 0.6,
};

/** Two unit vectors in the plane whose cosine is `c`. */
function pairAt(c: number, over: Partial<MeaningPair> = {}): MeaningPair {
  return {
    a: [1, 0],
    b: [c, Math.sqrt(1 - c * c)],
    model: RULE.model,
    nearScore: 0.45,
    languages: ["en", "en"],
    ...over,
  };
}

describe("compareMeaning", () => {
  it("links at or above meaningThreshold, dismisses below distinctThreshold, keeps the rest grey", () => {
    expect(compareMeaning(pairAt(0.9), RULE)).toMatchObject({
      outcome: "duplicate",
      duplicate: true,
      distinct: false,
      score: 0.9,
      threshold: 0.8,
    });
    expect(compareMeaning(pairAt(0.8), RULE)).toMatchObject({ outcome: "duplicate" });
    expect(compareMeaning(pairAt(0.7), RULE)).toMatchObject({
      outcome: "grey",
      duplicate: false,
      distinct: false,
      threshold: 0.8,
    });
    expect(compareMeaning(pairAt(0.5), RULE)).toMatchObject({
      outcome: "distinct",
      duplicate: false,
      distinct: true,
      threshold: 0.6,
    });
  });

  it("decides on the unrounded score (0.79996 prints as 0.8 but is below 0.8)", () => {
    const d = compareMeaning(pairAt(0.79996), RULE);
    expect(d).toMatchObject({ outcome: "grey", score: 0.8 });
  });

  it("records the cosine, stage 3's score, the model and the thresholds in the evidence", () => {
    const d = compareMeaning(pairAt(0.9, { nearScore: 0.4321 }), RULE);
    expect(d).toMatchObject({
      evidence: {
        model: "test:model@1",
        cosine: 0.9,
        near: 0.4321,
        cosineWeight: 1,
        meaningThreshold: 0.8,
        distinctThreshold: 0.6,
      },
    });
  });

  it("blends the cosine with stage 3's score by the rule's weight", () => {
    const rule = { ...RULE, cosineWeight: 0.5 };
    // 0.5 · 0.9 + 0.5 · 0.45 = 0.675: grey, where the cosine alone would link.
    expect(compareMeaning(pairAt(0.9), rule)).toMatchObject({ outcome: "grey", score: 0.675 });
    expect(compareMeaning(pairAt(0.9), { ...rule, meaningThreshold: 0.67 })).toMatchObject({
      outcome: "duplicate",
    });
  });

  it("never links a pair a lexical guard holds back, but may dismiss it", () => {
    const opposed = compareMeaning(pairAt(0.95, { guard: "opposed" }), RULE);
    expect(opposed).toMatchObject({ outcome: "grey", evidence: { guard: "opposed" } });
    expect(compareMeaning(pairAt(0.3, { guard: "swapped" }), RULE)).toMatchObject({
      outcome: "distinct",
    });
  });

  it("gives no verdict on vectors of another model or a language the model does not read", () => {
    expect(compareMeaning(pairAt(0.99, { model: "lexical:char3-hash-512@1" }), RULE)).toEqual({
      outcome: "unjudged",
      reason: "other-model",
      detail: "vectors by lexical:char3-hash-512@1, thresholds for test:model@1",
    });
    expect(compareMeaning(pairAt(0.99, { languages: ["bn", "en"] }), RULE)).toMatchObject({
      outcome: "unjudged",
      reason: "language",
    });
    expect(
      compareMeaning(pairAt(0.99, { languages: ["bn", "en"] }), {
        ...RULE,
        languages: ["en", "bn"],
      }),
    ).toMatchObject({ outcome: "duplicate" });
  });

  it("refuses bad input with a clear error", () => {
    expect(() => compareMeaning(pairAt(0.9, { b: [1, 0, 0] }), RULE)).toThrow(/different lengths/);
    expect(() => compareMeaning(pairAt(0.9, { b: [Number.NaN, 1] }), RULE)).toThrow(/not finite/);
    expect(() => compareMeaning(pairAt(0.9, { nearScore: 1.5 }), RULE)).toThrow(/stage 3's score/);
    expect(() => compareMeaning(pairAt(0.9), { ...RULE, distinctThreshold: 0.9 })).toThrow(
      /distinct 0.9 must be a number at or below meaning 0.8/,
    );
    expect(() => compareMeaning(pairAt(0.9), { ...RULE, cosineWeight: 2 })).toThrow(/cosineWeight/);
  });
});

describe("cosine", () => {
  it("is the dot product of unit vectors, and 0 for a zero vector", () => {
    expect(cosine([0.6, 0.8], [0.8, 0.6])).toBeCloseTo(0.96);
    expect(cosine([3, 4], [6, 8])).toBeCloseTo(1);
    expect(cosine([0, 0], [1, 0])).toBe(0);
    expect(() => cosine([], [])).toThrow(/empty/);
  });
});

describe("textLanguage", () => {
  it("reads Bengali script as Bangla even with Latin names in it, and the rest as English", () => {
    expect(textLanguage("ঢাকার শেয়ারবাজারে সূচক বাড়ল ১.২ শতাংশ")).toBe("bn");
    expect(textLanguage("ডিএসইএক্স সূচক DSEX ২ শতাংশ বেড়েছে")).toBe("bn");
    expect(textLanguage("BRAC Bank shares rise 2% in Dhaka")).toBe("en");
    expect(textLanguage("Floods in সিলেট cut off 26 villages")).toBe("en");
    expect(textLanguage("2026 / 12")).toBe("en");
  });
});
