import { describe, expect, it } from "vitest";
import { checkTexts, MAX_TEXT_CHARS, MAX_TEXTS_PER_CALL } from "./checks";

const refusal = (texts: unknown) => {
  try {
    checkTexts(texts as string[]);
  } catch (err) {
    return err;
  }
  return undefined;
};

describe("checkTexts", () => {
  it("takes texts with something to embed, up to the limits", () => {
    expect(refusal(["a", " b ", "ঢাকা", "x".repeat(MAX_TEXT_CHARS)])).toBeUndefined();
    expect(refusal(Array.from({ length: MAX_TEXTS_PER_CALL }, () => "a"))).toBeUndefined();
  });

  it("refuses as bad_input, saying which text and why", () => {
    const cases: [unknown, RegExp][] = [
      [[], /the list of texts is empty/],
      [
        Array.from({ length: MAX_TEXTS_PER_CALL + 1 }, () => "a"),
        /2049 texts in one call; at most 2048/,
      ],
      [["ok", ""], /text 1 is empty/],
      [["ok", "ok", "\n\t "], /text 2 is empty/],
      [["x".repeat(MAX_TEXT_CHARS + 1)], /text 0 has 24001 characters; at most 24000/],
      [["ok", 7], /text 1 is a number, not a string/],
      ["not a list", /texts must be a list of strings, not a string/],
    ];
    for (const [texts, message] of cases) {
      expect(refusal(texts)).toMatchObject({
        name: "EmbeddingError",
        code: "bad_input",
        message: expect.stringMatching(message),
      });
    }
  });
});
