import { describe, expect, it } from "vitest";
import { MAX_LIST_ITEMS, MAX_PAIRS, pairsOf } from "./details";

describe("pairsOf", () => {
  it("reads an object as its keys, nested ones dotted", () => {
    expect(
      pairsOf({ fingerprint: "ab12", filter: { stage: "fetch", until: "7d" }, count: 3 }),
    ).toEqual([
      { key: "fingerprint", value: "ab12" },
      { key: "filter.stage", value: "fetch" },
      { key: "filter.until", value: "7d" },
      { key: "count", value: "3" },
    ]);
  });

  it("joins a list of plain values and numbers a list of objects", () => {
    expect(
      pairsOf({ ids: [1, 2, 3], groups: [{ code: "http_5xx" }, { code: "timeout" }] }),
    ).toEqual([
      { key: "ids", value: "1, 2, 3" },
      { key: "groups[0].code", value: "http_5xx" },
      { key: "groups[1].code", value: "timeout" },
    ]);
  });

  it("says what it left out of a long list and a large row", () => {
    const ids = Array.from({ length: 25 }, (_, i) => i);
    const [pair] = pairsOf({ ids });
    expect(pair?.value).toMatch(new RegExp(`, ${MAX_LIST_ITEMS - 1} … 15 more$`));
    const wide = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`k${i}`, i]));
    const pairs = pairsOf(wide);
    expect(pairs).toHaveLength(MAX_PAIRS + 1);
    expect(pairs.at(-1)).toEqual({ key: "…", value: "20 more values" });
  });

  it("shows empty, null and bare values plainly", () => {
    expect(pairsOf(null)).toEqual([]);
    expect(pairsOf("source-1", "id")).toEqual([{ key: "id", value: "source-1" }]);
    expect(pairsOf({ reason: null, list: [], opts: {} })).toEqual([
      { key: "reason", value: "–" },
      { key: "list", value: "none" },
      { key: "opts", value: "none" },
    ]);
  });
});
