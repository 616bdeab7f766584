import { describe, expect, it } from "vitest";
import {
  bandProbes,
  bands,
  fromSigned64,
  hamming,
  retrievableAt,
  simhash64,
  simhashOf,
  toSigned64,
} from "./simhash";

const ONES = (1n << 64n) - 1n;

/** A seeded stream of 64-bit values, so a failing property prints the same case again. */
function rand64(seed: number): () => bigint {
  let s = BigInt(seed) | 1n;
  return () => {
    // xorshift64*
    s ^= s >> 12n;
    s ^= (s << 25n) & ONES;
    s ^= s >> 27n;
    return (s * 0x2545f4914f6cdd1dn) & ONES;
  };
}

describe("simhashOf (known vectors, tallies worked by hand)", () => {
  it("one feature: every set bit tallies +w, every clear bit −w, so the hash is the feature", () => {
    expect(simhashOf([{ hash: 0xdeadbeefcafebaben, weight: 1 }])).toBe(0xdeadbeefcafebaben);
    expect(simhashOf([{ hash: 1n << 63n, weight: 0.5 }])).toBe(1n << 63n);
  });

  it("two features: the heavier wins every bit where they disagree", () => {
    const a = 0xffff0000ffff0000n;
    const b = 0x00ff00ff00ff00ffn;
    // a=1,b=1: +3 → 1; a=1,b=0: +2−1 → 1; a=0,b=1: −2+1 → 0; a=0,b=0: −3 → 0
    expect(
      simhashOf([
        { hash: a, weight: 2 },
        { hash: b, weight: 1 },
      ]),
    ).toBe(a);
    expect(
      simhashOf([
        { hash: a, weight: 1 },
        { hash: b, weight: 2 },
      ]),
    ).toBe(b);
  });

  it("a tie (tally exactly 0) gives a 0 bit: equal weights keep only the bits both have", () => {
    const a = 0xffff0000ffff0000n;
    const b = 0x00ff00ff00ff00ffn;
    expect(
      simhashOf([
        { hash: a, weight: 1 },
        { hash: b, weight: 1 },
      ]),
    ).toBe(a & b);
    expect(simhashOf([])).toBe(0n);
  });

  it("three equal features: each bit is their majority", () => {
    const a = 0xf0f0f0f0f0f0f0f0n;
    const b = 0xff00ff00ff00ff00n;
    const c = 0xffff0000ffff0000n;
    const majority = (a & b) | (a & c) | (b & c); // = 0xfff0f000fff0f000
    expect(majority).toBe(0xfff0f000fff0f000n);
    expect(simhashOf([a, b, c].map((hash) => ({ hash, weight: 1 })))).toBe(majority);
  });

  it("negative hashes are read as their unsigned 64 bits", () => {
    expect(simhashOf([{ hash: -1n, weight: 1 }])).toBe(ONES);
  });
});

describe("signed storage, bands and Hamming distance", () => {
  it("round-trips through the signed BIGINT column (bigint, pg's string, small numbers)", () => {
    const next = rand64(1);
    for (const h of [0n, 1n, 1n << 63n, ONES, ...Array.from({ length: 200 }, next)]) {
      const s = toSigned64(h);
      expect(s >= -(1n << 63n) && s < 1n << 63n).toBe(true);
      expect(fromSigned64(s)).toBe(h);
      expect(fromSigned64(s.toString())).toBe(h);
    }
    expect(toSigned64(1n << 63n)).toBe(-(1n << 63n));
    expect(toSigned64(ONES)).toBe(-1n);
    expect(fromSigned64(-1)).toBe(ONES);
  });

  it("splits into four 16-bit bands, band0 the top bits", () => {
    expect(bands(0x0123456789abcdefn)).toEqual([0x0123, 0x4567, 0x89ab, 0xcdef]);
    expect(bands(ONES)).toEqual([65535, 65535, 65535, 65535]);
    expect(bands(toSigned64(ONES))).toEqual([65535, 65535, 65535, 65535]);
  });

  it("counts differing bits", () => {
    expect(hamming(0n, ONES)).toBe(64);
    expect(hamming(0x0fn, 0xf0n)).toBe(8);
    expect(hamming(1n << 63n, 0n)).toBe(1);
    expect(hamming(toSigned64(ONES), ONES)).toBe(0);
    const next = rand64(2);
    for (let i = 0; i < 100; i++) {
      const a = next();
      const b = next();
      expect(hamming(a, b)).toBe(hamming(b, a));
      expect(hamming(a, a)).toBe(0);
      expect(hamming(a, b)).toBe([...(a ^ b).toString(2)].filter((c) => c === "1").length);
    }
  });
});

