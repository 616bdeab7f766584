import { describe, expect, it } from "vitest";
import { parseDeadLetterFilter } from "./filter";

describe("the dead-letter filter (library and CLI) uses lib/validation text()", () => {
  it("refuses a NUL or a lone surrogate in queue, sourceId and code, naming the field", () => {
    expect(() => parseDeadLetterFilter({ queue: "fetch\u0000" })).toThrow(
      /queue: must not contain a NUL/,
    );
    expect(() => parseDeadLetterFilter({ sourceId: "\uD800" })).toThrow(
      /sourceId: must be valid Unicode/,
    );
    expect(() => parseDeadLetterFilter({ code: "\u0000" })).toThrow(/code: must not contain a NUL/);
  });
});
