import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { discoverHub, linksFromHeader } from "./discover";

const fixture = (name: string) => readFileSync(join(__dirname, "testdata", name));

describe("discoverHub", () => {
  it("reads an Atom feed's hub and self, relative ones resolved, entries' links ignored", () => {
    expect(discoverHub("https://example.com/feeds/x", undefined, fixture("atom-hub.xml"))).toEqual({
      hub: "https://pubsubhubbub.example/",
      self: "https://example.com/feeds/atom.xml",
    });
  });

  it("reads atom:link elements in an RSS channel", () => {
    expect(discoverHub("https://example.com/rss", undefined, fixture("rss-hub.xml"))).toEqual({
      hub: "https://hub.example/websub",
      self: "https://example.com/rss",
    });
  });

  it("prefers HTTP Link headers over the body", () => {
    const header = '<https://other-hub.example/>; rel="hub", </rss?x=1>; rel="self"';
    expect(discoverHub("https://example.com/rss", header, fixture("rss-hub.xml"))).toEqual({
      hub: "https://other-hub.example/",
      self: "https://example.com/rss?x=1",
    });
  });

  it("reads a JSON Feed's hubs and feed_url", () => {
    const body = Buffer.from(
      JSON.stringify({
        version: "https://jsonfeed.org/version/1.1",
        title: "j",
        feed_url: "https://example.com/feed.json",
        hubs: [{ type: "WebSub", url: "https://hub.example/" }],
        items: [],
      }),
    );
    expect(discoverHub("https://example.com/feed.json", undefined, body)).toEqual({
      hub: "https://hub.example/",
      self: "https://example.com/feed.json",
    });
  });

  it("finds nothing in a feed without a hub, an unreadable body, or a non-http hub", () => {
    const plain = Buffer.from('<rss version="2.0"><channel><title>t</title></channel></rss>');
    expect(discoverHub("https://example.com/rss", undefined, plain)).toEqual({
      hub: null,
      self: null,
    });
    expect(discoverHub("https://example.com/rss", undefined, Buffer.from("<<<"))).toEqual({
      hub: null,
      self: null,
    });
    expect(linksFromHeader('<javascript:alert(1)>; rel="hub"', "https://example.com/")).toEqual({
      hub: null,
      self: null,
    });
  });

  it("reads rel lists and several Link headers", () => {
    expect(
      linksFromHeader(
        ['<https://h.example/>; rel="hub"; title="x"', "<https://e.example/f>; rel=self"],
        "https://e.example/",
      ),
    ).toEqual({ hub: "https://h.example/", self: "https://e.example/f" });
  });
});
