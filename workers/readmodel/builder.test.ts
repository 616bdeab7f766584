import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { on } from "@/lib/events";
import {
  DEFAULT_PAGE_LIMIT,
  decodeCursor,
  orderKey,
  pageKey,
  storyKey,
} from "@/lib/readmodel/keys";
import {
  orderSlice,
  pageFromOrder,
  parseOrder,
  parseStory,
  storyPayload,
} from "@/lib/readmodel/payload";
import { MemoryStore } from "@/lib/readmodel/store/memory";
import type { ListPage, Payload, ReadModelStore } from "@/lib/readmodel/types";
import { createTestDatabase, requireRealPostgres, type TestDatabase } from "@/lib/testing/db";
import { createOutlets } from "@/workers/dedup/testing/items";
import { createReadModelBuilder, LISTS, ORDER_RETENTION_MS } from "./builder";

// The builder on a real database with read_stories rows written as the index stage writes them,
// into the memory store (lib/readmodel/store) without its table.

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
  await createOutlets(db);
});
afterAll(() => db?.drop());
beforeEach(async () => {
  await db.prisma.$executeRawUnsafe("TRUNCATE read_stories, read_model_builds RESTART IDENTITY");
});

const key = (n: number) => n.toString(16).padStart(64, "0");
const HOUR = 3_600_000;

/** A story as the index stage leaves it: first seen `ageH` hours ago, fetched a second later. */
async function story(
  n: number,
  f: {
    ageH?: number;
    outlets?: number;
    breaking?: boolean;
    category?: string;
    lang?: string;
    fetchedAgoMs?: number;
  } = {},
) {
  const seen = new Date(Date.now() - (f.ageH ?? 0) * HOUR);
  const outlets = Array.from({ length: f.outlets ?? 1 }, (_, i) => ({
    entryKey: key(n * 100 + i),
    sourceId: i === 0 ? "wire" : `daily`,
    source: i === 0 ? "Wire" : "Daily",
    link: null,
    firstSeenAt: seen.toISOString(),
  }));
  await db.prisma.$executeRaw`
    INSERT INTO read_stories (story_key, source_id, item_version, title, category, language,
                              breaking, outlets, outlet_count, first_seen_at, fetched_at,
                              updated_at, indexed_at)
    VALUES (${key(n)}, 'wire', 1, ${`Story ${n}`}, ${f.category ?? "world"}, ${f.lang ?? "en"},
            ${f.breaking ?? false}, ${JSON.stringify(outlets)}::jsonb, ${f.outlets ?? 1}, ${seen},
            ${new Date(Date.now() - (f.fetchedAgoMs ?? 1_000))}, clock_timestamp(),
            clock_timestamp())
    ON CONFLICT (story_key) DO UPDATE SET title = excluded.title, outlets = excluded.outlets,
      outlet_count = excluded.outlet_count, fetched_at = excluded.fetched_at,
      indexed_at = clock_timestamp()`;
}

const page = async (s: ReadModelStore, k: string): Promise<ListPage> => {
  const p = await s.get(k);
  if (!p) throw new Error(`no payload ${k}`);
  return JSON.parse(p.body.toString("utf8")) as ListPage;
};

/** A page as the request side builds one the builder did not: the order, then story payloads. */
async function pageByCursor(s: ReadModelStore, cursor: string, limit: number): Promise<ListPage> {
  const c = decodeCursor(cursor);
  const order = await s.get(orderKey(c.l, c.v));
  if (!order) throw new Error(`order ${c.v} of ${c.l} is gone`);
  const o = parseOrder(order);
  const stories = new Map<string, Payload>();
  for (const id of orderSlice(o, c.o, limit)) {
    const p = await s.get(storyKey(id));
    if (p) stories.set(id, p);
  }
  return JSON.parse(pageFromOrder(o, stories, c.o, limit).body.toString("utf8")) as ListPage;
}

