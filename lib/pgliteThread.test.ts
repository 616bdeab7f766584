import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Database, openDatabase } from "./db";
import { Prisma } from "./generated/prisma/client";
import { DatabaseThreadError, PgliteThread } from "./pgliteThread";

// The app's embedded database runs in a worker thread (decision 031): every statement crosses a
// message port. These check what could differ from PGlite on the caller's thread: values of each
// type, Prisma's error codes, interactive transactions, LISTEN, and a thread that dies.
describe("PGlite in a worker thread", () => {
  let db: Database;
  beforeAll(async () => {
    db = await openDatabase({ dataDir: "memory://", thread: true });
    // What lib/search/vectors.ts does at start: pgvector is loaded in the thread too.
    await db.prisma.$executeRawUnsafe("CREATE EXTENSION IF NOT EXISTS vector");
  }, 60_000);
  afterAll(async () => {
    await db?.close();
  });

  it("is migrated and answers values of every kind the schema uses", async () => {
    const [row] = await db.prisma.$queryRaw<
      {
        big: bigint;
        n: number;
        t: string;
        at: Date;
        j: unknown;
        b: Uint8Array;
        arr: string[];
        v: string;
        nothing: null;
      }[]
    >`SELECT 9007199254740993::bigint AS big, 42::int AS n, 'বাংলা'::text AS t,
        '2026-12-02T07:00:00.123Z'::timestamptz AS at, '{"a":[1,2]}'::jsonb AS j,
        '\\x00ff10'::bytea AS b, ARRAY['x','y'] AS arr, '[1,2,3]'::vector::text AS v,
        NULL AS nothing`;
    expect(row?.big).toBe(9007199254740993n);
    expect(row?.n).toBe(42);
    expect(row?.t).toBe("বাংলা");
    expect(row?.at).toEqual(new Date("2026-12-02T07:00:00.123Z"));
    expect(row?.j).toEqual({ a: [1, 2] });
    expect([...(row?.b ?? [])]).toEqual([0, 255, 16]);
    expect(row?.arr).toEqual(["x", "y"]);
    expect(row?.v).toBe("[1,2,3]");
    expect(row?.nothing).toBeNull();
    const [counted] = await db.prisma.$queryRaw<{ count: bigint }[]>`
      SELECT count(*) AS count FROM "_prisma_migrations"`;
    expect(counted?.count).toBeGreaterThan(10n);
  });

  it("writes and reads models through Prisma, dates and big ids included", async () => {
    const source = await db.prisma.source.create({
      data: { id: "thread-src", name: "Thread", kind: "feed", url: "https://t.example/feed" },
    });
    expect(source.collectors).toEqual(["A"]);
    const found = await db.prisma.source.findUnique({ where: { id: "thread-src" } });
    expect(found?.url).toBe("https://t.example/feed");
  });

  it("keeps Prisma's error codes (a unique violation is P2002)", async () => {
    const again = db.prisma.source.create({
      data: { id: "thread-src", name: "Again", kind: "feed", url: "https://t.example/feed" },
    });
    await expect(again).rejects.toBeInstanceOf(Prisma.PrismaClientKnownRequestError);
    await expect(again).rejects.toMatchObject({ code: "P2002" });
    await expect(db.prisma.$queryRawUnsafe("SELECT * FROM no_such_table")).rejects.toThrow(
      /no_such_table/,
    );
  });

  it("commits an interactive transaction and rolls one back on a throw", async () => {
    await db.prisma.$transaction(async (tx) => {
      await tx.source.update({ where: { id: "thread-src" }, data: { name: "In tx" } });
    });
    await expect(
      db.prisma.$transaction(async (tx) => {
        await tx.source.update({ where: { id: "thread-src" }, data: { name: "Rolled back" } });
        throw new Error("changed my mind");
      }),
    ).rejects.toThrow("changed my mind");
    const after = await db.prisma.source.findUnique({ where: { id: "thread-src" } });
    expect(after?.name).toBe("In tx");
  });

  it("delivers NOTIFY to a listener until it unlistens", async () => {
    const heard: string[] = [];
    const unlisten = await db.listen("thread_test", (p) => heard.push(p));
    await db.prisma.$executeRaw`SELECT pg_notify('thread_test', 'one')`;
    await until(() => heard.includes("one"));
    await unlisten();
    await db.prisma.$executeRaw`SELECT pg_notify('thread_test', 'two')`;
    await db.prisma.$queryRaw`SELECT 1`;
    expect(heard).toEqual(["one"]);
  });

  it("keeps the event loop free while a long statement runs", async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 10);
    await db.prisma.$queryRaw`SELECT pg_sleep(0.5)::text`;
    clearInterval(timer);
    // On the caller's thread pg_sleep would hold the loop: no tick at all in half a second.
    expect(ticks).toBeGreaterThan(20);
  });
});

describe("a PGlite thread that dies", () => {
  it("fails what is in flight and every later call with the reason", async () => {
    const thread = await PgliteThread.start("memory://");
    const sql = thread.sql();
    const inFlight = sql.query("SELECT pg_sleep(2)");
    await thread.kill();
    await expect(inFlight).rejects.toBeInstanceOf(DatabaseThreadError);
    await expect(sql.query("SELECT 1")).rejects.toThrow(/thread exited/);
    expect(thread.alive).toBe(false);
  }, 60_000);

  it("refuses a data directory it cannot open, with PGlite's reason", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "ww-thread-"));
    try {
      const file = path.join(dir, "not-a-dir");
      await import("node:fs/promises").then((fs) => fs.writeFile(file, "x"));
      await expect(PgliteThread.start(file)).rejects.toThrow();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it("closes: flushes a data directory that opens again with its rows", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "ww-thread-"));
    try {
      const first = await openDatabase({ dataDir: dir, thread: true });
      await first.prisma.$executeRaw`CREATE TABLE kept (v text)`;
      await first.prisma.$executeRaw`INSERT INTO kept VALUES ('still here')`;
      await first.close();
      expect(first.alive).toBe(false);
      const second = await openDatabase({ dataDir: dir, thread: true });
      const rows = await second.prisma.$queryRaw<{ v: string }[]>`SELECT v FROM kept`;
      await second.close();
      expect(rows).toEqual([{ v: "still here" }]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

async function until(check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
