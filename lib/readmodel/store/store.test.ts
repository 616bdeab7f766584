// The stores against the real thing: the memory store over read_payloads (PGlite, or PostgreSQL
// with TEST_DATABASE_URL) through the read path's own pool, the Redis store on the machine's
// Redis (database 6, flushed), and the fallback against a redis-server of the test's own that it
// shuts down and starts again.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "@/lib/db";
import { on } from "@/lib/events";
import { createScratchDatabase, type ScratchDatabase } from "@/lib/scratchDatabase";
import { testServerUrl } from "@/lib/testing/db";
import { seedReadModel } from "@/lib/testing/readModelSeed";
import { flushRedisDb, requireRedis, startOwnRedis, TEST_REDIS } from "@/lib/testing/redis";
import { startTcpProxy, throughProxy } from "@/lib/testing/tcpProxy";
import { etagOf } from "../payload";
import { type Payload, ReadModelUnavailableError } from "../types";
import type { FallbackStore } from "./fallback";
import { openReadModelStore } from "./index";
import { MemoryStore } from "./memory";
import { RedisStore } from "./redis";
import { openPayloadTable } from "./table";

const REDIS_DB = `${TEST_REDIS}/6`;
const hasRedis = await requireRedis("the Redis store's tests");

function payload(key: string, version: number, text = `${key}@${version}`): Payload {
  const body = Buffer.from(JSON.stringify({ text }), "utf8");
  return {
    key,
    modelVersion: version,
    etag: etagOf(version, body),
    body,
    builtAt: new Date(1e12 + version),
  };
}

let scratch: ScratchDatabase;
let db: Database;
const url = testServerUrl();

beforeAll(async () => {
  scratch = await createScratchDatabase("ww_rm_store", url);
  db = scratch.db;
});
afterAll(async () => {
  await scratch?.dispose();
});

describe("MemoryStore over read_payloads", () => {
  it("keeps the newest version of a key, in memory and in the table, and a restart loads it", async () => {
    const table = await openPayloadTable(db, url ? scratch.where : undefined, 2);
    const store = await MemoryStore.open(table);
    await store.put([payload("story:a", 2), payload("story:b", 1)]);
    await store.put([payload("story:a", 1, "older")]); // an older version never replaces
    await store.put([payload("story:b", 3, "newer")]);
    await store.setHead({ modelVersion: 3, builtAt: new Date(1e12) });
    await store.setHead({ modelVersion: 2, builtAt: new Date(1) }); // the head only goes forward
    await store.delete(["story:gone"]);
    expect(JSON.parse((await store.get("story:a"))?.body.toString() ?? "")).toEqual({
      text: "story:a@2",
    });
    expect((await store.get("story:b"))?.modelVersion).toBe(3);
    await store.close();

    const again = await MemoryStore.open(
      await openPayloadTable(db, url ? scratch.where : undefined, 2),
    );
    const a = await again.get("story:a");
    expect(a?.modelVersion).toBe(2);
    expect(a?.etag).toBe(payload("story:a", 2).etag);
    expect(a?.body.equals(payload("story:a", 2).body)).toBe(true);
    expect(a?.builtAt.getTime()).toBe(1e12 + 2);
    expect(JSON.parse((await again.get("story:b"))?.body.toString() ?? "")).toEqual({
      text: "newer",
    });
    expect(await again.head()).toEqual({ modelVersion: 3, builtAt: new Date(1e12) });
    await again.delete(["story:b"]);
    expect(await again.get("story:b")).toBeNull();
    await again.close();
    const third = await MemoryStore.open(
      await openPayloadTable(db, url ? scratch.where : undefined, 2),
    );
    expect(await third.get("story:b")).toBeNull();
    expect(await third.lock()).toBe(true);
    await third.close();
  });

  it("a refresh takes what another process's builder wrote and drops what it deleted", async () => {
    const reader = await MemoryStore.open(
      await openPayloadTable(db, url ? scratch.where : undefined, 2),
    );
    const writer = await MemoryStore.open(
      await openPayloadTable(db, url ? scratch.where : undefined, 2),
    );
    await writer.put([payload("page:20:0:home", 7)]);
    await writer.delete(["story:a"]);
    await writer.setHead({ modelVersion: 7, builtAt: new Date(2e12) });
    expect(await reader.get("page:20:0:home")).toBeNull();
    await reader.refresh();
    expect((await reader.get("page:20:0:home"))?.modelVersion).toBe(7);
    expect(await reader.get("story:a")).toBeNull();
    expect((await reader.head())?.modelVersion).toBe(7);
    await Promise.all([reader.close(), writer.close()]);
  });

  // PGlite is one connection shared with the writer: only PostgreSQL has a read pool to lose.
  it.skipIf(!url)(
    "says unavailable when its table cannot be written, and still answers from memory",
    async () => {
      const where = new URL(scratch.where);
      const proxy = await startTcpProxy({ host: where.hostname, port: Number(where.port || 5432) });
      const table = await openPayloadTable(db, throughProxy(scratch.where, proxy.port), 1);
      const store = await MemoryStore.open(table);
      await store.put([payload("story:y", 8)]);
      await proxy.cut();
      await expect(store.put([payload("story:z", 9)])).rejects.toBeInstanceOf(
        ReadModelUnavailableError,
      );
      await expect(store.refresh()).rejects.toThrow();
      expect((await store.get("story:z"))?.modelVersion).toBe(9);
      expect((await store.get("story:y"))?.modelVersion).toBe(8);
      await store.close();
    },
  );
});

