/** Vector arithmetic every provider shares: unit length in place, and cosine of unit vectors. */

/**
 * Scales `v` to unit (L2) length in place and returns it; null when it cannot be: all zeros, or
 * a NaN or infinity anywhere (a provider's answer that must not be stored).
 */
export function toUnitLength(v: Float32Array): Float32Array | null {
  let sum = 0;
  for (let i = 0; i < v.length; i++) sum += (v[i] as number) * (v[i] as number);
  if (!Number.isFinite(sum) || sum === 0) return null;
  const scale = 1 / Math.sqrt(sum);
  for (let i = 0; i < v.length; i++) v[i] = (v[i] as number) * scale;
  return v;
}

/** The cosine of two unit vectors of one model (their dot product). */
export function cosine(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) {
    throw new Error(`cosine of vectors of ${a.length} and ${b.length} dimensions`);
  }
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += (a[i] as number) * (b[i] as number);
  return dot;
}
