import { describe, expect, it, vi } from "vitest";
import type { Database } from "@/lib/db";
import { warnIfAutovacuumOff } from "./index";

const server = (setting: unknown) =>
  ({
    kind: "postgres",
    prisma: {
      $queryRaw: () =>
        setting instanceof Error ? Promise.reject(setting) : Promise.resolve([{ on: setting }]),
    },
  }) as unknown as Database;

describe("warnIfAutovacuumOff", () => {
  it("warns once at start when PostgreSQL's autovacuum is off, and only then", async () => {
    const log = { warn: vi.fn(), debug: vi.fn() };
    await warnIfAutovacuumOff(server(false), log);
    expect(log.warn).toHaveBeenCalledWith(expect.stringMatching(/autovacuum is off/));
    log.warn.mockClear();
    await warnIfAutovacuumOff(server(true), log);
    await warnIfAutovacuumOff({ kind: "pglite" } as unknown as Database, log);
    expect(log.warn).not.toHaveBeenCalled();
  });

  it("a setting it cannot read is a debug line, never an error at start", async () => {
    const log = { warn: vi.fn(), debug: vi.fn() };
    await expect(
      warnIfAutovacuumOff(server(new Error("permission denied")), log),
    ).resolves.toBeUndefined();
    expect(log.debug).toHaveBeenCalled();
  });
});
