import { describe, expect, it } from "vitest";
import { canonicalizeUrl } from "@/lib/canonical";
import { urlKey } from "./urlKey";

describe("urlKey", () => {
  const key = "https://example.com/news/2026/12/01/story-123";
  it.each([
    "https://example.com/news/2026/12/01/story-123",
    "http://example.com/news/2026/12/01/story-123",
    "https://www.example.com/news/2026/12/01/story-123",
    "https://m.example.com/news/2026/12/01/story-123",
    "https://mobile.example.com/news/2026/12/01/story-123/",
    "https://amp.example.com/news/2026/12/01/story-123",
    "https://EXAMPLE.com:443/news/2026/12/01/story-123",
    "http://example.com:80/news/2026/12/01/story-123",
    "https://example.com/news/2026/12/01/story-123/amp",
    "https://example.com/news/2026/12/01/story-123/amp/",
    "https://example.com/news/2026/12/01/story-123.amp",
    "https://example.com/amp/news/2026/12/01/story-123",
    "https://example.com/news/2026/12/01/story-123?amp",
    "https://example.com/news/2026/12/01/story-123?amp=1",
    "https://example.com/news/2026/12/01/story-123?outputType=amp",
    "https://example.com/news/2026/12/01/story-123/index.html",
    "https://example.com/news/2026/12/01/story-123/index.php",
    "https://example.com/news/2026/12/01/story-123#comments",
    "https://example.com/news/2026/12/01/story-123?utm_source=tw&utm_medium=social&utm_campaign=x",
    "https://example.com/news/2026/12/01/story-123?fbclid=IwAR0abc&gclid=x&dclid=y&msclkid=z",
    "https://example.com/news/2026/12/01/story-123?mc_cid=1&mc_eid=2&_ga=3&igshid=4",
    "https://example.com/news/2026/12/01/story-123?ref=home&ref_src=twsrc&cmpid=rss&ocid=msn",
    "https://example.com/news/2026/12/01/story-123?smid=tw-share&sr_share=twitter",
    "https://example.com/news/2026/12/01/story-123?at_medium=rss&at_campaign=feed",
    "  https://www.example.com//news/2026/12/01/story-123/?utm_source=rss#top  ",
  ])("%s has the article's key", (link) => {
    expect(urlKey(link)).toBe(key);
  });

  it("keeps what names the article: path, id parameters (sorted), port, subdomain", () => {
    expect(urlKey("https://example.com/story?id=2&page=1")).toBe(
      "https://example.com/story?id=2&page=1",
    );
    expect(urlKey("https://example.com/story?page=1&id=2&utm_source=x")).toBe(
      "https://example.com/story?id=2&page=1",
    );
    const different = [
      "https://example.com/news/2026/12/01/story-124",
      "https://example.com/news/2026/12/01/story-123?id=7",
      "https://example.com:8080/news/2026/12/01/story-123",
      "https://sport.example.com/news/2026/12/01/story-123",
      "https://example.org/news/2026/12/01/story-123",
      "https://example.com/news/2026/12/01/story-123/page-2",
      "https://example.com/news/2026/12/01/example-amp-story",
    ];
    const keys = new Set([key, ...different.map(urlKey)]);
    expect(keys.size).toBe(different.length + 1);
  });

  it("is null for a non-http(s) or unparsable link, and never throws", () => {
    for (const bad of [
      "",
      "   ",
      "not a url",
      "mailto:desk@example.com",
      "ftp://example.com/a",
      "javascript:alert(1)",
      "/relative/path",
      "http://",
      null,
      undefined,
    ]) {
      expect(urlKey(bad)).toBeNull();
    }
    // Random junk, including lone surrogates and control characters.
    let seed = 7;
    const rand = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed;
    };
    for (let i = 0; i < 2000; i++) {
      const s = Array.from({ length: rand() % 40 }, () =>
        String.fromCharCode(rand() % 0xffff),
      ).join("");
      expect(() => urlKey(s)).not.toThrow();
      expect(() => urlKey(`https://x.com/${s}?${s}=${s}`)).not.toThrow();
    }
  });

  it("leaves seed 003's canonical URL as it was", () => {
    expect(canonicalizeUrl("https://www.example.com/a/amp/?utm_source=x&ref=y")).toBe(
      "https://www.example.com/a/amp?ref=y",
    );
  });
});
