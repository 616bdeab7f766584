import { describe, expect, it } from "vitest";
import { bands, DEFAULT_THRESHOLDS, type ItemKeys, retrievedBy } from "@/lib/dedup";
import { lockNames } from "./locks";

function keysOf(simhash: bigint): ItemKeys {
  return { urlKey: null, contentKey: null, simhash, bands: bands(simhash) };
}

/** xorshift64: a fixed sequence of 64-bit values. */
function randoms(seed: bigint): () => bigint {
  let x = seed;
  const mask = (1n << 64n) - 1n;
  return () => {
    x ^= (x << 13n) & mask;
    x ^= x >> 7n;
    x ^= (x << 17n) & mask;
    return x;
  };
}

const shareAName = (a: string[], b: string[]) => {
  const mine = new Set(a.filter((n) => !n.startsWith("e:")));
  return b.some((n) => mine.has(n));
};

describe("lockNames", () => {
  const t = DEFAULT_THRESHOLDS;
  const { radius, minShared } = t.retrieval;

  it("gives two items the lookups could pair a name in common, by bands or by anchors", () => {
    const next = randoms(0x9e3779b97f4a7c15n);
    for (let i = 0; i < 2_000; i++) {
      const a = next();
      // One band within the radius, the other three anything.
      const band = i % 4;
      const flip = 1n << BigInt(band * 16 + (i % 16));
      const bandMask = 0xffffn << BigInt(band * 16);
      const b = (next() & ~bandMask) | ((a ^ flip) & bandMask);
      const pair = retrievedBy({ simhash: a, anchors: [] }, { simhash: b, anchors: [] }, t);
      if (pair === null) continue; // Hamming beyond maxHamming: not a pair
      expect(
        shareAName(
          lockNames("a", keysOf(a), radius, [], minShared),
          lockNames("b", keysOf(b), radius, [], minShared),
        ),
      ).toBe(true);
    }
    const far = keysOf(0n);
    const farther = keysOf(~0n & ((1n << 64n) - 1n));
    expect(
      shareAName(
        lockNames("a", far, radius, [1, 2, 3, 4, 5, 6], minShared),
        lockNames("b", farther, radius, [9, 8, 7, 6, 5], minShared),
      ),
    ).toBe(true); // anchors 5 and 6 in common
  });

  it("keeps two decisions sharing one common anchor only apart (minShared 2)", () => {
    const a = lockNames("a", keysOf(0n), radius, [1, 2, 3], 2);
    const b = lockNames("b", keysOf(~0n & ((1n << 64n) - 1n)), radius, [3, 4, 5], 2);
    expect(shareAName(a, b)).toBe(false);
    // With minShared 1 one anchor is a pair, and so a shared name.
    expect(
      shareAName(
        lockNames("a", keysOf(0n), radius, [1, 2, 3], 1),
        lockNames("b", keysOf(~0n & ((1n << 64n) - 1n)), radius, [3, 4, 5], 1),
      ),
    ).toBe(true);
  });
});
