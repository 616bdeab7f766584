import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireRealPostgres, testServerUrl } from "@/lib/testing/db";

// The CLI's output is a contract that outside checks parse, so it is tested as they use it:
// a real process, stdout parsed as JSON, exit codes read.

const run = promisify(execFile);
let dataDir: string;

function cli(args: string[], env: Record<string, string | undefined> = {}) {
  const server = testServerUrl();
  return run("npm", ["run", "-s", "cli", "--", ...args], {
    env: {
      ...process.env,
      DATABASE_URL: server,
      WIREWATCH_DATA_DIR: dataDir,
      LOG_LEVEL: "silent",
      ...env,
    },
    maxBuffer: 16 * 1024 * 1024,
  }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e) => ({ code: e.code as number, stdout: e.stdout as string, stderr: e.stderr as string }),
  );
}

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), "ww-cli-"));
});
afterAll(() => rm(dataDir, { recursive: true, force: true }));

describe("npm run -s cli", () => {
  it("replay seed-000 --json prints seed 000's table as one JSON array", async () => {
    const { code, stdout } = await cli(["replay", "seed-000", "--json"]);
    expect(code).toBe(0);
    const steps = JSON.parse(stdout);
    expect(steps).toEqual([
      { step: 1, result: "inserted", version: 1, auditRows: 1, notified: true, deleted: false },
      { step: 2, result: "upgraded", version: 2, auditRows: 2, notified: true, deleted: false },
      { step: 3, result: "unchanged", version: 2, auditRows: 3, notified: false, deleted: false },
      { step: 4, result: "unchanged", version: 2, auditRows: 4, notified: false, deleted: false },
      { step: 5, result: "updated", version: 3, auditRows: 5, notified: true, deleted: false },
      { step: 6, result: "unchanged", version: 3, auditRows: 6, notified: false, deleted: false },
      { step: 7, result: "tombstoned", version: 4, auditRows: 7, notified: true, deleted: true },
      { step: 8, result: "unchanged", version: 4, auditRows: 8, notified: false, deleted: true },
    ]);
  });

  it("read commands refuse to create an embedded database, naming the directory", async () => {
    const missing = path.join(dataDir, "never-started");
    for (const args of [
      ["dlq", "stats"],
      ["dlq", "list"],
      ["dlq", "show", "1"],
      ["dlq", "requeue", "--all", "--dry-run"],
      ["repair", "--dry-run"],
    ]) {
      const r = await cli(args, { DATABASE_URL: undefined, WIREWATCH_DATA_DIR: missing });
      expect(r.code, args.join(" ")).toBe(1);
      expect(r.stderr).toContain(`no embedded database in ${missing}`);
      expect(r.stdout).toBe("");
    }
    expect(existsSync(missing)).toBe(false);
  });

  it("repair --dry-run --json reports on the configured database", async () => {
    // A database the app made before (a write command creates one, as `npm start` does).
    expect((await cli(["repair", "--apply", "--json"], { DATABASE_URL: undefined })).code).toBe(0);
    const { code, stdout } = await cli(["repair", "--dry-run", "--json"], {
      DATABASE_URL: undefined,
    });
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ dryRun: true, examined: 0, changed: 0, rows: [] });
  });

  it("fails clearly on bad usage, bad configuration and an unreachable database", async () => {
    const usage = await cli(["repair"]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/exactly one of --dry-run or --apply/);

    const config = await cli(["repair", "--dry-run"], { DATABASE_POOL_SIZE: "lots" });
    expect(config.code).toBe(1);
    expect(config.stderr).toMatch(/invalid configuration:\s+DATABASE_POOL_SIZE/);

    const down = await cli(["repair", "--dry-run"], {
      DATABASE_URL: "postgresql://postgres@127.0.0.1:1/none",
    });
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/cannot reach PostgreSQL at 127\.0\.0\.1:1\/none/);
  });
});

describe("npm run -s cli -- chaos stories", () => {
  it("refuses bad options and the embedded database, saying why", async () => {
    const bad = await cli(["chaos", "stories", "--runs", "x"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--runs takes a whole number/);
    const embedded = await cli(["chaos", "stories", "--runs", "1"], { DATABASE_URL: "" });
    expect(embedded.code).toBe(1);
    expect(embedded.stderr).toMatch(/set DATABASE_URL/);
  });

  it.skipIf(!requireRealPostgres("chaos stories through the CLI"))(
    "--json prints exactly the contract's keys",
    async () => {
      const { code, stdout, stderr } = await cli([
        "chaos",
        "stories",
        "--runs",
        "3",
        "--seed",
        "11",
        "--json",
      ]);
      expect(stderr).toBe("");
      expect(code).toBe(0);
      const report = JSON.parse(stdout);
      expect(report).toEqual({
        runs: 3,
        mismatches: 0,
        duplicateNotifications: 0,
        resurrections: 0,
        seed: 11,
      });
    },
    120_000,
  );
});
