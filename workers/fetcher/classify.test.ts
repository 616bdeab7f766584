import { describe, expect, it } from "vitest";
import {
  classifyError,
  classifyStatus,
  countsAgainstBreaker,
  FetchError,
  isRetryable,
} from "./classify";

const errno = (code: string) => Object.assign(new Error(code), { code });

describe("classifyStatus", () => {
  it.each([
    [200, "ok"],
    [204, "ok"],
    [304, "not_modified"],
    [400, "http_4xx"],
    [403, "http_4xx"],
    [404, "http_404"],
    [410, "http_410"],
    [429, "http_429"],
    [500, "http_5xx"],
    [503, "http_5xx"],
    [300, "redirect"],
  ])("%i → %s", (status, code) => {
    expect(classifyStatus(status)).toBe(code);
  });
});

describe("classifyError", () => {
  it.each([
    ["ENOTFOUND", "dns"],
    ["EAI_AGAIN", "dns"],
    ["ECONNREFUSED", "connect"],
    ["EHOSTUNREACH", "connect"],
    ["ECONNRESET", "reset"],
    ["EPIPE", "reset"],
    ["ETIMEDOUT", "timeout"],
    ["CERT_HAS_EXPIRED", "tls"],
    ["ERR_TLS_CERT_ALTNAME_INVALID", "tls"],
    ["DEPTH_ZERO_SELF_SIGNED_CERT", "tls"],
    ["UNABLE_TO_VERIFY_LEAF_SIGNATURE", "tls"],
    ["HPE_INVALID_CONSTANT", "protocol"],
    ["Z_DATA_ERROR", "protocol"],
  ])("%s → %s", (code, expected) => {
    expect(classifyError(errno(code))).toBe(expected);
  });
  it("keeps a FetchError's own code and stage", () => {
    const err = new FetchError("too_large", "too big");
    expect(classifyError(err)).toBe("too_large");
    expect(err.message).toBe("fetcher: too big");
  });
});

describe("what each code does", () => {
  it("retries only 429, 5xx and timeouts", () => {
    expect(["http_429", "http_5xx", "timeout"].every((c) => isRetryable(c as never))).toBe(true);
    expect(
      ["http_4xx", "http_404", "dns", "tls", "too_large"].some((c) => isRetryable(c as never)),
    ).toBe(false);
  });
  it("404/410, robots and SSRF refusals never count against the breaker", () => {
    for (const c of [
      "http_404",
      "http_410",
      "blocked_robots",
      "blocked_ssrf",
      "not_modified",
      "ok",
    ]) {
      expect(countsAgainstBreaker(c as never)).toBe(false);
    }
    // A 200 that is not a feed is the source failing, like a 503.
    for (const c of [
      "http_5xx",
      "http_429",
      "http_4xx",
      "timeout",
      "dns",
      "tls",
      "too_large",
      "parse_error",
    ]) {
      expect(countsAgainstBreaker(c as never)).toBe(true);
    }
  });
});
