import { createHash } from "node:crypto";

/**
 * MurmurHash3's 32-bit body and finaliser over UTF-16 code units. The SimHash hashes a few hundred
 * shingles per headline: this runs inline at well under a microsecond per shingle, where a
 * node:crypto digest per shingle costs ~1 µs of call overhead alone and the WASM hashers
 * (xxhash-wasm, hash-wasm) need an async start-up that would make every caller async.
 */
export function murmur32(s: string, seed: number): number {
  let h = seed | 0;
  for (let i = 0; i < s.length; i++) {
    let k = s.charCodeAt(i);
    k = Math.imul(k, 0xcc9e2d51);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, 0x1b873593);
    h ^= k;
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  h ^= s.length;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

const SEED_HI = 0x9747b28c;
const SEED_LO = 0x2f6b1d35;

/** A 64-bit feature hash as two unsigned 32-bit halves [hi, lo]. */
export function hash64Parts(s: string): [number, number] {
  return [murmur32(s, SEED_HI), murmur32(s, SEED_LO)];
}

/**
 * The exact-stage fingerprint: 128 bits of SHA-256 over the normalised text, hex. Once per item,
 * so a digest's ~1-2 µs does not matter, and a cryptographic hash makes an accidental collision
 * (two different stories linked as "exact") not a thing to reason about.
 */
export function digest128(s: string): string {
  return createHash("sha256").update(s, "utf8").digest("hex").slice(0, 32);
}
