import { PGlite } from "@electric-sql/pglite";
import { afterEach, describe, expect, it } from "vitest";
import { loadMigrations, MigrationError, migrate } from "./migrate";

// The migrator on its own, against a throwaway PGlite (the same SQL runs on PostgreSQL in every
// database test, through openDatabase).

let lite: PGlite | undefined;
afterEach(async () => {
  await lite?.close();
  lite = undefined;
});

describe("migrate", () => {
  it("applies every migration once and records it the way Prisma does", async () => {
    lite = await PGlite.create("memory://");
    const all = await loadMigrations();
    expect(all.length).toBeGreaterThan(0);
    expect(await migrate(lite, all, { lock: false })).toEqual(all.map((m) => m.name));
    expect(await migrate(lite, all, { lock: false })).toEqual([]);
    const { rows } = await lite.query<{
      migration_name: string;
      checksum: string;
      finished_at: Date | null;
      applied_steps_count: number;
    }>(`SELECT migration_name, checksum, finished_at, applied_steps_count FROM _prisma_migrations`);
    expect(rows).toHaveLength(all.length);
    for (const [i, m] of all.entries()) {
      expect(rows[i]).toMatchObject({
        migration_name: m.name,
        checksum: m.checksum,
        applied_steps_count: 1,
      });
      expect(rows[i]?.finished_at).toBeInstanceOf(Date);
    }
  });

  it("refuses to run when an applied migration was edited afterwards", async () => {
    lite = await PGlite.create("memory://");
    const all = await loadMigrations();
    await migrate(lite, all, { lock: false });
    const edited = all.map((m, i) => (i === 0 ? { ...m, checksum: "0".repeat(64) } : m));
    await expect(migrate(lite, edited, { lock: false })).rejects.toThrow(
      /was changed after it was applied/,
    );
  });

  it("rolls back a failing migration completely and says which one", async () => {
    lite = await PGlite.create("memory://");
    const broken = [
      { name: "20990101000000_ok", sql: "CREATE TABLE a (x int);", checksum: "a".repeat(64) },
      {
        name: "20990101000001_broken",
        sql: "CREATE TABLE b (x int); SELECT no_such_function();",
        checksum: "b".repeat(64),
      },
    ];
    const err = await migrate(lite, broken, { lock: false }).catch((e) => e);
    expect(err).toBeInstanceOf(MigrationError);
    expect(err.message).toMatch(/20990101000001_broken failed/);
    const tables = await lite.query<{ t: string }>(
      `SELECT table_name AS t FROM information_schema.tables WHERE table_name IN ('a', 'b')`,
    );
    expect(tables.rows.map((r) => r.t)).toEqual(["a"]);
    const recorded = await lite.query(`SELECT migration_name FROM _prisma_migrations`);
    expect(recorded.rows).toEqual([{ migration_name: "20990101000000_ok" }]);
  });
});
