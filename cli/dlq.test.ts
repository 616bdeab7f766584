import { execFile } from "node:child_process";
import { rm } from "node:fs/promises";
import { userInfo } from "node:os";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Database, openDatabase } from "@/lib/db";
import { createScratchDatabase, dropDatabase } from "@/lib/scratchDatabase";
import { testServerUrl } from "@/lib/testing/db";
import { makeDeadLetters } from "@/workers/queue/deadLetters/testing";

// `dlq` as an operator uses it: a real process on a database seeded with dead letters (a scratch
// database on the test server, or a PGlite directory, closed while the CLI runs).

const exec = promisify(execFile);
const server = testServerUrl();
let where: string;
let seeded: { fetch: string[]; parse: string[]; fingerprint: string };

function cli(args: string[]) {
  return exec("npm", ["run", "-s", "cli", "--", "dlq", ...args], {
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

async function withDb<T>(fn: (db: Database) => Promise<T>): Promise<T> {
  const db = await openDatabase(server ? { url: where, poolSize: 2 } : { dataDir: where });
  try {
    return await fn(db);
  } finally {
    await db.close();
  }
}

beforeAll(async () => {
  const scratch = await createScratchDatabase("ww_dlq_cli", server, { poolSize: 2 });
  where = scratch.where;
  const db = scratch.db;
  const fetch = await makeDeadLetters(
    db,
    "fetch",
    [1, 2, 3].map((i) => ({
      key: `f${i}`,
      error: Object.assign(new Error(`timeout after ${i}00 ms`), { code: "E_TIMEOUT" }),
    })),
  );
  const parse = await makeDeadLetters(db, "parse", [{ key: "p1", error: new TypeError("bad") }]);
  const [row] = await db.prisma.$queryRaw<{ fingerprint: string }[]>`
    SELECT fingerprint FROM jobs WHERE id = ${fetch[0]}::bigint`;
  seeded = { fetch, parse, fingerprint: row?.fingerprint ?? "" };
  await db.close();
});
afterAll(async () => {
  if (!where) return;
  if (server) await dropDatabase(server, new URL(where).pathname.slice(1));
  else await rm(where, { recursive: true, force: true });
});

describe("npm run -s cli -- dlq", () => {
  it("refuses bad usage clearly (exit 2), before touching the database", async () => {
    const cases: [string[], RegExp][] = [
      [[], /dlq needs one of list, show, stats, requeue, discard/],
      [["purge"], /unknown subcommand "purge"/],
      [["requeue"], /dlq requeue needs a filter or --id; pass --all/],
      [["discard", "--dry-run"], /dlq discard needs a filter or --id; pass --all/],
      [["list", "--fingerprint", "xyz"], /fingerprint: must be 16 hex digits/],
      [["list", "--id", "abc"], /ids\.0: must be a job id/],
      [["list", "--since", "last tuesday"], /--since must be an ISO time or an age/],
      [["list", "--since", "1h", "--until", "2h"], /from must be before to/],
      [["requeue", "--all", "--rate", "0"], /--rate must be a number/],
      [["requeue", "--all", "--limit", "0"], /--limit must be an integer from 1 to 100000/],
      [["discard", "--all", "--force"], /--force is for requeue only/],
      [["list", "--dry-run"], /--dry-run is for requeue and discard only/],
      [["show"], /dlq show needs exactly one id/],
      [["list", "--bogus"], /Unknown option '--bogus'/],
    ];
    const results = await Promise.all(cases.map(([args]) => cli(args)));
    results.forEach((r, i) => {
      const [args, message] = cases[i] as [string[], RegExp];
      expect({ args, code: r.code }).toEqual({ args, code: 2 });
      expect(r.stderr).toMatch(message);
      expect(r.stderr).toMatch(/usage: npm run -s cli/);
    });
  }, 300_000);

  it("lists, shows and counts; requeues by fingerprint after a dry run; discards; all audited", async () => {
    const list = await cli(["list", "--stage", "fetch", "--json"]);
    expect(list.code).toBe(0);
    const page = JSON.parse(list.stdout);
    expect(page.items.map((d: { id: string }) => d.id)).toEqual([...seeded.fetch].reverse());
    expect(page.items[0]).toMatchObject({
      stage: "fetch",
      lastError: { code: "E_TIMEOUT", message: "timeout after 300 ms" },
      fingerprint: seeded.fingerprint,
    });

    const text = await cli(["list", "--limit", "2"]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/E_TIMEOUT: timeout after 300 ms/);
    expect(text.stdout).toMatch(/2 dead letter\(s\); more with --cursor \d+/);

    const stats = JSON.parse((await cli(["stats", "--json"])).stdout);
    expect(stats.depth).toBe(4);
    expect(stats.groups[0]).toMatchObject({ fingerprint: seeded.fingerprint, count: 3 });

    const show = await cli(["show", seeded.parse[0] as string, "--json"]);
    expect(show.code).toBe(0);
    expect(JSON.parse(show.stdout)).toMatchObject({
      id: seeded.parse[0],
      failures: [{ attempt: 1, kind: "error", error: { code: "TypeError" } }],
      // Claims are counted per queue and minute, not kept per job: a job that failed by throwing
      // has no lease events (those are expiries, reclaims and releases).
      leaseEvents: [],
    });
    expect((await cli(["show", "999999"])).code).toBe(1);

    const dry = await cli(["requeue", "--fingerprint", seeded.fingerprint, "--dry-run", "--json"]);
    expect(dry.code).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({ dryRun: true, matched: 3, requeued: 3 });

    const done = await cli([
      "requeue",
      "--fingerprint",
      seeded.fingerprint,
      "--rate",
      "100",
      "--actor",
      "alice",
    ]);
    expect(done.code).toBe(0);
    expect(done.stdout).toMatch(/requeue \(done\): matched 3, requeued 3 over 0\.0 s at 100\/s/);

    const discard = await cli(["discard", "--id", seeded.parse[0] as string, "--json"]);
    expect(JSON.parse(discard.stdout)).toMatchObject({ dryRun: false, discarded: 1 });
    expect(JSON.parse((await cli(["stats", "--json"])).stdout).depth).toBe(0);

    await withDb(async (db) => {
      const audit = await db.prisma.adminAudit.findMany({ orderBy: { id: "asc" } });
      expect(audit.map((a) => [a.actor, a.action, a.dryRun, a.affected])).toEqual([
        [`cli:${userInfo().username}`, "dead_letters.requeue", true, 3],
        ["alice", "dead_letters.requeue", false, 3],
        [`cli:${userInfo().username}`, "dead_letters.discard", false, 1],
      ]);
      expect(audit[1]?.target).toMatchObject({
        filter: { fingerprint: seeded.fingerprint },
        ratePerSecond: 100,
      });
      const ready = await db.prisma.job.count({ where: { state: "ready", requeues: 1 } });
      expect(ready).toBe(3);
    });
  }, 300_000); // a dozen CLI processes one after another, each opening the database
});