describe("the read model builder", () => {
  it("builds at start, then only when read_stories changed: one build per change window", async () => {
    const store = new MemoryStore();
    const builder = createReadModelBuilder(db, { store, reconcile: false });
    for (let n = 1; n <= 3; n++) await story(n);
    const first = await builder.buildNow();
    expect(first).toMatchObject({ modelVersion: 1, trigger: "start", stories: 3, changed: 3 });
    expect(await builder.buildNow()).toBeNull();

    await story(4);
    await story(2, { outlets: 2 });
    const second = await builder.buildNow();
    expect(second).toMatchObject({ modelVersion: 2, trigger: "changed", stories: 4, changed: 2 });
    expect(await builder.buildNow()).toBeNull();
    expect(await store.head()).toMatchObject({ modelVersion: 2 });

    // A story deleted (retracted) leaves no stamp; the builder still sees it go.
    await db.prisma.$executeRaw`DELETE FROM read_stories WHERE story_key = ${key(3)}`;
    expect(await builder.buildNow()).toMatchObject({ modelVersion: 3, changed: 0, removed: 1 });
    expect(await store.get(storyKey(key(3)))).toBeNull();
    const home = await page(store, pageKey("home", DEFAULT_PAGE_LIMIT, 0));
    expect(home.items.map((s) => s.id)).not.toContain(key(3));
    expect(await builder.buildNow()).toBeNull();

    const builds = await db.prisma.$queryRaw<
      { model_version: bigint; changed: number; error: string | null }[]
    >`
      SELECT model_version, changed, error FROM read_model_builds ORDER BY id`;
    expect(builds.map((b) => [Number(b.model_version), b.changed, b.error])).toEqual([
      [1, 3, null],
      [2, 2, null],
      [3, 0, null],
    ]);
  });

  it("writes every list's order and first pages, well-formed, with ETags that follow the bytes", async () => {
    const store = new MemoryStore();
    const builder = createReadModelBuilder(db, { store, reconcile: false });
    for (let n = 1; n <= 45; n++)
      await story(n, {
        category: n % 3 ? "world" : "sports",
        lang: n % 2 ? "en" : "bn",
        ageH: n / 10,
      });
    const built = await builder.buildNow();
    // 68 orders; home, lang:en/bn, world: 3 pages each at 45 or ~23 stories → see below.
    expect(LISTS).toHaveLength(68);
    for (const list of LISTS) {
      const order = parseOrder((await store.get(orderKey(list, 1))) as Payload);
      expect(order.list).toBe(list);
      const first = await page(store, pageKey(list, DEFAULT_PAGE_LIMIT, 0));
      expect(first.model.version).toBe(1);
      expect(first.items.map((s) => s.id)).toEqual(order.ids.slice(0, DEFAULT_PAGE_LIMIT));
    }
    const home = parseOrder((await store.get(orderKey("home", 1))) as Payload);
    expect(home.ids).toHaveLength(45);
    expect(await store.get(pageKey("home", DEFAULT_PAGE_LIMIT, 40))).not.toBeNull();
    expect(await store.get(pageKey("home", DEFAULT_PAGE_LIMIT, 60))).toBeNull();
    expect(
      (await page(store, pageKey("category:sports|lang:bn", DEFAULT_PAGE_LIMIT, 0))).items.every(
        (s) => s.category === "sports" && s.language === "bn",
      ),
    ).toBe(true);
    expect((await page(store, pageKey("category:health", DEFAULT_PAGE_LIMIT, 0))).items).toEqual(
      [],
    );

    // The request side's page from the order is the builder's page, byte for byte and ETag.
    const second = (await store.get(pageKey("home", DEFAULT_PAGE_LIMIT, 20))) as Payload;
    const first = await page(store, pageKey("home", DEFAULT_PAGE_LIMIT, 0));
    const rebuilt = await pageByCursor(store, first.nextCursor as string, DEFAULT_PAGE_LIMIT);
    expect(JSON.stringify(rebuilt)).toBe(second.body.toString("utf8"));
    const story1 = (await store.get(storyKey(key(1)))) as Payload;
    expect(story1.etag).toBe(storyPayload(parseStory(story1), 1, story1.builtAt).etag);
    expect(built?.payloads).toBeGreaterThan(68 + 45);
  });

  it("freezes the order in a version: a cursor walk neither repeats nor skips while newer versions arrive", async () => {
    const store = new MemoryStore();
    const builder = createReadModelBuilder(db, { store, reconcile: false });
    for (let n = 1; n <= 70; n++)
      await story(n, { ageH: n / 7, outlets: 1 + (n % 4), breaking: n % 11 === 0 });
    await builder.buildNow();
    const frozen = parseOrder((await store.get(orderKey("home", 1))) as Payload).ids;
    // Breaking and wide coverage move stories up; the order is not plain recency.
    expect(frozen).not.toEqual([...frozen].sort());

    let p = await page(store, pageKey("home", 20, 0));
    const seen = p.items.map((s) => s.id);
    let version = 1;
    while (p.nextCursor) {
      // New stories, fresher than every one in the walk, and a new version each page.
      await story(1_000 + version);
      version++;
      expect((await builder.buildNow())?.modelVersion).toBe(version);
      p = await pageByCursor(store, p.nextCursor, 20);
      expect(p.model.version).toBe(1);
      seen.push(...p.items.map((s) => s.id));
    }
    expect(seen).toEqual(frozen);
    const now = parseOrder((await store.get(orderKey("home", version))) as Payload).ids;
    // The walk saw none of the stories that arrived during it; the head has them all.
    expect(now.filter((id) => !frozen.includes(id))).toHaveLength(version - 1);
  });

  it("records the lag from fetch to the build's finish for the changed stories only", async () => {
    const store = new MemoryStore();
    const builder = createReadModelBuilder(db, { store, reconcile: false });
    const events: { lagSeconds: number[]; changed: number }[] = [];
    const off = on("readmodel:built", (e) => events.push(e));
    try {
      await story(1, { fetchedAgoMs: 60_000 });
      await builder.buildNow();
      await story(2, { fetchedAgoMs: 4_000 });
      await builder.buildNow();
    } finally {
      off();
    }
    expect(events.map((e) => e.changed)).toEqual([1, 1]);
    expect(events[0]?.lagSeconds[0]).toBeGreaterThanOrEqual(60);
    expect(events[1]?.lagSeconds).toHaveLength(1);
    expect(events[1]?.lagSeconds[0]).toBeGreaterThanOrEqual(4);
    expect(events[1]?.lagSeconds[0]).toBeLessThan(30);
    const [last] = await db.prisma.$queryRaw<{ lag_p50_ms: number; lag_p99_ms: number }[]>`
      SELECT lag_p50_ms, lag_p99_ms FROM read_model_builds ORDER BY id DESC LIMIT 1`;
    expect(last?.lag_p50_ms).toBeGreaterThanOrEqual(4_000);
    expect(last?.lag_p99_ms).toBe(last?.lag_p50_ms);
  });

  it("a failed build keeps the last model, records the failure and says so", async () => {
    const good = new MemoryStore();
    await story(1);
    await createReadModelBuilder(db, { store: good, reconcile: false }).buildNow();
    const broken: ReadModelStore = Object.assign(Object.create(good) as MemoryStore, {
      put: async () => {
        throw new Error("store down");
      },
    });
    const failures: { error: string }[] = [];
    const off = on("readmodel:failed", (e) => failures.push(e));
    await story(2);
    await expect(
      createReadModelBuilder(db, { store: broken, reconcile: false }).buildNow(),
    ).rejects.toThrow("store down");
    off();
    expect(failures.map((f) => f.error)).toEqual(["store down"]);
    expect(await good.head()).toMatchObject({ modelVersion: 1 });
    const [row] = await db.prisma.$queryRaw<{ error: string }[]>`
      SELECT error FROM read_model_builds WHERE error IS NOT NULL`;
    expect(row?.error).toBe("store down");
  });

  it("prunes a version's orders once its successor is older than the cursor window", async () => {
    const store = new MemoryStore();
    const builder = createReadModelBuilder(db, { store, reconcile: false });
    for (let v = 1; v <= 3; v++) {
      await story(v);
      await builder.buildNow();
    }
    // Versions 1 and 2 were replaced long ago; 3 became the head just now.
    await db.prisma.$executeRaw`
      UPDATE read_model_builds SET finished_at = now() - make_interval(secs => ${ORDER_RETENTION_MS / 1000 + 60})
      WHERE model_version <= 2`;
    await story(4);
    await builder.buildNow();
    expect(await store.get(orderKey("home", 1))).toBeNull();
    expect(await store.get(orderKey("category:world|lang:en", 1))).toBeNull();
    // Version 2's successor (3) is recent: a cursor of version 2 still walks.
    expect(await store.get(orderKey("home", 2))).not.toBeNull();
    expect(await store.get(orderKey("home", 4))).not.toBeNull();
  });

  it("two builders in one process: one builds, the other skips", async () => {
    await story(1);
    const store = new MemoryStore();
    const a = createReadModelBuilder(db, { store, reconcile: false });
    const b = createReadModelBuilder(db, { store, reconcile: false });
    const results = await Promise.all([a.buildNow(), b.buildNow()]);
    expect(results.filter((r) => r !== null)).toHaveLength(1);
  });

  it("start() builds at once and stop() waits for the build in flight", async () => {
    await story(1);
    const store = new MemoryStore();
    const builder = createReadModelBuilder(db, { store, intervalMs: 250, reconcile: false });
    builder.start();
    await builder.stop();
    expect(await store.head()).toMatchObject({ modelVersion: 1 });
  });
});

