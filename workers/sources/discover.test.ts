import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { fixedResolver, startServer, type TestServer } from "@/workers/fetcher/testing/servers";
import { advertisedFeeds, checkSourceUrl, discoverFeeds, previewFeed } from "./discover";

const ATOM = `<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>Site Atom</title>
<id>urn:x</id><updated>2026-12-02T08:00:00Z</updated>
<entry><id>urn:1</id><title>One</title><updated>2026-12-02T08:00:00Z</updated></entry></feed>`;

describe("advertisedFeeds", () => {
  it("reads <link rel=alternate> of feed types only, resolved against the page or <base>, once each", () => {
    const html = `<html><head>
      <base href="https://cdn.example.com/news/">
      <LINK REL="alternate" TYPE="application/atom+xml" HREF="atom.xml" title="Atom &amp; more">
      <link rel='alternate nofollow' type='application/rss+xml; charset=utf-8' href='/rss?a=1&amp;b=2'>
      <link rel="alternate" type="application/feed+json" href="https://example.com/feed.json"/>
      <link rel="alternate" type="text/html" hreflang="bn" href="/bn/">
      <link rel="stylesheet" type="text/css" href="/s.css">
      <link rel="alternate" type="application/rss+xml" href="javascript:alert(1)">
      <link rel="alternate" type="application/rss+xml" href="atom.xml">
      <link rel="alternate" type="application/rss+xml">
    </head></html>`;
    expect(advertisedFeeds(html, "https://example.com/")).toEqual([
      {
        url: "https://cdn.example.com/news/atom.xml",
        title: "Atom & more",
        type: "application/atom+xml",
        via: "link",
      },
      {
        url: "https://cdn.example.com/rss?a=1&b=2",
        title: null,
        type: "application/rss+xml",
        via: "link",
      },
      {
        url: "https://example.com/feed.json",
        title: null,
        type: "application/feed+json",
        via: "link",
      },
    ]);
  });

  it("finds nothing in a page without feed links", () => {
    expect(
      advertisedFeeds("<html><head><title>x</title></head></html>", "https://example.com/"),
    ).toEqual([]);
  });
});

describe("checkSourceUrl", () => {
  it("refuses what no fetch should try, naming why", () => {
    expect(checkSourceUrl("http://[::ffff:7f00:1]/", false)).toMatchObject({
      code: "blocked_ssrf",
    });
    expect(checkSourceUrl("http://0x7f.1/", false)).toMatchObject({ code: "blocked_ssrf" });
    expect(checkSourceUrl("http://printer.local/feed", false)).toMatchObject({
      code: "blocked_ssrf",
    });
    expect(checkSourceUrl("file:///etc/passwd", false)).toMatchObject({ code: "invalid_url" });
    expect(checkSourceUrl("http://127.0.0.1:8080/", true)).toHaveProperty("url");
    expect(checkSourceUrl("https://example.com/feed", false)).toHaveProperty("url");
  });
});

describe("discoverFeeds and previewFeed over HTTP", () => {
  let db: TestDatabase;
  let site: TestServer;

  beforeAll(async () => {
    db = await createTestDatabase();
    site = await startServer((req, res) => {
      const path = new URL(req.url ?? "/", "http://x").pathname;
      if (path === "/atom.xml") {
        res.setHeader("content-type", "application/atom+xml");
        res.end(ATOM);
      } else if (path === "/blog") {
        res.setHeader("content-type", "text/html");
        res.end("<html><head><title>No links</title></head></html>");
      } else {
        res.statusCode = 404;
        res.end();
      }
    });
  });

  afterAll(async () => {
    await site?.close();
    await db?.drop();
  });

  // About 4 s: seven paths at the host's rate budget, shared with the polls (sharedRateBudget).
  it("a page that advertises nothing: the common paths on its origin, robots.txt asked first", async () => {
    const found = await discoverFeeds(db, `${site.origin}/blog`, { allowPrivate: true });
    expect(found.problem).toBeNull();
    expect(found.candidates).toEqual([
      {
        url: `${site.origin}/atom.xml`,
        title: "Site Atom",
        type: "application/atom+xml",
        via: "path",
      },
    ]);
    expect(site.hits("/robots.txt")).toBe(1);
    expect(site.hits("/feed")).toBe(1);
  });

  it("a feed URL pasted directly is its own candidate", async () => {
    const found = await discoverFeeds(db, `${site.origin}/atom.xml`, { allowPrivate: true });
    expect(found.candidates).toMatchObject([{ url: `${site.origin}/atom.xml`, via: "direct" }]);
  });

  it("a public name that resolves to a private address is refused before any request", async () => {
    const before = site.connections();
    const seen = await previewFeed(db, "http://news.example.com/feed", {
      allowPrivate: false,
      deps: { resolver: fixedResolver("10.0.0.7") },
    });
    expect(seen).toMatchObject({
      ok: false,
      ssrf: { allowed: false },
      problem: { code: "blocked_ssrf" },
    });
    expect(seen.ssrf.message).toContain("10.0.0.7 is private");
    expect(site.connections()).toBe(before);
  });
});
