import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";

// Through a real process, exactly as outside checks call it.
const ROOT = path.resolve(import.meta.dirname, "../..");
const FIXTURES = "workers/parser/testdata";

function cli(...args: string[]) {
  const r = spawnSync("npm", ["run", "-s", "cli", "--", "parse-feed", ...args], {
    cwd: ROOT,
    encoding: "utf8",
  });
  const lines = r.stdout
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { code: r.status, lines, stderr: r.stderr };
}

describe("cli parse-feed", () => {
  it("prints one JSON line per file, in order, and exits 0 when all parse", () => {
    const latin1 = `${FIXTURES}/latin1.rss`;
    const atom = `./${FIXTURES}/atom10.xml`;
    const { code, lines } = cli(latin1, atom);
    expect(code).toBe(0);
    expect(lines).toEqual([
      {
        file: latin1,
        ok: true,
        feed: {
          title: "Café News & Views",
          link: "https://news.example.com/",
          updated: "2010-09-06T04:01:00Z",
        },
        entries: [
          {
            id: "cafe-1",
            title: "Crème brûlée ’s été",
            link: "https://news.example.com/2010/09/creme?utm_source=rss",
            published: "2010-09-06T02:00:00Z",
            summary: "Hot & sweet",
            author: "Chef Anaïs",
          },
          {
            id: "https://news.example.com/2010/09/no-guid",
            title: "No guid here",
            link: "https://news.example.com/2010/09/no-guid/",
          },
        ],
      },
      {
        file: atom,
        ok: true,
        feed: {
          title: "Wire desk",
          link: "https://wire.example.org/",
          id: "urn:uuid:60a76c80-d399-11d9-b93C-0003939e0af6",
          updated: "2024-03-01T11:00:00Z",
        },
        entries: [
          {
            id: "tag:wire.example.org,2024:1",
            title: "Markets open higher",
            link: "https://wire.example.org/1",
            published: "2024-03-01T14:30:00Z",
            updated: "2024-03-01T15:00:00Z",
            summary: "Stocks rose.",
            author: "Desk",
          },
        ],
      },
    ]);
  });

  it("reports a non-feed and a missing file as ok:false, carries on, and exits 1", () => {
    const { code, lines } = cli(
      `${FIXTURES}/not-a-feed.html`,
      `${FIXTURES}/no-such-file.xml`,
      `${FIXTURES}/atom10.xml`,
    );
    expect(code).toBe(1);
    expect(lines.map((l) => [l.file, l.ok])).toEqual([
      [`${FIXTURES}/not-a-feed.html`, false],
      [`${FIXTURES}/no-such-file.xml`, false],
      [`${FIXTURES}/atom10.xml`, true],
    ]);
    expect(lines[0]).toMatchObject({ feed: {}, entries: [] });
    expect(lines[0]?.error).toMatch(/not a feed: the root element is <html>/);
    expect(lines[1]).toMatchObject({ feed: {}, entries: [] });
    expect(lines[1]?.error).toMatch(/ENOENT/);
  });

  it("exits 2 with the usage when no file is given", () => {
    const { code, stderr } = cli();
    expect(code).toBe(2);
    expect(stderr).toMatch(/parse-feed needs at least one FILE/);
  });
});
