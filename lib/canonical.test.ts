import { describe, expect, it } from "vitest";
import { canonicalId, canonicalizeUrl, entryKey } from "./canonical";

describe("canonicalizeUrl (seed 003's rules)", () => {
  it.each([
    [
      "https://Example.COM/a/b/?utm_source=x&b=2&a=1#top",
      undefined,
      "https://example.com/a/b?a=1&b=2",
    ],
    ["/story/1/", "https://news.example/feed.xml", "https://news.example/story/1"],
    [
      "https://news.example/?fbclid=1&gclid=2&mc_cid=3&mc_eid=4",
      undefined,
      "https://news.example/",
    ],
    [
      "https://news.example/x?utm_campaign=a&UTM_medium=b&id=7",
      undefined,
      "https://news.example/x?id=7",
    ],
  ])("%s (base %s) -> %s", (raw, base, expected) => {
    expect(canonicalizeUrl(raw, base)).toBe(expected);
  });

  it("throws on something that is not a URL", () => {
    expect(() => canonicalizeUrl("not a url")).toThrow(TypeError);
  });
});

describe("canonicalId and entryKey", () => {
  it("prefers guid, then atom id, then the canonical link, then title|published", () => {
    const link = "https://News.example/a/?utm_source=rss";
    expect(canonicalId({ guid: " g-1 ", atomId: "urn:x", link })).toBe("g-1");
    expect(canonicalId({ atomId: "urn:x", link })).toBe("urn:x");
    expect(canonicalId({ link })).toBe("https://news.example/a");
    expect(canonicalId({ link: "::", title: "T", published: "2026-06-12T09:00:00.000Z" })).toBe(
      "T|2026-06-12T09:00:00.000Z",
    );
    expect(canonicalId({ title: "  " })).toBeNull();
  });

  it("is sha256 of source | canonical id", () => {
    // sha256("wire|g-1"), computed independently
    expect(entryKey("wire", "g-1")).toBe(
      "841727d56fdad8a3ab6d0f412129c975e16c7f9c4e8b568e6cf3c9302326f0ce",
    );
    expect(entryKey("wire", "g-1")).toMatch(/^[0-9a-f]{64}$/);
    expect(entryKey("wire", "g-1")).not.toBe(entryKey("wire2", "g-1"));
  });
});
