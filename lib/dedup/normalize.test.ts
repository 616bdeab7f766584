import { describe, expect, it } from "vitest";
import { normalizeText, words } from "./normalize";

describe("normalizeText", () => {
  it("folds case, compatibility forms, punctuation and whitespace", () => {
    expect(normalizeText("  Ｆｅｄ  RAISES\trates…  by ¼ point!! ")).toBe(
      "fed raises rates by 1 4 point",
    );
    expect(normalizeText("“Quoted” — dash-separated; end.")).toBe("quoted dash separated end");
  });

  it("keeps decimals, drops grouping commas, folds Bengali digits to Latin", () => {
    expect(normalizeText("Up 3.5% to $1,200.")).toBe("up 3.5 to 1200");
    expect(normalizeText("৩.৫ শতাংশ, ১,০০,০০০ টাকা")).toBe("3.5 শতাংশ 100000 টাকা");
    expect(normalizeText("৳১২")).toBe(normalizeText("৳12"));
    // 3.5 and 35 are different figures.
    expect(normalizeText("3.5")).not.toBe(normalizeText("35"));
  });

  it("strips ZWJ, ZWNJ and other invisible format characters", () => {
    const rab = "র\u200d্যাব"; // RAB spelled with a ZWJ after র, as many Bangla keyboards do
    expect(normalizeText(rab)).toBe(normalizeText("র্যাব"));
    expect(normalizeText("কি\u200cন্তু")).toBe(normalizeText("কিন্তু"));
    expect(normalizeText("soft\u00adhyphen\ufeff")).toBe("softhyphen");
  });

  it("spells য় ড় ঢ় the same precomposed or as consonant + nukta, nukta kept", () => {
    expect(normalizeText("\u09DF")).toBe(normalizeText("\u09AF\u09BC"));
    expect(normalizeText("\u09DC")).toBe(normalizeText("\u09A1\u09BC"));
    expect(normalizeText("\u09DD")).toBe(normalizeText("\u09A2\u09BC"));
    // The nukta is part of the letter: য় is not য.
    expect(normalizeText("নয়া")).not.toBe(normalizeText("নযা"));
    expect(normalizeText("পড়া")).not.toBe(normalizeText("পডা"));
  });

  it("keeps Bangla vowel signs with their consonant", () => {
    expect(normalizeText("কি কী কে কো")).toBe("কি কী কে কো");
    expect(normalizeText("কী")).not.toBe(normalizeText("কি"));
  });

  it("returns an empty string for punctuation-only and empty input", () => {
    expect(normalizeText("")).toBe("");
    expect(normalizeText(" ।,.;—\u200d ")).toBe("");
  });
});

describe("words", () => {
  it("segments Bangla and English into word-like segments", () => {
    expect(words(normalizeText("ঢাকায় ১২ জন নিহত।"))).toEqual(["ঢাকায়", "12", "জন", "নিহত"]);
    expect(words(normalizeText("Prices rose 3.5% today"))).toEqual([
      "prices",
      "rose",
      "3.5",
      "today",
    ]);
    expect(words("")).toEqual([]);
  });
});
