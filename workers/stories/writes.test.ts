import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "@/lib/db";
import { createTestDatabase, requireRealPostgres, type TestDatabase } from "@/lib/testing/db";
import type { Story } from "./events";
import { closeStory, saveStory } from "./writes";

const story = (id: string, version: number, title = `v${version}`): Story => ({
  id,
  ticker: "ACME",
  version,
  title,
  strong: false,
  articles: [],
  created_at: "2026-12-01T00:00:00.000Z",
  updated_at: "2026-12-01T00:00:00.000Z",
});

type Write = { kind: "save"; version: number } | { kind: "close"; version: number };

/** What the row must be after any order of these writes: the seed's two rules, as a model. */
function model(writes: Write[]) {
  const closes = writes.filter((w) => w.kind === "close");
  const saves = writes.filter((w) => w.kind === "save").map((w) => w.version);
  if (closes.length === 0) return { closed: false, version: Math.max(...saves) };
  return null; // closed: the version depends on what came before the first close (checked apart)
}

async function apply(db: Database, id: string, w: Write) {
  if (w.kind === "save") await saveStory(db, "desk", story(id, w.version));
  else await closeStory(db, "desk", id, w.version, "ACME");
}

describe("the two writes (seed 001)", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    await db.prisma.source.create({ data: { id: "desk", name: "Desk", kind: "story-api" } });
  });
  afterAll(() => db?.drop());
  const row = (id: string) =>
    db.prisma.story.findUniqueOrThrow({ where: { sourceId_id: { sourceId: "desk", id } } });

  it("saves only newer snapshots, and a closed story never comes back", async () => {
    expect(await saveStory(db, "desk", story("a", 2))).toBe(true);
    expect(await saveStory(db, "desk", story("a", 1, "late"))).toBe(false); // a late update
    expect(await saveStory(db, "desk", story("a", 2, "again"))).toBe(false); // twice
    expect(await row("a")).toMatchObject({ version: 2, closed: false, story: { title: "v2" } });
    await closeStory(db, "desk", "a", 3, "ACME");
    expect(await saveStory(db, "desk", story("a", 9, "stale read"))).toBe(false);
    expect(await row("a")).toMatchObject({ version: 3, closed: true, story: null });
    // A 404 (version 0) keeps the greatest version; a close of an unseen story leaves a row.
    await closeStory(db, "desk", "a", 0, null);
    expect(await row("a")).toMatchObject({ version: 3, closed: true, ticker: "ACME" });
    await closeStory(db, "desk", "b", 5, "ACME");
    expect(await saveStory(db, "desk", story("b", 1))).toBe(false);
    expect(await row("b")).toMatchObject({ version: 5, closed: true });
  });

  it("any order of saves and closes ends in the same row", async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 1, max: 8 }), { minLength: 1, maxLength: 8 }),
        fc.option(fc.integer({ min: 1, max: 9 }), { nil: undefined }),
        fc.array(fc.nat(), { minLength: 20, maxLength: 20 }),
        async (versions, closeAt, shuffle) => {
          const id = `p${n++}`;
          const writes: Write[] = versions.map((version) => ({ kind: "save", version }));
          if (closeAt !== undefined) writes.push({ kind: "close", version: closeAt });
          const order = writes
            .map((w, i) => ({ w, k: shuffle[i % shuffle.length] ?? 0 }))
            .sort((x, y) => x.k - y.k)
            .map((x) => x.w);
          for (const w of order) await apply(db, id, w);
          const r = await row(id);
          const expected = model(writes);
          if (expected)
            expect(r).toMatchObject({ ...expected, story: { version: expected.version } });
          else {
            expect(r.closed).toBe(true);
            expect(r.story).toBeNull();
            expect(r.version).toBeGreaterThanOrEqual(closeAt as number);
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe.skipIf(!requireRealPostgres("racing story writers"))(
  "racing handlers on PostgreSQL",
  () => {
    let db: TestDatabase;
    const others: Database[] = [];
    beforeAll(async () => {
      db = await createTestDatabase();
      await db.prisma.source.create({ data: { id: "desk", name: "Desk", kind: "story-api" } });
      for (let i = 0; i < 8; i++) others.push(await db.connectAnother(2));
    });
    afterAll(() => db?.drop());

    it("8 connections writing versions of 200 stories in shuffled orders agree with the model", async () => {
      const ids = Array.from({ length: 200 }, (_, i) => `r${i}`);
      // Each story: versions 1..6, closed at 7 for every third story.
      const writes = ids.flatMap((id, i) => {
        const list: Array<[string, Write]> = [1, 2, 3, 4, 5, 6].map((v) => [
          id,
          { kind: "save", version: v },
        ]);
        if (i % 3 === 0) list.push([id, { kind: "close", version: 7 }]);
        return list;
      });
      await Promise.all(
        others.map(async (conn, c) => {
          const mine = [...writes].sort(() => (c % 2 ? 1 : -1) * (Math.random() - 0.5));
          for (const [id, w] of mine) await apply(conn, id, w);
        }),
      );
      const rows = await db.prisma.story.findMany({ where: { sourceId: "desk", id: { in: ids } } });
      expect(rows).toHaveLength(200);
      for (const r of rows) {
        const i = Number(r.id.slice(1));
        if (i % 3 === 0) expect(r, r.id).toMatchObject({ closed: true, version: 7, story: null });
        else expect(r, r.id).toMatchObject({ closed: false, version: 6, story: { version: 6 } });
      }
    });
  },
);
