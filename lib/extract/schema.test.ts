import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { extractionJsonSchema, extractionSchema, validateExtraction } from "./schema";
import { CATEGORIES, ENTITY_TYPES } from "./types";

const valid = {
  language: "bn",
  category: "markets",
  entities: [
    { text: "GP", type: "instrument" },
    { text: "ঢাকা", type: "place" },
  ],
  summary: null,
};

describe("validateExtraction", () => {
  it("takes a valid extraction as it is", () => {
    expect(validateExtraction(valid)).toEqual({ ok: true, value: valid });
  });

  it("trims, keeps a repeated entity once (any case, same type), reads an empty summary as none", () => {
    const result = validateExtraction({
      language: "en",
      category: null,
      entities: [
        { text: "  Apple ", type: "organization" },
        { text: "APPLE", type: "organization" },
        { text: "Apple", type: "instrument" },
      ],
      summary: "  ",
    });
    expect(result).toEqual({
      ok: true,
      value: {
        language: "en",
        category: null,
        entities: [
          { text: "Apple", type: "organization" },
          { text: "Apple", type: "instrument" },
        ],
        summary: null,
      },
    });
  });

  it("refuses what it would have to guess, with errors naming where and what", () => {
    const result = validateExtraction({
      language: "Bangla",
      category: "sport",
      entities: [{ text: "", type: "company" }],
      summary: "x".repeat(301),
      confidence: 0.9,
    });
    expect(result.ok).toBe(false);
    expect(result.ok ? [] : result.errors).toEqual([
      'language: expected one of bn|en|other, got "Bangla"',
      `category: expected one of ${CATEGORIES.join("|")}, got "sport"`,
      'entities.0.text: must not be empty, got ""',
      `entities.0.type: expected one of ${ENTITY_TYPES.join("|")}, got "company"`,
      `summary: too long (at most 300 characters), got "${"x".repeat(56)}…`,
      "the answer: unknown field confidence (only language, category, entities, summary; an entity has text and type)",
    ]);
  });

  it("says what a missing field must be, and refuses what is not an object", () => {
    expect(validateExtraction({ language: "en" })).toEqual({
      ok: false,
      errors: [
        `category: missing (expected one of ${CATEGORIES.join("|")}, or null)`,
        "entities: missing (expected an array of {text, type})",
        "summary: missing (expected a string of at most 300 characters, or null)",
      ],
    });
    expect(validateExtraction("{}")).toEqual({
      ok: false,
      errors: ['the answer: expected object, got "{}"'],
    });
    expect(validateExtraction(null).ok).toBe(false);
  });

  it("caps entities at 50 and the errors fed back at 12 and a count", () => {
    const many = Array.from({ length: 51 }, (_, i) => ({ text: `E${i}`, type: "person" }));
    const capped = validateExtraction({ ...valid, entities: many });
    expect(capped.ok ? [] : capped.errors).toEqual([
      expect.stringMatching(/^entities: too long \(at most 50 items\), got \[\{"text":"E0"/),
    ]);
    const bad = Array.from({ length: 20 }, () => ({ text: "x", type: "thing" }));
    const result = validateExtraction({ ...valid, entities: bad });
    expect(result.ok ? [] : result.errors).toHaveLength(13);
    expect(result.ok ? "" : result.errors[12]).toBe("… and 8 more");
  });

  it("never passes a value the zod schema refuses (any input)", () => {
    fc.assert(
      fc.property(fc.anything(), (candidate) => {
        const result = validateExtraction(candidate);
        if (result.ok) expect(extractionSchema.safeParse(result.value).success).toBe(true);
        else expect(result.errors.length).toBeGreaterThan(0);
      }),
      { numRuns: 2_000 },
    );
  });
});

describe("extractionJsonSchema", () => {
  it("is strict structured output's subset: every field required, nothing else allowed, no length keywords", () => {
    const schema = extractionJsonSchema();
    expect(schema).toMatchObject({
      type: "object",
      required: ["language", "category", "entities", "summary"],
      additionalProperties: false,
    });
    const text = JSON.stringify(schema);
    expect(text).not.toMatch(/minLength|maxLength|maxItems|minItems|\$schema/);
    expect(text).toContain('"additionalProperties":false');
    for (const c of CATEGORIES) expect(text).toContain(`"${c}"`);
  });
});
