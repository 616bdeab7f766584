import { describe, expect, it } from "vitest";
import { LEXICAL_MODEL, LexicalEmbedder, lexicalForm, lexicalVector } from "./lexical";
import { EmbeddingError } from "./types";
import { cosine } from "./vector";

const norm = (v: Float32Array) => Math.hypot(...v);

describe("lexical embedder (hashed character 3-grams)", () => {
  it("labels itself lexical, never meaning, with no stage-4 thresholds", () => {
    expect(LEXICAL_MODEL).toMatchObject({
      model: "lexical:char3-hash-512@1",
      provider: "lexical",
      kind: "lexical",
      dims: 512,
    });
    expect(LEXICAL_MODEL.meaningThreshold).toBeUndefined();
    expect(LEXICAL_MODEL.distinctThreshold).toBeUndefined();
  });

  it("gives unit vectors, the same for the same text on every call", async () => {
    const embedder = new LexicalEmbedder();
    const texts = ["Fed raises rates", "ঢাকায় ১২ জন নিহত", "x"];
    const a = await embedder.embed(texts);
    const b = await embedder.embed(texts);
    expect(a.model).toBe(LEXICAL_MODEL);
    for (const [i, v] of a.vectors.entries()) {
      expect(v).toHaveLength(512);
      expect(norm(v)).toBeCloseTo(1, 5);
      expect([...v]).toEqual([...(b.vectors[i] as Float32Array)]);
    }
  });

  it("pins the algorithm: a change to it must bump the model id's version", () => {
    // " ab " has the grams " ab" and "ab ": two buckets, one count each.
    const v = lexicalVector("AB");
    const buckets = [...v.keys()].filter((i) => (v[i] as number) > 0);
    expect(buckets).toEqual([136, 350]);
    expect(v[136]).toBeCloseTo(Math.SQRT1_2, 6);
  });

  it("folds case, compatibility forms and white space before taking grams", () => {
    expect(lexicalForm("  Ｆｅｄ\tRAISES\n rates ")).toBe(" fed raises rates ");
    expect([...lexicalVector("ＦＥＤ   raises")]).toEqual([...lexicalVector("fed raises")]);
  });

  it("puts near spellings near, in Bangla too, and unrelated texts far", () => {
    const near = cosine(
      lexicalVector("Fed raises interest rates by a quarter point"),
      lexicalVector("Fed raises interest rates by quarter point"),
    );
    const far = cosine(
      lexicalVector("Fed raises interest rates by a quarter point"),
      lexicalVector("Cyclone warning for the coast tonight"),
    );
    expect(near).toBeGreaterThan(0.9);
    expect(far).toBeLessThan(0.5);
    const bangla = cosine(
      lexicalVector("সিলেটে বন্যায় লাখো মানুষ পানিবন্দী"),
      lexicalVector("সিলেটের বন্যায় লাখো মানুষ পানিবন্দী"),
    );
    expect(bangla).toBeGreaterThan(0.85);
  });

  it("counts an astral character as one code point, not two halves", () => {
    // "😀" is two UTF-16 units: taken by units, "a😀" would give a gram of half a character.
    const v = lexicalVector("a😀");
    expect([...v].filter((x) => x > 0)).toHaveLength(2); // " a😀", "a😀 "
  });

  it("refuses an empty list and an empty or blank text, naming its position", async () => {
    const embedder = new LexicalEmbedder();
    await expect(embedder.embed([])).rejects.toMatchObject({ code: "bad_input" });
    const blank = embedder.embed(["ok", " \t "]);
    await expect(blank).rejects.toBeInstanceOf(EmbeddingError);
    await expect(blank).rejects.toThrow(/text 1 is empty/);
  });
});
