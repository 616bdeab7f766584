import { describe, expect, it } from "vitest";
import { compareMeaning, type MeaningRule } from "@/lib/meaning/compare";
import { afterMeaning, judgePair, judgeTitles } from "./pair";

const RULE: MeaningRule = {
  model: "test:model@1",
  languages: ["en"],
  cosineWeight: 1,
  meaningThreshold: 0.8,
  distinctThreshold: 0.6,
};

const GREY: [string, string] = [
  "America Online last quarter lost 846,000 dial-up subscribers.",
  "No wonder AOL lost 846,000 subscribers last quarter.",
];

describe("judgePair", () => {
  it("hands stage 4 a pair stages 1-3 leave in review, with stage 3's unrounded score", () => {
    const { verdict, grey } = judgePair(...GREY);
    expect(verdict).toEqual(judgeTitles(...GREY));
    expect(verdict.stage).toBe("review");
    expect(grey).toMatchObject({ a: GREY[0], b: GREY[1], guard: null });
    expect(grey?.near).toBeCloseTo(verdict.score, 4);
  });

  it("names the lexical guard that holds a pair in review", () => {
    const { verdict, grey } = judgePair(
      "Dhaka stocks rise 2% on bank rally",
      "Dhaka stocks fall 2% on bank selloff",
    );
    expect(verdict.stage).toBe("review");
    expect(grey?.guard).toBe("opposed");
  });

  it("hands nothing to stage 4 for a pair stages 1-3 settle", () => {
    expect(judgePair("same words", "same words").grey).toBeNull();
    expect(judgePair("Apple unveils iPhone", "Floods in Sylhet").grey).toBeNull();
  });
});

describe("afterMeaning", () => {
  const grey = judgeTitles(...GREY);
  const pair = (c: number) => ({
    a: [1, 0],
    b: [c, Math.sqrt(1 - c * c)],
    model: RULE.model,
    nearScore: 0.45,
    languages: ["en", "en"] as const,
  });

  it("prints a settled pair as stage meaning with the meaning score", () => {
    expect(afterMeaning(grey, compareMeaning(pair(0.9), RULE))).toEqual({
      duplicate: true,
      stage: "meaning",
      score: 0.9,
    });
    expect(afterMeaning(grey, compareMeaning(pair(0.5), RULE))).toEqual({
      duplicate: false,
      stage: "meaning",
      score: 0.5,
    });
  });

  it("keeps the review line for a pair still grey or not judged", () => {
    expect(afterMeaning(grey, compareMeaning(pair(0.7), RULE))).toBe(grey);
    expect(afterMeaning(grey, compareMeaning({ ...pair(0.9), model: "other@1" }, RULE))).toBe(grey);
  });
});
