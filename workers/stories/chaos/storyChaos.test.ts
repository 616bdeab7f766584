import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, requireRealPostgres, type TestDatabase } from "@/lib/testing/db";
import { runStoryChaos } from "./storyChaos";

// The full 1,000 runs are the CLI's (`npm run -s cli -- chaos stories --runs 1000 --seed 1`);
// the suite runs a slice of them on every change.
describe.skipIf(!requireRealPostgres("story chaos runs (8 racing handlers)"))(
  "story-API copy under chaos",
  () => {
    let db: TestDatabase;
    beforeAll(async () => {
      db = await createTestDatabase({ poolSize: 20 });
    });
    afterAll(() => db?.drop());

    it("40 seeded runs end with the copy equal to the API, one notification each", async () => {
      const reloads: number[] = [];
      const report = await runStoryChaos(db, {
        runs: 40,
        seed: 9_001,
        onRun: (r) => void reloads.push(r.reloads),
      });
      const failures = report.failed.map(
        (f) => `seed ${f.seed} (${f.mode}): ${f.problems.join("; ")}`,
      );
      expect(failures).toEqual([]);
      expect(report).toMatchObject({
        runs: 40,
        mismatches: 0,
        duplicateNotifications: 0,
        resurrections: 0,
      });
      // Every run's cursor expired once mid-stream, and its catch-up reloaded in full.
      expect(reloads.filter((n) => n < 1)).toEqual([]);
      // Runs that passed leave nothing behind.
      expect(await db.prisma.source.count({ where: { id: { startsWith: "chaos-" } } })).toBe(0);
    }, 240_000);

    it("would catch a consumer that lets a late snapshot reopen a closed story", async () => {
      // The harness is only worth its runs if it fails when the rule breaks: disable the guard
      // in the database for one run and expect resurrections or mismatches.
      await db.prisma.$executeRaw`
        CREATE OR REPLACE FUNCTION chaos_reopen() RETURNS trigger AS $$
        BEGIN
          IF OLD.closed AND NEW.closed THEN NEW.closed := false; NEW.story := '{}'::jsonb; END IF;
          RETURN NEW;
        END $$ LANGUAGE plpgsql`;
      await db.prisma.$executeRaw`
        CREATE TRIGGER chaos_reopen BEFORE UPDATE ON stories FOR EACH ROW EXECUTE FUNCTION chaos_reopen()`;
      try {
        const report = await runStoryChaos(db, { runs: 5, seed: 77 });
        expect(report.mismatches).toBeGreaterThan(0);
      } finally {
        await db.prisma.$executeRaw`DROP TRIGGER chaos_reopen ON stories`;
        await db.prisma.source.deleteMany({ where: { id: { startsWith: "chaos-" } } });
      }
    }, 120_000);
  },
);
