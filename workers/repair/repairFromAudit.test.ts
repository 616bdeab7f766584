import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { edit, observe, retract } from "@/workers/store";
import { listenForNews } from "@/workers/store/notifications";
import { normalize } from "@/workers/store/observation";
import { repairFromAudit } from "./repairFromAudit";

let db: TestDatabase;

const rich = (i: number) => ({
  sourceId: "wire",
  guid: `story-${i}`,
  origin: "primary" as const,
  collector: "A",
  title: `Headline ${i}`,
  link: `https://news.example/${i}`,
  summary: `Summary ${i}`,
  category: i % 2 ? "markets" : "politics",
  breaking: i % 3 === 0,
  instruments: i % 2 ? ["EURUSD"] : [],
  language: "en",
  revision: 1,
});

/**
 * What seed 000's insert-or-ignore writer left behind: the fallback observer's thin row won the
 * race, and the rich primary observation that followed was recorded in the audit table but
 * never reached the row.
 */
async function corruptLikeInsertOrIgnore(i: number) {
  await observe(db, { ...rich(i), origin: "fallback", summary: undefined, revision: undefined });
  const obs = normalize(rich(i), "observe");
  await db.prisma.newsEvent.create({
    data: {
      entryKey: obs.entryKey,
      sourceId: "wire",
      collector: "A",
      origin: "primary",
      kind: "observe",
      observedAt: new Date(),
      revision: 1n,
      payload: obs.row as object,
      result: "unchanged",
    },
  });
  return obs.entryKey;
}

beforeAll(async () => {
  db = await createTestDatabase();
  await db.prisma.source.create({ data: { id: "wire", name: "Wire", kind: "stream" } });
});
afterAll(() => db?.drop());

describe("repair from the audit table", () => {
  it("finds exactly the 100 corrupted rows, fixes them silently, and then finds nothing", async () => {
    // 150 healthy items through the real writer: upgrades, edits, retractions, duplicates.
    for (let i = 0; i < 150; i++) {
      await observe(db, { ...rich(i), origin: "fallback" });
      await observe(db, rich(i));
      await observe(db, { ...rich(i), collector: "B" });
      if (i % 5 === 0) await edit(db, { ...rich(i), title: `Edited ${i}`, revision: 2 });
      if (i % 7 === 0) await retract(db, { ...rich(i), revision: 3 });
    }
    const corrupted = new Set<string>();
    for (let i = 1_000; i < 1_100; i++) corrupted.add(await corruptLikeInsertOrIgnore(i));

    const dry = await repairFromAudit(db, { dryRun: true, actor: "test", batchSize: 64 });
    expect(dry.examined).toBe(250);
    expect(new Set(dry.rows.map((r) => r.entryKey))).toEqual(corrupted);
    const sample = dry.rows.find((r) => r.entryKey === [...corrupted][1]);
    expect(sample?.diff).toMatchObject({
      quality: { from: "fallback", to: "authoritative" },
      summary: { from: null, to: "Summary 1001" },
      category: { from: null, to: "markets" },
      instruments: { from: [], to: ["EURUSD"] },
    });
    expect(sample?.diff).not.toHaveProperty("title");
    // a dry run changes nothing
    expect(await db.prisma.news.count({ where: { quality: "fallback" } })).toBe(100);

    const news = await listenForNews(db);
    await news.settle();
    const applied = await repairFromAudit(db, { dryRun: false, actor: "test", batchSize: 64 });
    expect(applied).toMatchObject({ examined: 250, changed: 100, skipped: 0 });
    expect(await news.settle()).toEqual([]); // no NOTIFY
    await news.stop();

    const fixed = await db.prisma.news.findMany({ where: { entryKey: { in: [...corrupted] } } });
    expect(fixed.every((r) => r.quality === "authoritative" && r.category && r.version === 2)).toBe(
      true,
    );
    expect(fixed.every((r) => r.firstCollector === "A" && r.lastResult === "repaired")).toBe(true);

    const again = await repairFromAudit(db, { dryRun: true, actor: "test" });
    expect(again.rows).toEqual([]);

    const runs = await db.prisma.repairRun.findMany({ orderBy: { id: "asc" } });
    expect(runs.map((r) => [r.dryRun, r.status, r.rowsExamined, r.rowsChanged, r.actor])).toEqual([
      [true, "finished", 250, 100, "test"],
      [false, "finished", 250, 100, "test"],
      [true, "finished", 250, 0, "test"],
    ]);
    expect(runs.every((r) => r.finishedAt !== null && r.rowsTotal === 250)).toBe(true);
    expect(
      await db.prisma.repairChange.count({ where: { runId: runs[1]?.id, applied: true } }),
    ).toBe(100);
  });

  it("never lifts a tombstone", async () => {
    const key = await corruptLikeInsertOrIgnore(5_000);
    await db.prisma.news.update({ where: { entryKey: key }, data: { deletedAt: new Date() } });
    const applied = await repairFromAudit(db, { dryRun: false, actor: "test" });
    expect(applied.rows.find((r) => r.entryKey === key)?.diff).not.toHaveProperty("deleted");
    const row = await db.prisma.news.findUniqueOrThrow({ where: { entryKey: key } });
    expect(row.deletedAt).not.toBeNull();
    expect(row.category).toBe("politics");
  });
});
