import { describe, expect, it } from "vitest";
import {
  addClaimWaits,
  CLAIM_WAIT_BUCKET_COUNT,
  claimWaitBucket,
  claimWaitQuantile,
} from "./claimWaits";

describe("claim wait histogram", () => {
  it("puts a wait in the first bucket whose edge it does not pass", () => {
    expect(claimWaitBucket(0)).toBe(0);
    expect(claimWaitBucket(50)).toBe(0);
    expect(claimWaitBucket(51)).toBe(1);
    expect(claimWaitBucket(3_600_000)).toBe(14);
    expect(claimWaitBucket(3_600_001)).toBe(15);
  });

  it("estimates quantiles inside the bucket, as histogram_quantile does", () => {
    const h = new Array(CLAIM_WAIT_BUCKET_COUNT).fill(0);
    h[0] = 50; // ≤ 50 ms
    h[1] = 50; // 50–100 ms
    expect(claimWaitQuantile(h, 0.5)).toBe(50);
    expect(claimWaitQuantile(h, 0.75)).toBe(75);
    expect(claimWaitQuantile(h, 1)).toBe(100);
    expect(claimWaitQuantile(new Array(CLAIM_WAIT_BUCKET_COUNT).fill(0), 0.5)).toBeNull();
  });

  it("sums rows element by element", () => {
    const sum = addClaimWaits([], [1n, 2n]);
    addClaimWaits(sum, [3, 4, 5]);
    expect(sum.slice(0, 3)).toEqual([4, 6, 5]);
    expect(sum).toHaveLength(CLAIM_WAIT_BUCKET_COUNT);
  });
});
