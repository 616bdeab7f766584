import { describe, expect, it } from "vitest";
import { numberArray, textArray } from "./arrayLiteral";

describe("array literals", () => {
  it("numbers joined, anything not finite refused", () => {
    expect(numberArray([])).toBe("{}");
    expect(numberArray([1, -2, 0.5, 1e-7])).toBe("{1,-2,0.5,1e-7}");
    expect(() => numberArray([1, Number.NaN])).toThrow(/finite/);
    expect(() => numberArray([Number.POSITIVE_INFINITY])).toThrow(/finite/);
  });

  it("texts quoted with quotes and backslashes escaped, null as NULL", () => {
    expect(textArray([])).toBe("{}");
    expect(textArray(["a", null, 'b"c', "d\\e", "{x,y}", "NULL"])).toBe(
      '{"a",NULL,"b\\"c","d\\\\e","{x,y}","NULL"}',
    );
  });
});
