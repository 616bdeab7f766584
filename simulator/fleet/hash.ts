/**
 * Integer hashing for the fleet: every feed's behaviour, items and timing are a function of
 * (seed, feed, slot), recomputed on each request instead of stored, so 100,000 feeds cost no
 * memory per feed. murmur3's finaliser: each input bit flips about half the output bits, which
 * is what the shares and the 304 cadence need (a plain sum of inputs would correlate
 * neighbouring feeds). Not for anything secret.
 */
function fmix(h: number): number {
  let x = h >>> 0;
  x ^= x >>> 16;
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  x ^= x >>> 16;
  return x >>> 0;
}

// Numbers past 2^32 (epoch-based slots stay below it; this is for safety) fold in their high part.
const part = (n: number): number => (n >>> 0) ^ Math.floor(n / 4294967296);

/** A 32-bit hash of up to four integers (fixed arity: no array per call on the request path). */
export function hash(a: number, b = 0, c = 0, d = 0): number {
  let h = fmix(part(a) ^ 0x9e3779b9);
  h = fmix(h ^ Math.imul(part(b) + 0x7f4a7c15, 0x27d4eb2d));
  h = fmix(h ^ Math.imul(part(c) + 0x165667b1, 0x9e3779b1));
  return fmix(h ^ Math.imul(part(d) + 0x3c6ef372, 0x85ebca77));
}

/** The same hash as a float in [0, 1). */
export const unit = (a: number, b = 0, c = 0, d = 0): number => hash(a, b, c, d) / 4294967296;
