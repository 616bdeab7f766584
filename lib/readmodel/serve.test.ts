// The request side over real stores: single-flight (500 concurrent readers of a cold key make
// one build in a process, and one across two instances sharing a Redis), the frozen order walked
// by cursor across a new version, stale-if-error, and what it answers when there is nothing.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedReadModel } from "@/lib/testing/readModelSeed";
import { flushRedisDb, requireRedis, TEST_REDIS } from "@/lib/testing/redis";
import { orderKey, ReadModelKeyError } from "./keys";

import { ReadModel, type ServeResult } from "./serve";
import { openReadModelStore } from "./store";
import { MemoryStore } from "./store/memory";
import {
  type ListPage,
  type Payload,
  type ReadModelStore,
  ReadModelUnavailableError,
} from "./types";

const REDIS_DB = `${TEST_REDIS}/7`;
const hasRedis = await requireRedis("single-flight across two instances");

const page = (r: ServeResult) => JSON.parse(r.payload?.body.toString() ?? "null") as ListPage;

/** A store whose every call can be made to fail, as Redis or the database would. */
class Breakable implements ReadModelStore {
  broken = false;
  constructor(private readonly inner: ReadModelStore) {}
  get kind() {
    return this.inner.kind;
  }
  private check() {
    if (this.broken) throw new ReadModelUnavailableError("store down (test)");
  }
  async get(key: string) {
    this.check();
    return this.inner.get(key);
  }
  async put(p: readonly Payload[]) {
    this.check();
    return this.inner.put(p);
  }
  async delete(k: readonly string[]) {
    this.check();
    return this.inner.delete(k);
  }
  async head() {
    this.check();
    return this.inner.head();
  }
  async setHead(h: { modelVersion: number; builtAt: Date }) {
    this.check();
    return this.inner.setHead(h);
  }
  async lock(k: string, t: number) {
    this.check();
    return this.inner.lock(k, t);
  }
  async unlock(k: string) {
    return this.inner.unlock(k);
  }
  async close() {}
}

describe("single-flight in one process", () => {
  it("500 concurrent requests for a cold key build it once and all get its bytes", async () => {
    const store = new MemoryStore(null);
    await seedReadModel(store, { count: 60 });
    const model = new ReadModel(async () => store);
    // limit 7 is not prebuilt (the builder makes limit 20): every request misses.
    const results = await Promise.all(
      Array.from({ length: 500 }, () => model.getList({}, 7, null)),
    );
    expect(model.builds).toBe(1);
    expect(new Set(results.map((r) => r.payload?.etag)).size).toBe(1);
    expect(results.every((r) => r.outcome === "miss")).toBe(true);
    expect(page(results[0] as ServeResult).items.map((s) => s.title)).toHaveLength(7);
    // Stored: the next reader hits.
    expect((await model.getList({}, 7, null)).outcome).toBe("hit");
    expect(model.builds).toBe(1);
  });

  it("a page prebuilt for an older version is rebuilt once for the head, same bytes as the builder's", async () => {
    const store = new MemoryStore(null);
    await seedReadModel(store, { count: 60, version: 1 });
    const model = new ReadModel(async () => store);
    const v1 = await model.getList({ category: "sports" }, 20, null);
    expect(v1.outcome).toBe("hit");
    // Version 2's order and stories, but its prebuilt page of this list left out.
    const v2Store = new MemoryStore(null);
    await seedReadModel(v2Store, { count: 60, version: 2 });
    const v2Page = await v2Store.get("page:20:0:category:sports");
    for (const key of ["order:2:category:sports", ...storyKeys(60)]) {
      const p = await v2Store.get(key);
      if (p) await store.put([p]);
    }
    await store.setHead({ modelVersion: 2, builtAt: new Date() });
    const results = await Promise.all(
      Array.from({ length: 500 }, () => model.getList({ category: "sports" }, 20, null)),
    );
    expect(model.builds).toBe(1);
    expect(results[0]?.payload?.etag).toBe(v2Page?.etag);
    expect(results[0]?.payload?.body.equals(v2Page?.body ?? Buffer.alloc(0))).toBe(true);
  });
});

function storyKeys(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `story:${(i + 1).toString(16).padStart(64, "0")}`);
}

describe.skipIf(!hasRedis)("single-flight across two instances on one Redis", () => {
  let a: ReadModel;
  let b: ReadModel;
  beforeAll(async () => {
    await flushRedisDb(REDIS_DB);
    const seeder = await openReadModelStore({ redisUrl: REDIS_DB, prefix: "sf:" });
    await seedReadModel(seeder, { count: 60 });
    await seeder.close();
    // 1,000 requests started in one tick keep this process's event loop busy for longer than
    // the 200 ms command timeout on a shared 2-core machine, and a timer fires before the reply
    // it guards is read: a test of the lock, not of the timeout, gives commands 5 s.
    const open = () =>
      openReadModelStore({ redisUrl: REDIS_DB, prefix: "sf:", commandTimeoutMs: 5_000 });
    a = new ReadModel(open);
    b = new ReadModel(open);
    await Promise.all([a.store(), b.store()]);
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
  });

  it("500 concurrent requests on each instance for a cold key: one build in all", async () => {
    for (const limit of [7, 13, 33]) {
      const before = a.builds + b.builds;
      const results = await Promise.all(
        Array.from({ length: 1000 }, (_, i) =>
          (i % 2 ? a : b).getList({ lang: "bn" }, limit, null),
        ),
      );
      expect(a.builds + b.builds - before, `limit ${limit}`).toBe(1);
      expect(results.filter((r) => r.payload === null)).toEqual([]);
      expect(new Set(results.map((r) => r.payload?.etag)).size).toBe(1);
      expect(results.every((r) => r.outcome === "miss" || r.outcome === "hit")).toBe(true);
    }
  });
});

