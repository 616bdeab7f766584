import { execFile } from "node:child_process";
import { rm } from "node:fs/promises";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ShippedEmbedder } from "@/lib/embed/shipped";
import { createScratchDatabase, dropDatabase } from "@/lib/scratchDatabase";
import { insertModel, searchKey, seedSearchCorpus, storeCorpusVectors } from "@/lib/search/testing";
import { ensureModelIndex } from "@/lib/search/vectors";
import { testServerUrl } from "@/lib/testing/db";

// `search` as an operator runs it: a real process (and the shipped model in it) on a database
// holding the search corpus with shipped vectors (a scratch database on the test server, or a
// PGlite directory, closed while the CLI runs).

const exec = promisify(execFile);
const server = testServerUrl();
let where: string;

function cli(args: string[]) {
  return exec("npm", ["run", "-s", "cli", "--", "search", ...args], {
    env: {
      ...process.env,
      DATABASE_URL: server ? where : undefined,
      WIREWATCH_DATA_DIR: server ? undefined : where,
      LOG_LEVEL: "silent",
    },
    maxBuffer: 16 * 1024 * 1024,
  }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e) => ({ code: e.code as number, stdout: e.stdout as string, stderr: e.stderr as string }),
  );
}

beforeAll(async () => {
  const scratch = await createScratchDatabase("ww_search_cli", server, { poolSize: 2 });
  where = scratch.where;
  const db = scratch.db;
  await seedSearchCorpus(db);
  const shipped = new ShippedEmbedder();
  try {
    const id = await insertModel(db, shipped.info, "complete");
    await storeCorpusVectors(db, id, async (texts) => (await shipped.embed(texts)).vectors);
    await ensureModelIndex(db, id, shipped.info.dims);
  } finally {
    await shipped.close();
    await db.close();
  }
});
afterAll(async () => {
  if (!where) return;
  if (server) await dropDatabase(server, new URL(where).pathname.slice(1));
  else await rm(where, { recursive: true, force: true });
});

describe("npm run -s cli -- search", () => {
  it("prints each story with its outlets and why it matched, by meaning when no word is shared", async () => {
    const r = await cli(["monetary policy tightening", "--limit", "3"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const lines = r.stdout.split("\n");
    expect(lines[0]).toMatch(
      /^hybrid search \(meaning: shipped:use-lite@0\.2\.0; (pgvector [\d.]+|portable vectors)\): 3 stories in \d+ ms$/,
    );
    expect(lines[2]).toBe(" 1. Central bank raises interest rates by a quarter point");
    expect(lines[3]).toMatch(/^ {4}The Wire · \d{4}-\d{2}-\d{2} [\d:]+ UTC$/);
    expect(lines[4]).toMatch(/^ {4}why: meaning 0\.\d\d · shipped:use-lite@0\.2\.0$/);
    expect(lines[5]).toBe("    https://wire.example/news/4");
    expect(r.stdout).toMatch(/^more: --cursor \S+$/m);

    const story = await cli(["dockworkers"]);
    expect(story.stdout).toContain(" 1. Dockworkers walk off the job at Chittagong port");
    expect(story.stdout).toContain("3 items from The Wire, The Daily, The Tribune");
    expect(story.stdout).toMatch(/why: lexical #1 \(0\.\d\d\); meaning 0\.\d\d · shipped/);
  });

  it("prints the API's answer as one JSON line with --json, and notes a Bangla query it reads by words only", async () => {
    const r = await cli(["বন্দরে ধর্মঘট", "--json", "--lang", "bn"]);
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split("\n");
    expect(lines).toHaveLength(1);
    const answer = JSON.parse(lines[0] as string);
    expect(answer).toMatchObject({ mode: "fulltext", model: null, queryLanguage: "bn" });
    expect(answer.notices.map((n: { code: string }) => n.code)).toEqual(["model_not_bangla"]);
    expect(answer.hits.map((h: { entryKey: string }) => h.entryKey)).toEqual([searchKey(10)]);

    const human = await cli(["বন্দরে ধর্মঘট"]);
    expect(human.stdout).toMatch(/^note: shipped:use-lite@0\.2\.0 does not read Bangla/m);
  });

  it("refuses bad usage with exit 2 and says what was wrong", async () => {
    const cases: [string[], RegExp][] = [
      [[], /search takes one query/],
      [["a", "b"], /search takes one query/],
      [["  "], /the query must be 1 to 500 characters/],
      [["port", "--limit", "0"], /--limit must be an integer from 1 to 100/],
      [["port", "--lang", "english"], /--lang must be a language code/],
      [["port", "--since", "last week"], /--since must be an ISO date/],
      [["port", "--cursor", "nope"], /cursor: not valid/],
    ];
    const results = await Promise.all(cases.map(([args]) => cli(args)));
    results.forEach((r, i) => {
      const [args, message] = cases[i] as [string[], RegExp];
      expect({ args, code: r.code }).toEqual({ args, code: 2 });
      expect(r.stderr).toMatch(message);
    });
  });
});