describe("bandProbes and retrievableAt", () => {
  it("probes 1, 17 and 137 distinct values per band for radius 0, 1 and 2", () => {
    const h = 0x0123456789abcdefn;
    for (const [radius, per] of [
      [0, 1],
      [1, 17],
      [2, 137],
    ] as const) {
      const probes = bandProbes(h, radius);
      expect(probes).toHaveLength(4);
      probes.forEach((p, i) => {
        expect(new Set(p).size).toBe(per);
        expect(p[0]).toBe(bands(h)[i]);
        for (const v of p) {
          expect(v >= 0 && v <= 0xffff).toBe(true);
          expect(hamming(BigInt(v), BigInt(bands(h)[i] as number))).toBeLessThanOrEqual(radius);
        }
      });
    }
  });

  it("rejects a radius that is not a whole number in 0..16", () => {
    expect(() => bandProbes(1n, -1)).toThrow(RangeError);
    expect(() => bandProbes(1n, 1.5)).toThrow(RangeError);
    expect(() => bandProbes(1n, 17)).toThrow(RangeError);
  });

  it("finds b exactly when some band of b is among a's probes", () => {
    const next = rand64(3);
    for (let i = 0; i < 300; i++) {
      const a = next();
      // Near copies as well as random pairs: flip a few random bits.
      let b = i % 3 === 0 ? next() : a;
      for (let k = 0; k < (i % 11) + 1; k++) b ^= 1n << (next() % 64n);
      for (const r of [0, 1, 2]) {
        const probes = bandProbes(a, r);
        const byProbe = bands(b).some((v, j) => (probes[j] as number[]).includes(v));
        expect(retrievableAt(a, b, r)).toBe(byProbe);
        expect(retrievableAt(b, a, r)).toBe(byProbe);
      }
    }
  });

  it("misses a copy with a bit flipped in every band at radius 0, finds it at 1", () => {
    const a = 0x0123456789abcdefn;
    const one = a ^ (1n | (1n << 20n) | (1n << 40n) | (1n << 60n));
    expect(retrievableAt(a, one, 0)).toBe(false);
    expect(retrievableAt(a, one, 1)).toBe(true);
    const two = one ^ (2n | (1n << 21n) | (1n << 41n) | (1n << 61n));
    expect(retrievableAt(a, two, 1)).toBe(false);
    expect(retrievableAt(a, two, 2)).toBe(true);
    expect(retrievableAt(a, a ^ 0xffffn, 0)).toBe(true); // three bands untouched
  });
});

describe("simhash64 of text", () => {
  const text =
    "The central bank raised its main interest rate by half a percentage point on Thursday, the " +
    "third increase this year, as inflation stayed above eight percent and the currency weakened";

  it("is the same for the same text, and for texts equal after normalisation", () => {
    expect(simhash64(text)).toBe(simhash64(text));
    expect(simhash64(text)).toBe(simhash64(text.toUpperCase().replaceAll(",", " ;")));
  });

  it("moves a few bits for a one-word edit and many for an unrelated text", () => {
    const h = simhash64(text);
    for (const edit of [
      text.replace("Thursday", "Wednesday"),
      text.replace("third", "fourth"),
      `${text} again`,
      text.replace("weakened", "fell"),
    ]) {
      expect(hamming(h, simhash64(edit))).toBeLessThanOrEqual(8);
    }
    const other = simhash64(
      "Flooding in the north cut off dozens of villages and closed the highway to the capital",
    );
    expect(hamming(h, other)).toBeGreaterThan(16);
  });

  it("gives a constant for text with no content word (only stop words or nothing)", () => {
    expect(simhash64("")).toBe(0n);
    expect(simhash64("the of and")).toBe(0n);
  });
});
