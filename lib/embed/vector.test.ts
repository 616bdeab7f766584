import { describe, expect, it } from "vitest";
import { cosine, toUnitLength } from "./vector";

describe("toUnitLength", () => {
  it("scales in place to length 1", () => {
    const v = Float32Array.from([3, 4]);
    expect(toUnitLength(v)).toBe(v);
    expect([...v]).toEqual([Math.fround(0.6), Math.fround(0.8)]);
  });

  it("answers null for what has no direction or is not a number", () => {
    expect(toUnitLength(new Float32Array(4))).toBeNull();
    expect(toUnitLength(Float32Array.from([1, Number.NaN]))).toBeNull();
    expect(toUnitLength(Float32Array.from([1, Number.POSITIVE_INFINITY]))).toBeNull();
  });
});

describe("cosine", () => {
  it("is the dot product of unit vectors, and refuses two sizes", () => {
    const a = toUnitLength(Float32Array.from([1, 1])) as Float32Array;
    expect(cosine(a, a)).toBeCloseTo(1, 6);
    expect(cosine(a, Float32Array.from([1, 0]))).toBeCloseTo(Math.SQRT1_2, 6);
    expect(() => cosine(a, new Float32Array(3))).toThrow(/2 and 3 dimensions/);
  });
});
