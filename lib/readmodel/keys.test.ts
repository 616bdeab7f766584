import { describe, expect, it } from "vitest";
import {
  decodeCursor,
  encodeCursor,
  listId,
  orderKey,
  pageKey,
  parseListId,
  ReadModelKeyError,
  storyKey,
} from "@/lib/readmodel/keys";

describe("list ids", () => {
  it("names each filter once", () => {
    expect(listId()).toBe("home");
    expect(listId({ category: null, lang: null })).toBe("home");
    expect(listId({ category: "sports" })).toBe("category:sports");
    expect(listId({ lang: "bn" })).toBe("lang:bn");
    expect(listId({ category: "sports", lang: "bn" })).toBe("category:sports|lang:bn");
  });

  it("round-trips and refuses every other spelling", () => {
    for (const id of ["home", "category:world", "lang:en", "category:world|lang:en"]) {
      expect(listId(parseListId(id))).toBe(id);
    }
    for (const bad of [
      "",
      "Home",
      "lang:en|category:world",
      "|lang:en",
      "category:",
      "category:Sports",
      "category:a:b",
      "category:x|lang:en|lang:bn",
      "category:xlang:en",
      `category:${"a".repeat(41)}`,
    ]) {
      expect(() => parseListId(bad), bad).toThrow(ReadModelKeyError);
    }
  });

  it("refuses filter values a list could not have", () => {
    expect(() => listId({ category: "a|b" })).toThrow(/category/);
    expect(() => listId({ lang: "EN" })).toThrow(/lang/);
    expect(() => listId({ lang: "e n" })).toThrow(ReadModelKeyError);
  });
});

describe("keys", () => {
  it("puts the list last in a page key and versions the order", () => {
    expect(orderKey("category:world|lang:en", 7)).toBe("order:7:category:world|lang:en");
    expect(pageKey("lang:bn", 20, 40)).toBe("page:20:40:lang:bn");
    expect(storyKey("ab")).toBe("story:ab");
  });
});

describe("cursors", () => {
  it("round-trip and are opaque base64url", () => {
    const cursor = { v: 12, o: 40, l: "category:sports|lang:bn" };
    const text = encodeCursor(cursor);
    expect(text).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(text)).toEqual(cursor);
  });

  it("refuse garbage with a bad_cursor code", () => {
    const enc = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
    const bad = [
      "",
      "not a cursor!",
      "a".repeat(600),
      Buffer.from("{not json").toString("base64url"),
      enc(null),
      enc([1, 2]),
      enc({ v: 1, o: 0 }),
      enc({ v: 0, o: 0, l: "home" }),
      enc({ v: 1.5, o: 0, l: "home" }),
      enc({ v: 1, o: -1, l: "home" }),
      enc({ v: 1, o: 100_001, l: "home" }),
      enc({ v: 1, o: 0, l: "nowhere" }),
      enc({ v: 1, o: 0, l: "home", x: 1 }),
      enc({ v: "1", o: 0, l: "home" }),
    ];
    for (const text of bad) {
      try {
        decodeCursor(text);
        expect.unreachable(text);
      } catch (error) {
        expect(error).toBeInstanceOf(ReadModelKeyError);
        expect((error as ReadModelKeyError).code).toBe("bad_cursor");
      }
    }
  });
});
