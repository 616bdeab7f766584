import { describe, expect, it } from "vitest";
import { id, isId, MAX_INT64, text, textProblem } from "./validation";

describe("text()", () => {
  it("refuses what PostgreSQL cannot store: a NUL, a lone surrogate", () => {
    const schema = text(200);
    for (const bad of ["\u0000", "a\u0000b", "\uD800", "x\uDBFF", "\uDC00", "\uDFFFx"]) {
      expect(schema.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
    }
    expect(textProblem("a\u0000")).toMatch(/NUL/);
    expect(textProblem("a\uD800")).toMatch(/lone surrogate/);
  });

  it("keeps real text, surrogate pairs (emoji) included, trimmed", () => {
    const schema = text(200, { min: 1 });
    expect(schema.parse("  নতুন খবর 📈  ")).toBe("নতুন খবর 📈");
    expect(schema.safeParse("   ").success).toBe(false);
    expect(schema.safeParse("x".repeat(201)).success).toBe(false);
    expect(text(10, { trim: false }).parse(" s ")).toBe(" s ");
  });
});

describe("id()", () => {
  it("takes 1 … 2^63-1 and nothing above, below or beside it", () => {
    expect(isId(MAX_INT64.toString())).toBe(true);
    expect(isId("1")).toBe(true);
    for (const bad of [
      "9223372036854775808",
      "9999999999999999999",
      "0",
      "-1",
      "1.5",
      "0x10",
      "01",
      " 1",
      "",
    ]) {
      expect(isId(bad), bad).toBe(false);
    }
    expect(id("a job id").safeParse("9223372036854775808").error?.issues[0]?.message).toBe(
      "must be a job id (1 to 9223372036854775807)",
    );
  });
});
