import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it, vi } from "vitest";

// A mistyped WIREWATCH_CONFIG used to read as "no sources" and switch every file source off.
const dir = mkdtempSync(path.join(tmpdir(), "wirewatch-startup-"));
const missing = path.join(dir, "wirewatch.config.jsn");
process.env.WIREWATCH_CONFIG = missing;
process.env.WIREWATCH_WORKERS = "inline";
// Never opened: start-up must stop before the database.
process.env.DATABASE_URL = "postgresql://postgres@127.0.0.1:1/never_opened";

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("start-up with a named sources file that does not exist", () => {
  it("the server stops with the file's path before opening the database", async () => {
    const exit = vi.spyOn(process, "exit").mockImplementation(((code?: number) => {
      throw new Error(`exit ${code}`);
    }) as never);
    const printed = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const { startServer } = await import("./instrumentation-node");
      await expect(startServer()).rejects.toThrow("exit 1");
      expect(printed.mock.calls.flat().join("\n")).toContain(
        `WIREWATCH_CONFIG names ${missing}, which does not exist`,
      );
    } finally {
      exit.mockRestore();
      printed.mockRestore();
    }
  });

  it("npm run workers stops with exit code 1 and the file's path", async () => {
    const run = promisify(execFile)(
      process.execPath,
      ["node_modules/tsx/dist/cli.mjs", "workers/main.ts"],
      { env: { ...process.env, LOG_LEVEL: "silent" }, timeout: 60_000 },
    );
    const failed = await run.then(
      () => null,
      (err: { code: number; stderr: string }) => err,
    );
    expect(failed?.code).toBe(1);
    expect(failed?.stderr).toContain(`WIREWATCH_CONFIG names ${missing}, which does not exist`);
  });
});
