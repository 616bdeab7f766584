import { describe, expect, it } from "vitest";
import { Random } from "@/simulator/random";
import { type CalibrationPair, fitLogistic, fitMeaningRule, meaningScore } from "./fit";

/** Pairs whose label follows P = σ(a + b·cosine), cosines spread over [0.5, 1). */
function drawn(n: number, a: number, b: number, seed = 1): CalibrationPair[] {
  const random = new Random(seed);
  return Array.from({ length: n }, () => {
    const cosine = 0.5 + random.next() * 0.5;
    const p = 1 / (1 + Math.exp(-(a + b * cosine)));
    return { cosine, near: 0.45, label: random.next() < p, guarded: false };
  });
}

describe("fitLogistic", () => {
  it("recovers the intercept and slope that made the labels", () => {
    const pairs = drawn(20_000, -12, 15);
    const f = fitLogistic(
      pairs.map((p) => p.cosine),
      pairs.map((p) => p.label),
    );
    expect(f.intercept).toBeCloseTo(-12, 0);
    expect(f.slope).toBeCloseTo(15, 0);
    expect(f.z).toBeGreaterThan(20);
  });
});

describe("fitMeaningRule", () => {
  it("puts the thresholds where the fitted probability crosses 0.5 and 0.4", () => {
    // σ(−12 + 15c) = 0.5 at c = 0.8; = 0.4 at c = (ln(0.4/0.6) + 12) / 15 ≈ 0.773.
    const r = fitMeaningRule(drawn(4_000, -12, 15));
    expect(r.thresholds).not.toBeNull();
    expect(r.thresholds?.meaningThreshold).toBeCloseTo(0.8, 1);
    expect(r.thresholds?.distinctThreshold).toBeCloseTo(0.773, 1);
    expect(r.thresholds?.distinctThreshold).toBeLessThan(r.thresholds?.meaningThreshold as number);
    // The near score is constant here, so the cosine alone explains best.
    expect(r.thresholds?.cosineWeight).toBe(1);
    expect(r.reason).toMatch(/P\(duplicate\) reaches 0.5/);
  });

  it("gives no thresholds when the score does not tell the labels apart", () => {
    const r = fitMeaningRule(drawn(300, -0.4, 0, 7));
    expect(r.thresholds).toBeNull();
    expect(r.reason).toMatch(/does not separate/);
    expect(r.fit?.z).toBeLessThan(2);
    expect(r.fits.map((f) => f.cosineWeight)).toEqual([1, 0.75, 0.5, 0.25]);
  });

  it("fits on the unguarded pairs only, and refuses to fit on too few", () => {
    const guarded = drawn(500, -12, 15, 3).map((p) => ({ ...p, guarded: true }));
    const r = fitMeaningRule([...guarded, ...drawn(20, -12, 15, 4)]);
    expect(r.pairs).toBe(20);
    expect(r.thresholds).toBeNull();
    expect(r.reason).toMatch(/20 unguarded grey pairs .* too few/);
  });

  it("picks the cosine weight whose blend with stage 3's score explains the labels best", () => {
    // The label follows the near score as much as the cosine: a blend fits better than either.
    const random = new Random(11);
    const pairs = Array.from({ length: 6_000 }, () => {
      const cosine = 0.5 + random.next() * 0.5;
      const near = 0.4 + random.next() * 0.1;
      const s = 0.5 * cosine + 0.5 * (0.5 + (near - 0.4) * 5);
      const p = 1 / (1 + Math.exp(-(-15 + 20 * s)));
      return { cosine, near, label: random.next() < p, guarded: false };
    });
    const r = fitMeaningRule(pairs);
    expect(r.thresholds?.cosineWeight).not.toBe(1);
    expect(meaningScore({ cosine: 0.9, near: 0.45 }, 0.25)).toBeCloseTo(0.5625);
  });

  it("refuses probability levels in the wrong order", () => {
    expect(() => fitMeaningRule([], { linkProbability: 0.4, distinctProbability: 0.5 })).toThrow(
      /distinctProbability must be below linkProbability/,
    );
  });
});