describe.skipIf(!requireRealPostgres("two builder processes racing for the advisory lock"))(
  "two builders on PostgreSQL",
  () => {
    it("one builds, the other skips (two connections, the advisory lock)", async () => {
      await story(1);
      const other = await db.connectAnother(2);
      const a = createReadModelBuilder(db, { store: new MemoryStore(), reconcile: false });
      const b = createReadModelBuilder(other, { store: new MemoryStore(), reconcile: false });
      // Each store starts with a model, as a running process's does (its table's or one built):
      // a store with none builds whatever the other did, and when the two took turns rather than
      // met at the lock, that was a second build in the round (CI saw it once).
      expect(await a.buildNow()).not.toBeNull();
      expect(await b.buildNow({ force: true })).not.toBeNull();
      for (let round = 0; round < 5; round++) {
        await story(2 + round);
        // Each process with its own store (memory, as without Redis): one change, one build,
        // whichever took the lock; the other skips, at once or after it (nothing changed since).
        const results = await Promise.all([a.buildNow(), b.buildNow()]);
        expect(results.filter((r) => r !== null)).toHaveLength(1);
      }
      const [n] = await db.prisma.$queryRaw<{ n: number }[]>`
        SELECT count(*)::int AS n FROM read_model_builds WHERE error IS NULL`;
      expect(n?.n).toBe(2 + 5);
      // Held: a builder that cannot take the lock skips.
      await db.prisma.$transaction(async (tx) => {
        await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended('wirewatch:readmodel:builder', 0))`;
        const c = createReadModelBuilder(other, { store: new MemoryStore(), reconcile: false });
        expect(await c.buildNow({ force: true })).toBeNull();
      });
    });
  },
);
