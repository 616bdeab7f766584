import { hash64Parts } from "./hash";
import { type Shingles, shingles } from "./shingles";

/**
 * 64-bit SimHash (Charikar 2002): each feature's 64-bit hash votes its weight for every bit it
 * has set and against every bit it has clear; the sign of each bit's tally is the bit. Two texts'
 * Hamming distance approximates the angle between their weighted feature vectors
 * (distance / 64 ≈ angle / π), which is what makes a banded index lookup find near-duplicates.
 *
 * Bit 63 is the top bit of `hi`; a tie (tally exactly 0) gives 0.
 */
function simhashParts(
  features: Iterable<[hi: number, lo: number, weight: number]>,
): [number, number] {
  const v = new Float64Array(64);
  for (const [hi, lo, w] of features) {
    for (let i = 0; i < 32; i++) {
      v[i] = (v[i] as number) + ((lo >>> i) & 1 ? w : -w);
      v[32 + i] = (v[32 + i] as number) + ((hi >>> i) & 1 ? w : -w);
    }
  }
  let hi = 0;
  let lo = 0;
  for (let i = 0; i < 32; i++) {
    if ((v[i] as number) > 0) lo |= 1 << i;
    if ((v[32 + i] as number) > 0) hi |= 1 << i;
  }
  return [hi >>> 0, lo >>> 0];
}

const join = (hi: number, lo: number): bigint => (BigInt(hi) << 32n) | BigInt(lo);
const split = (h: bigint): [number, number] => [
  Number((h >> 32n) & 0xffffffffn),
  Number(h & 0xffffffffn),
];

/** SimHash of explicit features (hash, weight): the primitive, for tests with known vectors. */
export function simhashOf(features: Iterable<{ hash: bigint; weight: number }>): bigint {
  const parts: [number, number, number][] = [];
  for (const f of features) {
    const [hi, lo] = split(BigInt.asUintN(64, f.hash));
    parts.push([hi, lo, f.weight]);
  }
  return join(...simhashParts(parts));
}

/**
 * Which shingles the SimHash reads: the set of character 4-grams of the content words, each
 * weighing 1. Words and word pairs made it brittle on headline-length texts (a reordering changes
 * every pair), and the score's per-word spreading of gram weights (1/n) let a short word or a
 * number outweigh a long one in the angle SimHash estimates. On MSRP's label-1 pairs the share
 * the radius-1 lookup finds went 0.33 (all shingles, score weights) → 0.37 (4-grams, 1/n) → 0.41
 * (4-grams, 1), at the same share of unrelated pairs found (~0.14 %). See decision 022.
 */
const SIMHASH_KIND = "c:";

/** SimHash of already computed shingles (their character grams, as a set). */
export function simhashOfShingles(m: Shingles): bigint {
  function* parts(): Generator<[number, number, number]> {
    for (const k of m.keys()) {
      if (!k.startsWith(SIMHASH_KIND)) continue;
      const [hi, lo] = hash64Parts(k);
      yield [hi, lo, 1];
    }
  }
  return join(...simhashParts(parts()));
}

/** The unsigned 64-bit SimHash of a raw text over its weighted shingles. */
export function simhash64(text: string): bigint {
  return simhashOfShingles(shingles(text));
}

/** For the BIGINT column: the same 64 bits as a signed integer. */
export function toSigned64(h: bigint): bigint {
  return BigInt.asIntN(64, h);
}

/** Back from the BIGINT column (pg returns it as a string, Prisma as a bigint). */
export function fromSigned64(v: bigint | string | number): bigint {
  return BigInt.asUintN(64, BigInt(v));
}

function popcount32(x: number): number {
  let v = x >>> 0;
  v -= (v >>> 1) & 0x55555555;
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24) & 0xff;
}

export function hamming(a: bigint, b: bigint): number {
  const [hi, lo] = split(BigInt.asUintN(64, a ^ b));
  return popcount32(hi) + popcount32(lo);
}

export type Bands = [number, number, number, number];

/** The four 16-bit bands, band0 the top 16 bits; each 0..65535 (the band0..3 columns). */
export function bands(h: bigint): Bands {
  const [hi, lo] = split(BigInt.asUintN(64, h));
  return [hi >>> 16, hi & 0xffff, lo >>> 16, lo & 0xffff];
}

/** Every 16-bit value within `radius` bits of `v`, `v` first. */
function neighbours(v: number, radius: number): number[] {
  const out = [v];
  const walk = (x: number, from: number, left: number) => {
    for (let i = from; i < 16; i++) {
      const y = x ^ (1 << i);
      out.push(y);
      if (left > 1) walk(y, i + 1, left - 1);
    }
  };
  if (radius > 0) walk(v, 0, radius);
  return out;
}

/**
 * What the live stage looks up for `h`: per band, the band's value and every value within
 * `radius` bits of it (radius 0: the band itself; 1: 17 values; 2: 137). A candidate is any live
 * item whose band i is among probes[i], for some i.
 */
export function bandProbes(h: bigint, radius: number): number[][] {
  if (!Number.isInteger(radius) || radius < 0 || radius > 16) {
    throw new RangeError(`radius must be an integer in 0..16, got ${radius}`);
  }
  return bands(h).map((b) => neighbours(b, radius));
}

/** True iff the banded lookup for `a` would find `b`: some band within `radius` bits. */
export function retrievableAt(a: bigint, b: bigint, radius: number): boolean {
  const ba = bands(a);
  const bb = bands(b);
  for (let i = 0; i < 4; i++) {
    if (popcount32((ba[i] as number) ^ (bb[i] as number)) <= radius) return true;
  }
  return false;
}