describe.skipIf(!hasRedis)("RedisStore", () => {
  let store: RedisStore;
  let other: RedisStore;
  beforeAll(async () => {
    await flushRedisDb(REDIS_DB);
    store = new RedisStore(REDIS_DB, { prefix: "t:" });
    other = new RedisStore(REDIS_DB, { prefix: "t:" });
    await Promise.all([store.connect(), other.connect()]);
  });
  afterAll(async () => {
    await Promise.all([store?.close(), other?.close()]);
  });

  it("stores payloads byte for byte, newer versions only, and deletes", async () => {
    const bangla = payload("story:bn", 4, "বাজেট ঘোষণা");
    await store.put([bangla, payload("page:20:0:home", 4)]);
    await other.put([payload("story:bn", 3, "older")]);
    const got = await other.get("story:bn");
    expect(got?.body.equals(bangla.body)).toBe(true);
    expect(got?.etag).toBe(bangla.etag);
    expect(got?.modelVersion).toBe(4);
    expect(got?.builtAt.getTime()).toBe(bangla.builtAt.getTime());
    await other.delete(["page:20:0:home"]);
    expect(await store.get("page:20:0:home")).toBeNull();
    expect(await store.get("never")).toBeNull();
  });

  it("moves the head forward only", async () => {
    expect(await store.head()).toBeNull();
    await store.setHead({ modelVersion: 5, builtAt: new Date(5e12) });
    await other.setHead({ modelVersion: 4, builtAt: new Date(4e12) });
    expect(await other.head()).toEqual({ modelVersion: 5, builtAt: new Date(5e12) });
  });

  it("locks one holder at a time; only the holder unlocks; the lock expires by itself", async () => {
    expect(await store.lock("k", 5_000)).toBe(true);
    expect(await other.lock("k", 5_000)).toBe(false);
    await other.unlock("k"); // not its lock: nothing happens
    expect(await other.lock("k", 5_000)).toBe(false);
    await store.unlock("k");
    expect(await other.lock("k", 5_000)).toBe(true);
    await other.unlock("k");
    expect(await store.lock("short", 50)).toBe(true);
    await new Promise((r) => setTimeout(r, 120));
    expect(await other.lock("short", 50)).toBe(true);
  });

  it("fails fast with ReadModelUnavailableError when Redis is not there", async () => {
    const dead = new RedisStore("redis://127.0.0.1:1", { prefix: "t:" });
    const started = Date.now();
    await expect(dead.connect()).rejects.toBeInstanceOf(ReadModelUnavailableError);
    await expect(dead.get("x")).rejects.toBeInstanceOf(ReadModelUnavailableError);
    expect(Date.now() - started).toBeLessThan(1_500);
    await dead.close();
  });
});

describe.skipIf(!hasRedis)("FallbackStore: Redis stopped → this process's copy, and back", () => {
  it("serves what it last read while Redis is down, emits readmodel:store, returns when it answers", async () => {
    const own = await startOwnRedis();
    const events: { kind: string; fallback: boolean }[] = [];
    const off = on("readmodel:store", (e) => events.push({ kind: e.kind, fallback: e.fallback }));
    const store = (await openReadModelStore({ redisUrl: own.url, prefix: "fb:" })) as FallbackStore;
    const writer = new RedisStore(own.url, { prefix: "fb:" });
    try {
      expect(store.kind).toBe("redis");
      await seedReadModel(store, { count: 30, version: 1 });
      const page = await store.get("page:20:0:home");
      expect(page?.modelVersion).toBe(1);

      await own.stop();
      const started = Date.now();
      const during = await store.get("page:20:0:home");
      expect(Date.now() - started).toBeLessThan(1_000);
      expect(during?.etag).toBe(page?.etag);
      for (let i = 0; i < 20 && !store.inFallback; i++) await new Promise((r) => setTimeout(r, 50));
      expect((await store.head())?.modelVersion).toBe(1);
      expect(store.kind).toBe("memory");
      expect(events).toContainEqual({ kind: "memory", fallback: true });
      // A build while Redis is down is served by this process and written to Redis on return.
      await store.put([payload("story:during", 2)]);
      await store.setHead({ modelVersion: 2, builtAt: new Date() });
      expect((await store.get("story:during"))?.modelVersion).toBe(2);

      await startOwnRedis(own.port);
      for (let i = 0; i < 60 && store.inFallback; i++) await new Promise((r) => setTimeout(r, 100));
      expect(store.kind).toBe("redis");
      expect(events.at(-1)).toEqual({ kind: "redis", fallback: false });
      await writer.connect();
      expect((await writer.get("story:during"))?.modelVersion).toBe(2);
      expect((await writer.head())?.modelVersion).toBe(2);
    } finally {
      off();
      await store.close();
      await writer.close();
      await own.stop();
    }
  });

  it("opens in fallback when Redis is not there at start, and says so", async () => {
    const events: boolean[] = [];
    const off = on("readmodel:store", (e) => events.push(e.fallback));
    const store = (await openReadModelStore({ redisUrl: "redis://127.0.0.1:1" })) as FallbackStore;
    expect(store.kind).toBe("memory");
    expect(events).toEqual([true]);
    // Unknown, not absent: the reader gets stale-if-error or a 503, never an empty list.
    await expect(store.get("page:20:0:home")).rejects.toBeInstanceOf(ReadModelUnavailableError);
    off();
    await store.close();
  });
});
