import { describe, expect, it } from "vitest";
import { fingerprint, toJobError } from "./jobError";

// A failure's detail (the extract stage's attempts with raw answers) is kept as JSON, bounded,
// and never changes how failures group.

describe("toJobError's detail", () => {
  it("keeps a JSON detail as it is, outside the fingerprint", () => {
    const detail = { kind: "extract", attempts: [{ provider: "llm", rawText: "{not json" }] };
    const err = Object.assign(new Error("extract: no valid extraction: llm malformed"), {
      code: "malformed",
      detail,
    });
    const e = toJobError(err);
    expect(e).toMatchObject({ code: "malformed", detail });
    const other = toJobError(
      Object.assign(new Error(err.message), { code: "malformed", detail: { other: true } }),
    );
    expect(fingerprint("extract", e)).toBe(fingerprint("extract", other));
    expect(toJobError(new Error("plain"))).not.toHaveProperty("detail");
  });

  it("cuts a detail past 16,000 characters of JSON and drops one JSON cannot hold", () => {
    const big = toJobError(Object.assign(new Error("x"), { detail: { raw: "y".repeat(20_000) } }));
    expect(big.detail).toMatchObject({ truncated: true });
    expect((big.detail as { json: string }).json).toHaveLength(16_000);
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(toJobError(Object.assign(new Error("x"), { detail: cycle }))).not.toHaveProperty(
      "detail",
    );
  });
});
