import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * X-Hub-Signature (WebSub §8): `method=hexdigest`, the HMAC of the push body with hub.secret.
 * The recommendation names sha1, sha256, sha384 and sha512; anything else is refused, so a hub
 * cannot talk us down to a weaker hash than these.
 */
export const SIGNATURE_METHODS = ["sha1", "sha256", "sha384", "sha512"] as const;
export type SignatureMethod = (typeof SIGNATURE_METHODS)[number];

export type SignatureVerdict =
  | { ok: true; method: SignatureMethod }
  | { ok: false; reason: "missing_signature" | "bad_signature"; message: string };

export function sign(secret: string, body: Buffer | string, method: SignatureMethod = "sha256") {
  return `${method}=${createHmac(method, secret).update(body).digest("hex")}`;
}

/**
 * Checks the header against the body: the digest is computed for the method the header names and
 * compared in constant time on equal-length buffers (a malformed or short hex string is refused
 * before any compare, so timing says nothing about the secret).
 */
export function verifySignature(
  secret: string,
  body: Buffer,
  header: string | null,
): SignatureVerdict {
  if (!header?.trim()) {
    return { ok: false, reason: "missing_signature", message: "X-Hub-Signature is missing" };
  }
  const m = /^\s*([a-z0-9]+)=([0-9a-f]+)\s*$/i.exec(header);
  const method = m?.[1]?.toLowerCase() as SignatureMethod | undefined;
  if (!m || !method || !(SIGNATURE_METHODS as readonly string[]).includes(method)) {
    return {
      ok: false,
      reason: "bad_signature",
      message: `X-Hub-Signature must be method=hex with method one of ${SIGNATURE_METHODS.join(", ")}`,
    };
  }
  const expected = createHmac(method, secret).update(body).digest();
  const given = Buffer.from(m[2] as string, "hex");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return {
      ok: false,
      reason: "bad_signature",
      message: "X-Hub-Signature does not match the body",
    };
  }
  return { ok: true, method };
}
