import { createHash, scrypt, timingSafeEqual } from "node:crypto";
import { promisify } from "node:util";

const scryptAsync = promisify(scrypt) as (
  password: string,
  salt: string,
  keylen: number,
) => Promise<Buffer>;

/**
 * Compares a submitted password with the configured one in constant time: both sides are hashed
 * to 32 bytes first, so neither the content nor the length of the secret shows in the timing.
 */
export function passwordMatches(given: string, expected: string): boolean {
  const a = createHash("sha256").update(given, "utf8").digest();
  const b = createHash("sha256").update(expected, "utf8").digest();
  return timingSafeEqual(a, b);
}

const fingerprints = new Map<string, Promise<string>>();

/**
 * A slow one-way fingerprint of the configured password (scrypt, salted with the cookie secret),
 * stored so that a process started with another password notices and ends the old sessions.
 * Computed once per process and password.
 */
export function passwordFingerprint(password: string, salt: string): Promise<string> {
  const key = `${salt}\u0000${password}`;
  let found = fingerprints.get(key);
  if (!found) {
    found = scryptAsync(password, `wirewatch-admin:${salt}`, 32).then((b) => b.toString("hex"));
    fingerprints.set(key, found);
  }
  return found;
}
