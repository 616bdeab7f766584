import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { removeItem, unlinkItem } from "@/workers/dedup/clusters";
import { dedupStage } from "@/workers/dedup/stage";
import {
  change,
  createOutlets,
  put,
  TEXTS,
  tombstone,
  versionOf,
  type Written,
} from "@/workers/dedup/testing/items";
import { sweepStage } from "@/workers/line/sweep";
import { INDEX_STAGE, indexItem, indexStage, indexStories, reconcileChanges } from "./indexStage";

// The index stage on a real database (PGlite, or PostgreSQL with TEST_DATABASE_URL): items
// written through the real writer, decided by the real dedup stage, indexed into read_stories.

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
  await createOutlets(db);
});
afterAll(() => db?.drop());
beforeEach(async () => {
  await db.prisma.$executeRawUnsafe(
    `TRUNCATE news, news_events, dedup_items, dedup_clusters, dedup_cluster_events, dedup_links,
              dedup_reviews, dedup_settings, dedup_anchors, jobs, line_cursors, item_extractions,
              read_stories RESTART IDENTITY`,
  );
});

const ctx = () => ({ db, signal: new AbortController().signal, attempt: 1 });
const EPOCH = new Date(0);

/** Dedup, then index, at the item's current version, as the line hands on. */
async function through(w: Written): Promise<string[]> {
  const job = { entryKey: w.entryKey, version: await versionOf(db, w.entryKey) };
  const verdicts: string[] = [await dedupStage(db).handle(job, ctx())];
  if (verdicts[0] === "survived") verdicts.push(await indexItem(db, job));
  return verdicts;
}

interface Row {
  story_key: string;
  item_version: number;
  title: string;
  category: string | null;
  language: string | null;
  outlets: { entryKey: string; sourceId: string; source: string; link: string | null }[];
  outlet_count: number;
  fetched_at: Date;
  updated_at: Date;
  indexed_at: Date;
}

const rows = () =>
  db.prisma.$queryRaw<Row[]>`
    SELECT story_key, item_version, title, category, language, outlets, outlet_count, fetched_at,
           updated_at, indexed_at
    FROM read_stories ORDER BY first_seen_at, story_key`;
const row = async (key: string) => (await rows()).find((r) => r.story_key === key);

