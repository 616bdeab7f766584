import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseOpml } from "./parse";
import { importedSourceId, MAX_IMPORTED_SOURCES, planImport } from "./plan";

const fixture = (name: string) =>
  parseOpml(readFileSync(path.join(import.meta.dirname, "testdata", name), "utf8"));

describe("planImport", () => {
  it("reports every problem of a file line by line, and plans only the good lines", () => {
    const plan = planImport(fixture("problems.opml"), []);
    expect(plan.problems.map((p) => [p.line, p.code, p.severity])).toEqual([
      [9, "duplicate_in_file", "notice"],
      [11, "invalid_url", "error"],
      [12, "unsupported_scheme", "error"],
      [13, "unsupported_scheme", "error"],
      [14, "invalid_url", "error"],
      [15, "blocked_ssrf", "error"],
      [16, "blocked_ssrf", "error"],
      [17, "blocked_ssrf", "error"],
      [18, "blocked_ssrf", "error"],
      [19, "blocked_ssrf", "error"],
      [20, "blocked_ssrf", "error"],
      [21, "not_a_feed", "error"],
      [22, "not_a_feed", "error"],
      [23, "not_a_feed", "error"],
    ]);
    expect(plan.errors).toBe(13);
    expect(plan.problems[0]?.message).toBe(
      "https://lwn.net/headlines/rss/ in Good is the same feed as line 8 in Good",
    );
    expect(plan.problems.find((p) => p.line === 16)?.message).toBe(
      "xmlUrl 169.254.169.254 refused: 169.254.169.254 is linkLocal",
    );
    // The password is not repeated in the message.
    expect(plan.problems.find((p) => p.line === 14)?.message).not.toContain("secret");
    expect(plan.add.map((s) => [s.line, s.name, s.url])).toEqual([
      [8, "LWN.net", "https://lwn.net/headlines/rss"],
      // No title or text: the site's host, as Miniflux and NewsBlur name it.
      [24, "www.example.org", "https://example.org/untitled.xml"],
    ]);
  });

  it("gives a feed the sources file's defaults for a feed", () => {
    const [s] = planImport(fixture("inoreader.opml"), []).add;
    expect(s?.config).toEqual({
      id: s?.id,
      name: "BBC News - World",
      kind: "feed",
      url: "https://feeds.bbci.co.uk/news/world/rss.xml",
      allowPrivate: false,
      enabled: true,
      pollIntervalSeconds: 300,
      collectors: ["A"],
      folder: "World",
    });
    expect(s?.folder).toEqual(["World"]);
  });

  it("files each feed in the folder path of its enclosing outlines, none at the top", () => {
    const folders = (name: string) =>
      planImport(fixture(name), []).add.map((s) => [s.name, s.config.folder ?? null]);
    expect(folders("newsblur.opml")).toEqual([
      ["Daring Fireball", null],
      ["Quanta Magazine", "Science"],
      ["NASA Breaking News", "Science/Space"],
      ["কালের কণ্ঠ", "বাংলা"],
    ]);
    // Feedly files a feed under every folder it is in: the first one counts.
    expect(folders("feedly.opml")).toContainEqual(["The Verge - All Posts", "Tech"]);
  });

  it('refuses, by line, a feed whose folders make a path past 200 characters; keeps a "/" in a name', () => {
    const deep = Array.from({ length: 14 }, (_, i) => `Folder number ${i + 1}`);
    const open = deep.map((n) => `<outline text="${n}">`).join("");
    const close = "</outline>".repeat(deep.length);
    const doc = parseOpml(
      `<opml version="2.0"><body>\n${open}\n<outline text="Deep" xmlUrl="https://deep.example/rss"/>\n${close}\n` +
        '<outline text="Science/Space"><outline text="Slash" xmlUrl="https://slash.example/rss"/></outline>\n' +
        "</body></opml>",
    );
    const plan = planImport(doc, []);
    expect(plan.problems).toEqual([
      expect.objectContaining({
        line: 3,
        code: "invalid_folder",
        severity: "error",
        url: "https://deep.example/rss",
        message: expect.stringMatching(
          /^https:\/\/deep\.example\/rss: the folder path it is in is 2\d\d characters long \(at most 200/,
        ),
      }),
    ]);
    expect(plan.errors).toBe(1);
    expect(plan.add.map((s) => [s.name, s.folder, s.config.folder])).toEqual([
      ["Slash", ["Science/Space"], "Science\\/Space"],
    ]);
  });

  it("skips what is already a source, whatever its origin, by the canonical URL", () => {
    const plan = planImport(fixture("feedly.opml"), [
      // The sources file's copy differs only by a trailing slash and a tracking parameter.
      {
        id: "verge",
        url: "https://www.theverge.com/rss/index.xml/?utm_source=x",
        configOrigin: "file",
      },
      { id: "pa", url: "https://www.prothomalo.com/feed/", configOrigin: "dashboard" },
      { id: "a-page", url: null, configOrigin: "file" },
    ]);
    expect(plan.problems.map((p) => [p.line, p.code, p.existingId ?? null, p.severity])).toEqual([
      [10, "already_a_source", "verge", "notice"],
      [14, "duplicate_in_file", null, "notice"],
      [17, "already_a_source", "pa", "notice"],
    ]);
    expect(plan.problems[0]?.message).toContain('already source "verge" (from the sources file)');
    expect(plan.problems[2]?.message).toContain("(added in the dashboard)");
    expect(plan.errors).toBe(0);
    expect(plan.add.map((s) => s.line)).toEqual([9, 13]);
  });

  it("the same feed always gets the same id, readable by its host", () => {
    const a = planImport(fixture("feedly.opml"), []).add;
    const b = planImport(fixture("feedly.opml"), []).add;
    expect(a.map((s) => s.id)).toEqual(b.map((s) => s.id));
    expect(a[0]?.id).toMatch(/^feeds\.arstechnica\.com-[0-9a-f]{10}$/);
    const ipv6 = new URL("http://[2001:db8::1]/feed");
    expect(importedSourceId(ipv6.href, ipv6)).toMatch(/^2001:db8::1-[0-9a-f]{10}$/);
    // An id taken by another source (same hash, any URL) is already a source too.
    const taken = a[0]?.id as string;
    const again = planImport(fixture("feedly.opml"), [
      { id: taken, url: "https://elsewhere.example/", configOrigin: "dashboard" },
    ]);
    expect(again.problems[0]).toMatchObject({
      line: 9,
      code: "already_a_source",
      existingId: taken,
    });
  });

  it("a FreshRSS scraped page is not a feed", () => {
    const plan = planImport(fixture("freshrss.opml"), []);
    expect(plan.problems).toMatchObject([
      { line: 13, code: "not_a_feed", message: expect.stringContaining('"HTML+XPath"') },
    ]);
    expect(plan.add).toHaveLength(2);
  });

  it("--allow-private lets loopback and private addresses through, marked allowPrivate", () => {
    const doc = parseOpml(
      '<opml><body><outline text="sim" xmlUrl="http://127.0.0.1:4010/feeds/meridian.xml"/></body></opml>',
    );
    expect(planImport(doc, []).problems).toMatchObject([{ code: "blocked_ssrf" }]);
    const plan = planImport(doc, [], { allowPrivate: true });
    expect(plan.problems).toEqual([]);
    expect(plan.add[0]?.config.allowPrivate).toBe(true);
  });

  it("a malformed file plans nothing", () => {
    const plan = planImport(fixture("malformed.opml"), []);
    expect(plan).toMatchObject({ readable: false, add: [], errors: 1 });
  });

  it("cuts a long name at 200 code points without splitting a Bangla letter", () => {
    const name = "খবর".repeat(100);
    const doc = parseOpml(
      `<opml><body><outline text="${name}" xmlUrl="https://a.example/"/></body></opml>`,
    );
    const planned = planImport(doc, []).add[0]?.name as string;
    expect([...planned]).toHaveLength(200);
    expect(planned.endsWith("…")).toBe(true);
  });

  it(`adds at most ${MAX_IMPORTED_SOURCES} in one import, saying where it stopped`, () => {
    const outlines = Array.from(
      { length: MAX_IMPORTED_SOURCES + 2 },
      (_, i) => `<outline xmlUrl="https://a.example/${i}"/>`,
    ).join("\n");
    const plan = planImport(parseOpml(`<opml><body>\n${outlines}\n</body></opml>`), []);
    expect(plan.add).toHaveLength(MAX_IMPORTED_SOURCES);
    expect(plan.problems).toMatchObject([{ line: MAX_IMPORTED_SOURCES + 2, code: "too_many" }]);
  });
});
