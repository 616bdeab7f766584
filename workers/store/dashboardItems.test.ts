import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BadCursorError, getItem, searchItems } from "@/lib/dashboard/items";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { edit, observe, retract } from "./index";

let db: TestDatabase;
const wire = { sourceId: "wire", collector: "A", origin: "primary" } as const;
let key: string;

beforeAll(async () => {
  db = await createTestDatabase();
  await db.prisma.source.createMany({
    data: [
      { id: "wire", name: "Wire", kind: "stream" },
      { id: "other", name: "Other", kind: "feed" },
    ],
  });
  // Seed 000's shape: fallback first, upgrade, duplicate, edit, late thin, retraction twice.
  const link = "https://news.example/o/wire/1";
  const page = { sourceId: "wire", collector: "page", origin: "fallback" } as const;
  const first = await observe(db, { ...page, title: "Port strike enters third day", link });
  key = first.entryKey as string;
  await observe(db, {
    ...wire,
    guid: link,
    link,
    title: "Port strike enters third day",
    category: "labour",
    revision: 1,
  });
  await observe(db, {
    ...wire,
    collector: "B",
    guid: link,
    link,
    title: "Port strike enters third day",
    category: "labour",
    revision: 1,
  });
  await edit(db, {
    ...wire,
    guid: link,
    link,
    title: "Port strike ends after three days",
    category: "labour",
    revision: 2,
  });
  await observe(db, { ...page, title: "Port strike enters third day", link });
  await retract(db, { ...wire, guid: link, link, revision: 3 });
  await retract(db, { ...wire, guid: link, link, revision: 3 });
  for (let i = 0; i < 5; i++) {
    await observe(db, {
      ...wire,
      sourceId: "other",
      guid: `o-${i}`,
      title: `Other story ${i} at 100%_off`,
    });
  }
});
afterAll(() => db?.drop());

describe("searchItems", () => {
  it("lists every row newest update first, paged by cursor without repeats", async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let i = 0; i < 10; i++) {
      const page = await searchItems(db, { limit: 2, cursor });
      seen.push(...page.items.map((r) => r.entryKey));
      if (!page.nextCursor) break;
      cursor = page.nextCursor;
    }
    expect(seen).toHaveLength(6);
    expect(new Set(seen).size).toBe(6);
  });

  it("finds a title substring case-insensitively, with % and _ standing for themselves", async () => {
    const strike = await searchItems(db, { q: "STRIKE ENDS" });
    expect(strike.items.map((r) => r.title)).toEqual(["Port strike ends after three days"]);
    expect(strike.items[0]).toMatchObject({ state: "retracted", sourceName: "Wire", version: 4 });
    expect((await searchItems(db, { q: "100%_off" })).items).toHaveLength(5);
    expect((await searchItems(db, { q: "100%_of_" })).items).toHaveLength(0);
    expect((await searchItems(db, { q: "%" })).items).toHaveLength(5);
  });

  it("filters by source and looks an entry key up directly", async () => {
    expect((await searchItems(db, { sourceId: "other" })).items).toHaveLength(5);
    const byKey = await searchItems(db, { q: key });
    expect(byKey.items.map((r) => r.entryKey)).toEqual([key]);
  });

  it("examines at most one window of rows per request", async () => {
    const page = await searchItems(db, { q: "no such headline" });
    expect(page).toMatchObject({ items: [], nextCursor: null, scanned: 6, windowEnded: false });
  });

  it("refuses a forged cursor", async () => {
    await expect(searchItems(db, { cursor: "bm9wZQ" })).rejects.toBeInstanceOf(BadCursorError);
  });
});

describe("getItem", () => {
  it("shows every observation with what the writer did, the versions and the tombstone", async () => {
    const detail = await getItem(db, key);
    expect(detail).not.toBeNull();
    if (!detail) return;
    expect(detail.observationCount).toBe(7);
    // Seed 000's table: inserted v1, upgraded v2, duplicates change nothing, edit v3, the late
    // thin observation changes nothing, the retraction tombstones (v4), its repeat nothing.
    expect(
      detail.observations.map((o) => [o.collector, o.origin, o.result, o.version, o.versionAfter]),
    ).toEqual([
      ["page", "fallback", "inserted", 1, 1],
      ["A", "primary", "upgraded", 2, 2],
      ["B", "primary", "unchanged", null, 2],
      ["A", "primary", "updated", 3, 3],
      ["page", "fallback", "unchanged", null, 3],
      ["A", "primary", "tombstoned", 4, 4],
      ["A", "primary", "unchanged", null, 4],
    ]);
    expect(detail.versions.map((v) => v.result)).toEqual([
      "inserted",
      "upgraded",
      "updated",
      "tombstoned",
    ]);
    expect(detail.item).toMatchObject({
      title: "Port strike ends after three days",
      category: "labour",
      state: "retracted",
      firstCollector: "page",
    });
    expect(detail.item.deletedAt).not.toBeNull();
    expect(detail.nextAfter).toBeNull();
  });

  it("pages the timeline and carries the standing version across pages", async () => {
    const all = await getItem(db, key);
    const third = all?.observations[2]?.id as string;
    const rest = await getItem(db, key, { after: third });
    expect(rest?.observations.map((o) => o.versionAfter)).toEqual([3, 3, 4, 4]);
  });

  it("shows repeat sightings folded into one observation, how many and the last", async () => {
    const poll = { sourceId: "other", collector: "A", origin: "poll", guid: "folded-1" } as const;
    let folded = "";
    for (const minute of [0, 1, 2, 3]) {
      const out = await observe(db, {
        ...poll,
        title: "Same headline every poll",
        observedAt: new Date(Date.UTC(2026, 11, 10, 9, minute)),
      });
      folded = out.entryKey;
    }
    const detail = await getItem(db, folded);
    expect(detail?.observations).toHaveLength(1);
    expect(detail?.observations[0]).toMatchObject({
      result: "inserted",
      sightings: 4,
      observedAt: "2026-12-10T09:00:00.000Z",
      lastSeenAt: "2026-12-10T09:03:00.000Z",
    });
    expect(detail?.sightingCount).toBe(4);
  });

  it("is null for an unknown key", async () => {
    expect(await getItem(db, "0".repeat(64))).toBeNull();
  });
});