describe("the index stage", () => {
  it("a new story appears with its outlet, the feed's language, and fetched_at from its observation", async () => {
    const observedAt = new Date(Date.now() - 90_000);
    const a = await put(db, "wire", "strike-w", {
      ...TEXTS.strike,
      link: "https://wire.example/strike",
      observedAt,
    });
    expect(await through(a)).toEqual(["survived", "survived"]);
    const r = await row(a.entryKey);
    expect(r).toMatchObject({
      item_version: 1,
      title: TEXTS.strike.title,
      outlet_count: 1,
      outlets: [
        {
          entryKey: a.entryKey,
          sourceId: "wire",
          source: "wire",
          link: "https://wire.example/strike",
        },
      ],
    });
    expect(r?.fetched_at.getTime()).toBe(observedAt.getTime());
  });

  it("an extraction's category and language are the story's", async () => {
    const a = await put(db, "wire", "strike-w", TEXTS.strike);
    await dedupStage(db).handle({ entryKey: a.entryKey, version: 1 }, ctx());
    await db.prisma.$executeRaw`
      INSERT INTO item_extractions (entry_key, item_version, source_id, language, category,
                                    provider, model, prompt_version, extractor)
      VALUES (${a.entryKey}, 1, 'wire', 'bn', 'economy', 'local', 'local-rules@1', 'p1', 'x')`;
    await indexItem(db, { entryKey: a.entryKey, version: 1 });
    expect(await row(a.entryKey)).toMatchObject({ category: "economy", language: "bn" });
  });

  it("after extract, the sweep finds a survivor whose hand-on was lost: extracted, no row", async () => {
    const a = await put(db, "wire", "strike-w", TEXTS.strike);
    await dedupStage(db).handle({ entryKey: a.entryKey, version: 1 }, ctx());
    const stage = indexStage(db, { after: "extract" });
    expect((await sweepStage(db, stage, { marginMs: 0 })).enqueued).toBe(0);
    await db.prisma.$executeRaw`
      INSERT INTO item_extractions (entry_key, item_version, source_id, language, category,
                                    provider, model, prompt_version, extractor)
      VALUES (${a.entryKey}, 1, 'wire', 'en', 'economy', 'local', 'local-rules@1', 'p1', 'x')`;
    await db.prisma.$executeRaw`DELETE FROM line_cursors`;
    expect((await sweepStage(db, stage, { marginMs: 0 })).enqueued).toBe(1);
    await db.prisma.$executeRaw`DELETE FROM jobs`;
    await indexItem(db, { entryKey: a.entryKey, version: 1 });
    await db.prisma.$executeRaw`DELETE FROM line_cursors`;
    expect((await sweepStage(db, stage, { marginMs: 0 })).enqueued).toBe(0);
  });

  it("an edit updates the story; a job of the older version changes nothing (version guard)", async () => {
    const a = await put(db, "wire", "strike-w", TEXTS.strike);
    await through(a);
    const before = await row(a.entryKey);
    const edited = await change(db, "wire", "strike-w", {
      ...TEXTS.strike,
      title: `${TEXTS.strike.title} as cranes restart`,
    });
    expect(await indexItem(db, { entryKey: a.entryKey, version: 1 })).toBe("superseded");
    expect(await through(edited)).toEqual(["survived", "survived"]);
    const after = await row(a.entryKey);
    expect(after?.item_version).toBe(2);
    expect(after?.title).toMatch(/as cranes restart$/);
    expect(after?.updated_at.getTime()).toBeGreaterThan(before?.updated_at.getTime() ?? 0);

    // A row already at a newer version than the item (a writer ahead of this one) is kept.
    await db.prisma.$executeRaw`UPDATE read_stories SET item_version = 9, title = 'newer'`;
    expect(await indexStories(db, [a.entryKey])).toBe(0);
    expect((await row(a.entryKey))?.title).toBe("newer");
  });

  it("the same job twice writes once: the second run changes nothing, not even indexed_at", async () => {
    const a = await put(db, "wire", "strike-w", TEXTS.strike);
    await through(a);
    const first = await row(a.entryKey);
    expect(await indexItem(db, { entryKey: a.entryKey, version: 1 })).toBe("survived");
    expect(await indexStories(db, [a.entryKey])).toBe(0);
    expect(await row(a.entryKey)).toEqual(first);
  });

  it("a retraction removes the story: found by the sweep's pending and reconciled", async () => {
    const a = await put(db, "wire", "strike-w", TEXTS.strike);
    const b = await put(db, "daily", "rate-d", TEXTS.rate);
    await through(a);
    await through(b);
    const gone = await tombstone(db, "wire", "strike-w");
    expect(await through(gone)).toEqual(["dropped"]);
    expect(await row(a.entryKey)).toBeDefined();

    // The stage's sweep enqueues it (nothing handed it on: dedup dropped it)…
    const swept = await sweepStage(db, indexStage(db, { after: "dedup" }), { marginMs: 0 });
    expect(swept.enqueued).toBe(1);
    const [job] = await db.prisma.$queryRaw<{ key: string }[]>`
      SELECT key FROM jobs WHERE queue = ${INDEX_STAGE}`;
    expect(job?.key).toBe(`${a.entryKey}@2`);
    // …and the builder's inline reconcile does the same at once.
    expect(await reconcileChanges(db, EPOCH)).toEqual({ items: 1, changed: 1 });
    expect((await rows()).map((r) => r.story_key)).toEqual([b.entryKey]);
    // Done: neither finds it again.
    expect(await reconcileChanges(db, EPOCH)).toEqual({ items: 0, changed: 0 });
  });

  it("a new duplicate adds an outlet to its story and is no story itself; undo removes the outlet", async () => {
    const a = await put(db, "wire", "strike-w", TEXTS.strike);
    await through(a);
    const copy = await put(db, "daily", "strike-d", {
      ...TEXTS.strike,
      link: "https://daily.example/s",
    });
    expect(await through(copy)).toEqual(["dropped"]);
    // Dedup dropped it: nothing reaches extract or index but the cluster's change.
    expect((await row(a.entryKey))?.outlet_count).toBe(1);
    expect(await reconcileChanges(db, EPOCH)).toMatchObject({ changed: 1 });
    const story = await row(a.entryKey);
    expect(story?.outlet_count).toBe(2);
    expect(story?.outlets.map((o) => o.sourceId)).toEqual(["wire", "daily"]);
    expect(story?.outlets[1]?.link).toBe("https://daily.example/s");
    expect(await row(copy.entryKey)).toBeUndefined();
    expect(await reconcileChanges(db, EPOCH)).toEqual({ items: 0, changed: 0 });

    // An operator undoes the link: the copy is a story of its own, the outlet leaves.
    await db.prisma.$transaction((tx) => unlinkItem(tx, copy.entryKey, "undone", "admin"));
    expect((await reconcileChanges(db, EPOCH)).changed).toBe(2);
    expect((await row(a.entryKey))?.outlets.map((o) => o.sourceId)).toEqual(["wire"]);
    expect((await row(copy.entryKey))?.outlet_count).toBe(1);
  });

  it("a duplicate's job (a sweep, a requeue) rewrites its story and deletes any row of its own", async () => {
    const a = await put(db, "wire", "strike-w", TEXTS.strike);
    const copy = await put(db, "daily", "strike-d", TEXTS.strike);
    await through(a);
    // Indexed alone before dedup saw the copy (a race the version guard cannot see).
    await dedupStage(db).handle({ entryKey: copy.entryKey, version: 1 }, ctx());
    await db.prisma.$executeRaw`
      INSERT INTO read_stories (story_key, source_id, item_version, title, first_seen_at, fetched_at, updated_at)
      VALUES (${copy.entryKey}, 'daily', 1, 'stale', now(), now(), now())`;
    expect(await indexItem(db, { entryKey: copy.entryKey, version: 1 })).toBe("survived");
    expect((await rows()).map((r) => [r.story_key, r.outlet_count])).toEqual([[a.entryKey, 2]]);
  });

  it("the canonical retracted: its row goes, the next member is the story with the outlets left", async () => {
    const a = await put(db, "wire", "strike-w", TEXTS.strike);
    const b = await put(db, "daily", "strike-d", TEXTS.strike);
    const c = await put(db, "star", "strike-s", TEXTS.strike);
    for (const w of [a, b, c]) await through(w);
    await reconcileChanges(db, EPOCH);
    expect((await rows()).map((r) => [r.story_key, r.outlet_count])).toEqual([[a.entryKey, 3]]);

    await tombstone(db, "wire", "strike-w");
    expect(await through({ entryKey: a.entryKey, version: 2 })).toEqual(["dropped"]);
    await reconcileChanges(db, EPOCH);
    const left = await rows();
    expect(left.map((r) => [r.story_key, r.outlet_count])).toEqual([[b.entryKey, 2]]);
    expect(left[0]?.outlets.map((o) => o.sourceId)).toEqual(["daily", "star"]);

    // The cluster dissolves when one more leaves: the last member alone, one outlet.
    await db.prisma.$transaction((tx) => removeItem(tx, c.entryKey, "retracted"));
    await reconcileChanges(db, EPOCH);
    expect((await rows()).map((r) => [r.story_key, r.outlet_count])).toEqual([[b.entryKey, 1]]);
  });
});
