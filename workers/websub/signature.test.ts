import { describe, expect, it } from "vitest";
import { SIGNATURE_METHODS, sign, verifySignature } from "./signature";

const body = Buffer.from("<rss><channel><title>t</title></channel></rss>");

describe("verifySignature", () => {
  it("accepts each method the recommendation names, computed with the secret", () => {
    for (const method of SIGNATURE_METHODS) {
      expect(verifySignature("s3cret", body, sign("s3cret", body, method))).toEqual({
        ok: true,
        method,
      });
    }
    // Upper-case hex and a method in capitals are the same signature.
    const upper = sign("s3cret", body).replace(
      /=(.*)$/,
      (_, hex: string) => `=${hex.toUpperCase()}`,
    );
    expect(verifySignature("s3cret", body, upper.replace("sha256", "SHA256")).ok).toBe(true);
  });

  it("refuses a missing header, another secret, another body, a truncated digest", () => {
    expect(verifySignature("s3cret", body, null)).toMatchObject({ reason: "missing_signature" });
    expect(verifySignature("s3cret", body, "  ")).toMatchObject({ reason: "missing_signature" });
    expect(verifySignature("s3cret", body, sign("other", body))).toMatchObject({
      reason: "bad_signature",
    });
    expect(verifySignature("s3cret", Buffer.from("x"), sign("s3cret", body))).toMatchObject({
      reason: "bad_signature",
    });
    expect(verifySignature("s3cret", body, sign("s3cret", body).slice(0, -2))).toMatchObject({
      reason: "bad_signature",
    });
  });

  it("refuses methods outside the list and malformed values", () => {
    for (const header of ["md5=abcd", "sha256", "sha256=xyz", "=abcd", "sha256=ab cd"]) {
      expect(verifySignature("s3cret", body, header)).toMatchObject({ reason: "bad_signature" });
    }
  });
});
