import { describe, expect, it } from "vitest";
import { safeNext } from "./safeNext";

const ORIGIN = "http://localhost:3000";

describe("safeNext", () => {
  it("keeps a path of this site, query and fragment included", () => {
    expect(safeNext("/sources?state=paused#top", ORIGIN)).toBe("/sources?state=paused#top");
    expect(safeNext("/dead-letters", ORIGIN)).toBe("/dead-letters");
    expect(safeNext(`${ORIGIN}/queues`, ORIGIN)).toBe("/queues");
    expect(safeNext(null, ORIGIN)).toBe("/");
    expect(safeNext("", ORIGIN)).toBe("/");
  });

  it("sends anything a browser would resolve to another origin home", () => {
    // As URLSearchParams hands them over (already percent-decoded).
    for (const next of [
      "/\t/evil.example",
      "/\n/evil.example",
      "/\r/evil.example",
      "/\t\\evil.example",
      "//evil.example",
      "/\\evil.example",
      "\\\\evil.example",
      "https://evil.example",
      "http://localhost:3001/",
      "javascript:alert(1)",
      "data:text/html,hi",
      " //evil.example",
    ]) {
      expect(safeNext(next, ORIGIN), JSON.stringify(next)).toBe("/");
    }
  });
});