describe("cursors walk the frozen order of their version", () => {
  it("pages by cursor to the end, undisturbed by a new version; a gone version is cursor_expired", async () => {
    const store = new MemoryStore(null);
    const v1 = await seedReadModel(store, { count: 130, version: 1 });
    const model = new ReadModel(async () => store);
    const seen: string[] = [];
    let result = await model.getList({}, 20, null);
    let pages = 0;
    while (result.payload) {
      const body = page(result);
      seen.push(...body.items.map((s) => s.id));
      pages += 1;
      if (pages === 2) {
        // A new version lands mid-walk: the walk stays on version 1's order.
        await seedReadModel(store, { count: 10, version: 2 });
      }
      if (!body.nextCursor) break;
      result = await model.getList({}, 20, body.nextCursor);
    }
    expect(seen).toEqual(v1.map((s) => s.id));
    expect(pages).toBe(7);
    // The head is version 2 now: its first page.
    expect(page(await model.getList({}, 20, null)).model.version).toBe(2);

    const deep = page(await model.getList({}, 5, null));
    expect(deep.nextCursor).not.toBeNull();
    await store.delete([orderKey("home", 2)]);
    const gone = await model.getList({}, 5, deep.nextCursor);
    expect(gone).toMatchObject({ payload: null, outcome: "not_found", code: "cursor_expired" });
  });

  it("refuses a bad cursor, a bad filter and a cursor of another list", async () => {
    const store = new MemoryStore(null);
    await seedReadModel(store, { count: 30 });
    const model = new ReadModel(async () => store);
    const next = page(await model.getList({ lang: "en" }, 5, null)).nextCursor;
    await expect(model.getList({}, 20, "not-a-cursor!")).rejects.toBeInstanceOf(ReadModelKeyError);
    await expect(model.getList({ category: "Sports!" }, 20, null)).rejects.toMatchObject({
      code: "bad_filter",
    });
    await expect(model.getList({ lang: "bn" }, 5, next)).rejects.toMatchObject({
      code: "bad_cursor",
    });
    expect(page(await model.getList({ lang: "en" }, 5, next)).items).toHaveLength(5);
  });

  it("a filter no story has is an empty first page, not an error", async () => {
    const store = new MemoryStore(null);
    await seedReadModel(store, { count: 10 });
    const model = new ReadModel(async () => store);
    const empty = await model.getList({ category: "weather" }, 20, null);
    expect(empty.outcome).toBe("miss");
    expect(page(empty)).toMatchObject({ items: [], nextCursor: null, model: { version: 1 } });
  });
});

describe("stale-if-error", () => {
  it("serves the last payload with its age when the store fails; 503 for what it never held", async () => {
    let now = Date.UTC(2026, 11, 2, 5, 0, 0);
    const inner = new MemoryStore(null);
    const builtAt = new Date(now - 30_000);
    const stories = await seedReadModel(inner, { count: 30, builtAt });
    const store = new Breakable(inner);
    const model = new ReadModel(async () => store, { now: () => now });
    const fresh = await model.getList({}, 20, null);
    const story = await model.getStory(stories[0]?.id ?? "");
    expect(fresh.outcome).toBe("hit");
    expect(story.outcome).toBe("hit");

    store.broken = true;
    now += 60_000;
    const stale = await model.getList({}, 20, null);
    expect(stale.outcome).toBe("stale");
    expect(stale.payload?.etag).toBe(fresh.payload?.etag);
    expect(stale.payload === null ? -1 : stale.ageMs).toBe(90_000);
    expect((await model.getStory(stories[0]?.id ?? "")).outcome).toBe("stale");
    expect(await model.getList({ lang: "bn" }, 20, null)).toMatchObject({
      payload: null,
      outcome: "error",
      code: "read_model_unavailable",
    });

    store.broken = false;
    expect((await model.getList({}, 20, null)).outcome).toBe("hit");
  });

  it("answers not_ready before the first build and not_found for an unknown story", async () => {
    const model = new ReadModel(async () => new MemoryStore(null));
    expect(await model.getList({}, 20, null)).toMatchObject({
      outcome: "error",
      code: "not_ready",
    });
    expect(await model.getStory("f".repeat(64))).toMatchObject({
      outcome: "not_found",
      code: "not_found",
    });
  });

  it("a store that cannot open is tried again at the next request", async () => {
    let opens = 0;
    const model = new ReadModel(async () => {
      opens += 1;
      if (opens === 1) throw new ReadModelUnavailableError("redis down at start");
      const store = new MemoryStore(null);
      await seedReadModel(store, { count: 5 });
      return store;
    });
    expect((await model.getList({}, 20, null)).outcome).toBe("error");
    expect((await model.getList({}, 20, null)).outcome).toBe("hit");
    expect(opens).toBe(2);
  });
});
