import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "@/lib/db";
import { syncSources } from "@/workers/sources/syncSources";

// The CLI as an operator runs it: a real process on the embedded database (a data directory of
// its own), stdout read as text or parsed as JSON, exit codes checked.

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "../..");
const testdata = (name: string) => path.join(ROOT, "workers/sources/opml/testdata", name);
let dir: string;
let dataDir: string;

function cli(args: string[], { data = dataDir }: { data?: string } = {}) {
  return run("npm", ["run", "-s", "cli", "--", "sources", ...args], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: "", WIREWATCH_DATA_DIR: data, LOG_LEVEL: "silent" },
    maxBuffer: 16 * 1024 * 1024,
  }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e) => ({ code: e.code as number, stdout: e.stdout as string, stderr: e.stderr as string }),
  );
}

async function sourceRows(data = dataDir) {
  const db = await openDatabase({ dataDir: data, mustExist: true });
  try {
    return await db.prisma.source.findMany({ orderBy: { id: "asc" } });
  } finally {
    await db.close();
  }
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "ww-opml-cli-"));
  dataDir = path.join(dir, "db");
  // The database an app made, with one source from the sources file.
  const db = await openDatabase({ dataDir });
  await syncSources(db, [
    {
      id: "verge",
      name: "The Verge",
      kind: "feed",
      url: "https://www.theverge.com/rss/index.xml",
      allowPrivate: false,
      enabled: true,
      pollIntervalSeconds: 60,
      collectors: ["A"],
    },
  ]);
  await db.close();
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("npm run -s cli -- sources", () => {
  it("bad usage exits 2 with the usage", async () => {
    for (const args of [
      [],
      ["import-opml"],
      ["import-opml", "a", "b"],
      ["import-opml", "--nope", "x"],
      ["frobnicate"],
    ]) {
      const r = await cli(args);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stderr).toContain("sources import-opml FILE");
    }
  });

  it("a malformed file: exit 1, the line where reading failed, no database needed or made", async () => {
    const missing = path.join(dir, "never-made");
    const r = await cli(["import-opml", testdata("malformed.opml")], { data: missing });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^line 12: error malformed_xml: not well-formed XML/m);
    expect(r.stdout).toContain("could not be read as OPML; nothing was imported");
    expect(existsSync(missing)).toBe(false);
  });

  it("--dry-run --json: what would be added and skipped, and nothing changes", async () => {
    const before = await sourceRows();
    const r = await cli(["import-opml", testdata("feedly.opml"), "--dry-run", "--json"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report).toMatchObject({
      dryRun: true,
      applied: false,
      readable: true,
      opml: { version: "1.0", title: "Subscriptions in feedly Cloud" },
      counts: { added: 3, skipped: 2, errors: 0, notices: 2 },
      auditId: null,
    });
    expect(report.added.map((s: { line: number }) => s.line)).toEqual([9, 13, 17]);
    expect(report.added[2]).toMatchObject({ name: "প্রথম আলো", folder: ["বাংলা"] });
    expect(report.skipped).toEqual([
      expect.objectContaining({ line: 10, code: "already_a_source", existingId: "verge" }),
      expect.objectContaining({ line: 14, code: "duplicate_in_file", severity: "notice" }),
    ]);
    expect(await sourceRows()).toEqual(before);
  });

  it("--strict with errors imports nothing and exits 1", async () => {
    const before = await sourceRows();
    const r = await cli(["import-opml", testdata("problems.opml"), "--strict"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("--strict, so nothing was imported");
    expect(r.stdout).toMatch(/^line 15: error blocked_ssrf: /m);
    expect(r.stdout).not.toMatch(/^line \d+: added? /m);
    expect(await sourceRows()).toEqual(before);
  });

  it("a file with errors: every problem by line, the good lines imported, exit 1", async () => {
    const r = await cli(["import-opml", testdata("problems.opml")]);
    expect(r.code).toBe(1);
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines.filter((l) => /^line \d+: error /.test(l)).map((l) => l.split(":")[0])).toEqual(
      [11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23].map((n) => `line ${n}`),
    );
    expect(lines).toContain(
      "line 16: error blocked_ssrf: xmlUrl 169.254.169.254 refused: 169.254.169.254 is linkLocal",
    );
    expect(lines.filter((l) => /^line \d+: added /.test(l)).map((l) => l.split(":")[0])).toEqual([
      "line 8",
      "line 24",
    ]);
    expect(lines.at(-1)).toMatch(
      /^imported .*problems\.opml: added 2 dashboard sources, skipped 14 \(13 errors, 1 notice\); audit row \d+/,
    );
    const rows = await sourceRows();
    expect(rows.filter((s) => s.configOrigin === "dashboard").map((s) => s.url)).toEqual([
      "https://example.org/untitled.xml",
      "https://lwn.net/headlines/rss",
    ]);
  });

  it("export-opml, then import into an empty database: the same feeds (Bangla, & in URLs)", async () => {
    // The NewsBlur file's Bangla (numeric references there) and Feedly's & in a URL.
    expect((await cli(["import-opml", testdata("newsblur.opml")])).code).toBe(0);
    expect((await cli(["import-opml", testdata("feedly.opml")])).code).toBe(0);
    const out = path.join(dir, "export.opml");
    const exported = await cli(["export-opml", "--out", out]);
    expect(exported.code).toBe(0);
    const feeds = (await sourceRows()).filter((s) => s.kind === "feed");
    expect(exported.stdout).toBe(`wrote ${feeds.length} feed sources to ${out}\n`);
    const opml = await readFile(out, "utf8");
    expect(opml).toContain('text="কালের কণ্ঠ"');
    expect(opml).toContain('xmlUrl="https://news.example-wire.com/rss?section=top&amp;format=xml"');
    // stdout by default, the same document.
    const toStdout = await cli(["export-opml"]);
    expect(toStdout.stdout.replace(/<dateCreated>.*<\/dateCreated>/, "")).toBe(
      opml.replace(/<dateCreated>.*<\/dateCreated>/, ""),
    );

    const fresh = path.join(dir, "fresh");
    const imported = await cli(["import-opml", out, "--json"], { data: fresh });
    expect(imported.code).toBe(0);
    expect(JSON.parse(imported.stdout).counts).toEqual({
      added: feeds.length,
      skipped: 0,
      errors: 0,
      notices: 0,
    });
    // Folders too: NewsBlur's nested Science/Space, Feedly's Bangla one, a file source at the top.
    const pairs = (rows: { name: string; url: string | null; folder: string | null }[]) =>
      rows.map((s) => `${s.name} | ${s.url} | ${s.folder ?? "(top)"}`).sort();
    expect(pairs(await sourceRows(fresh))).toEqual(pairs(feeds));
    expect(pairs(feeds)).toEqual(
      expect.arrayContaining([
        "NASA Breaking News | https://www.nasa.gov/rss/dyn/breaking_news.rss | Science/Space",
        "প্রথম আলো | https://www.prothomalo.com/feed/ | বাংলা",
        "The Verge | https://www.theverge.com/rss/index.xml | (top)",
      ]),
    );

    // And back into the database it came from, through stdin: all already there, exit 0.
    await writeFile(path.join(dir, "again.opml"), opml);
    const again = await run(
      "sh",
      ["-c", `npm run -s cli -- sources import-opml - --json < "${path.join(dir, "again.opml")}"`],
      {
        cwd: ROOT,
        env: { ...process.env, DATABASE_URL: "", WIREWATCH_DATA_DIR: dataDir, LOG_LEVEL: "silent" },
      },
    );
    const report = JSON.parse(again.stdout);
    expect(report.counts).toMatchObject({ added: 0, errors: 0, skipped: feeds.length });
    expect(report.applied).toBe(false);
  });

  it("export-opml refuses to create a database", async () => {
    const missing = path.join(dir, "not-there");
    const r = await cli(["export-opml"], { data: missing });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`no embedded database in ${missing}`);
    expect(existsSync(missing)).toBe(false);
  });
});
