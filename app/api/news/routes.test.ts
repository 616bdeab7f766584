// The public read routes in-process, over a real store: the memory store backed by read_payloads
// through the read path's own pool (PGlite, or PostgreSQL with TEST_DATABASE_URL), and Redis
// (database 5). The acceptance checks of issue 16 that live at the HTTP edge:
// - 1,000 requests touch no write table, with and without Redis;
// - PostgreSQL cut off during load: /api/news keeps answering 200 from the last model, with its age;
// - ETag / 304 (weak comparison), Cache-Control, 429 with Retry-After, 400s, 404, 410.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "@/lib/db";
import { ReadModel } from "@/lib/readmodel/serve";
import { openReadModelStore } from "@/lib/readmodel/store";
import type { ListPage, PublicStory } from "@/lib/readmodel/types";
import { createScratchDatabase, type ScratchDatabase } from "@/lib/scratchDatabase";
import { testServerUrl } from "@/lib/testing/db";
import { seedReadModel } from "@/lib/testing/readModelSeed";
import { flushRedisDb, requireRedis, TEST_REDIS } from "@/lib/testing/redis";
import { startTcpProxy, throughProxy } from "@/lib/testing/tcpProxy";

// Read once by lib/config.ts, at the first request: 600 a minute per client here.
process.env.WIREWATCH_PUBLIC_RATE_LIMIT = "600";

const REDIS_DB = `${TEST_REDIS}/5`;
const hasRedis = await requireRedis("the public routes over Redis");
const serverUrl = testServerUrl();
const ORIGIN = "http://localhost:3000";
const BUILT_AT = new Date(Date.now() - 42_000);

let scratch: ScratchDatabase;
let db: Database;
let stories: PublicStory[];
const globals = globalThis as unknown as {
  wirewatchDb?: Promise<Database>;
  wirewatchReadModel?: ReadModel;
};

/** The process's read model as the server opens it: memory, read_payloads through the read pool. */
function memoryModel(databaseUrl = serverUrl ? scratch.where : undefined): ReadModel {
  return new ReadModel(() =>
    openReadModelStore({ db, databaseUrl, redisUrl: undefined, readPoolSize: 2 }),
  );
}

async function useModel(model: ReadModel): Promise<void> {
  await globals.wirewatchReadModel?.close();
  globals.wirewatchReadModel = model;
}

beforeAll(async () => {
  scratch = await createScratchDatabase("ww_news_routes", serverUrl);
  db = scratch.db;
  globals.wirewatchDb = Promise.resolve(db);
  // The writer side: a builder's store on the same table.
  const writer = await openReadModelStore({ db, databaseUrl: undefined, redisUrl: undefined });
  stories = await seedReadModel(writer, { count: 130, builtAt: BUILT_AT });
  await writer.close();
  await useModel(memoryModel());
});
afterAll(async () => {
  await globals.wirewatchReadModel?.close();
  globals.wirewatchReadModel = undefined;
  await scratch?.dispose();
});

let clientNo = 0;
/** A request from a client of its own (X-Forwarded-For: no peer stamp in tests), unless given. */
function get(path: string, headers: Record<string, string> = {}): Request {
  clientNo += 1;
  return new Request(`${ORIGIN}${path}`, {
    headers: {
      host: "localhost:3000",
      "x-forwarded-for": `198.51.${(clientNo >> 8) & 255}.${clientNo & 255}`,
      ...headers,
    },
  });
}

async function list(path: string, headers?: Record<string, string>): Promise<Response> {
  const { GET } = await import("./route");
  return GET(get(path, headers));
}

async function story(id: string, headers?: Record<string, string>): Promise<Response> {
  const { GET } = await import("./[id]/route");
  return GET(get(`/api/news/${id}`, headers), { params: Promise.resolve({ id }) });
}

/**
 * Accesses to every table, from PostgreSQL's own statistics (pg_stat_user_tables: sequential and
 * index scans, rows inserted, updated, deleted). Counted by the server per table, whatever client,
 * statement or plan touched it, so nothing the request path could do to a table escapes it (a
 * wrapper around one client would miss a client it does not wrap). A backend reports its counts
 * when it exits (and at most once a second while idle), so the read model is closed, and its
 * connections gone, before counting.
 */
async function tableAccess(): Promise<Map<string, number>> {
  if (db.kind === "pglite") {
    await db.prisma.$executeRaw`SELECT pg_stat_force_next_flush()`;
    await db.prisma.$queryRaw`SELECT 1`;
  } else {
    for (let i = 0; i < 100; i++) {
      const [row] = await db.prisma.$queryRaw<{ n: bigint }[]>`
        SELECT count(*) AS n FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid()
          AND application_name IN ('wirewatch-read', 'ww-control')`;
      if (Number(row?.n) === 0) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    await db.prisma.$executeRaw`SELECT pg_stat_force_next_flush()`;
    await db.prisma.$executeRaw`SELECT pg_stat_clear_snapshot()`;
  }
  const rows = await db.prisma.$queryRaw<{ relname: string; n: bigint }[]>`
    SELECT relname, (coalesce(seq_scan, 0) + coalesce(idx_scan, 0) + n_tup_ins + n_tup_upd
      + n_tup_del)::bigint AS n
    FROM pg_stat_user_tables`;
  return new Map(rows.map((r) => [r.relname, Number(r.n)]));
}

function touched(before: Map<string, number>, after: Map<string, number>, except: string[]) {
  return [...after].filter(
    ([table, n]) => !except.includes(table) && n !== (before.get(table) ?? 0),
  );
}

/** 1,000 requests of every kind the public API answers. */
async function thousandRequests(): Promise<Record<number, number>> {
  const statuses: Record<number, number> = {};
  const first = (await (await list("/api/news")).json()) as ListPage;
  const filters = ["", "category=politics", "lang=bn", "category=sports&lang=en", "lang=other"];
  const requests: (() => Promise<Response>)[] = [];
  for (let i = 0; i < 1000; i++) {
    const kind = i % 10;
    const filter = filters[i % filters.length];
    requests.push(() => {
      if (kind < 4) return list(`/api/news?${filter}`);
      if (kind === 4) return list(`/api/news?limit=${(i % 100) + 1}&${filter}`);
      if (kind === 5) return list(`/api/news?cursor=${first.nextCursor}&limit=${(i % 7) + 1}`);
      if (kind === 6) return story(stories[i % stories.length]?.id ?? "");
      if (kind === 7) return story("e".repeat(64));
      if (kind === 8) return list("/api/news", { "if-none-match": 'W/"1-nope", "x"' });
      return list(`/api/news?limit=${i}&cursor=bogus`);
    });
  }
  for (let i = 0; i < requests.length; i += 50) {
    const batch = await Promise.all(requests.slice(i, i + 50).map((r) => r()));
    for (const res of batch) statuses[res.status] = (statuses[res.status] ?? 0) + 1;
  }
  return statuses;
}

describe("the request path touches no write table", () => {
  it("the count sees a statement against a write table (the method can fail)", async () => {
    const before = await tableAccess();
    if (db.kind === "pglite") {
      await db.prisma.$queryRaw`SELECT count(*) FROM news`;
    } else {
      const control = new pg.Client({
        connectionString: scratch.where,
        application_name: "ww-control",
      });
      await control.connect();
      await control.query("SELECT count(*) FROM news");
      await control.query("SELECT id FROM jobs LIMIT 1");
      await control.end();
    }
    const moved = touched(before, await tableAccess(), []).map(([t]) => t);
    expect(moved).toContain("news");
    if (db.kind === "postgres") expect(moved).toContain("jobs");
  });

  it("1,000 requests from the memory store: 0 statements against any table but read_payloads", async () => {
    await useModel(memoryModel());
    const before = await tableAccess();
    const statuses = await thousandRequests();
    await useModel(memoryModel()); // closes the one that served: its connections report and go
    const after = await tableAccess();
    expect(statuses[200]).toBeGreaterThan(700);
    expect(statuses[400]).toBe(100);
    expect(statuses[404]).toBe(100);
    for (const table of ["news", "news_events", "jobs", "read_stories"]) {
      expect(after.has(table), table).toBe(true);
    }
    expect(touched(before, after, ["read_payloads"])).toEqual([]);
  });

  it.skipIf(!hasRedis)(
    "1,000 requests from Redis: 0 statements against any table at all",
    async () => {
      await flushRedisDb(REDIS_DB);
      const writer = await openReadModelStore({ redisUrl: REDIS_DB, prefix: "routes:" });
      await seedReadModel(writer, { count: 130, builtAt: BUILT_AT });
      await writer.close();
      await useModel(
        new ReadModel(() => openReadModelStore({ redisUrl: REDIS_DB, prefix: "routes:" })),
      );
      const before = await tableAccess();
      const statuses = await thousandRequests();
      await useModel(memoryModel());
      const after = await tableAccess();
      expect(statuses[200]).toBeGreaterThan(700);
      expect(touched(before, after, [])).toEqual([]);
    },
  );
});

// PGlite is the process itself: only PostgreSQL can be stopped under a running app.
describe.skipIf(!serverUrl)("PostgreSQL cut off during load", () => {
  it("/api/news keeps answering 200 from the last model, with its age", async () => {
    const where = new URL(scratch.where);
    const proxy = await startTcpProxy({ host: where.hostname, port: Number(where.port || 5432) });
    await useModel(memoryModel(throughProxy(scratch.where, proxy.port)));
    const answers: { status: number; age: number; version: string | null }[] = [];
    const paths = ["/api/news", "/api/news?lang=bn", "/api/news?limit=9", "/api/news?limit=33"];
    for (let i = 0; i < 300; i++) {
      if (i === 100) {
        await proxy.cut();
        // Really gone: a connection through the same way fails.
        const probe = new pg.Client({
          connectionString: throughProxy(scratch.where, proxy.port),
          connectionTimeoutMillis: 1_000,
        });
        await expect(probe.connect()).rejects.toThrow();
      }
      const res = await list(paths[i % paths.length] ?? "/api/news");
      answers.push({
        status: res.status,
        age: Number(res.headers.get("x-model-age")),
        version: res.headers.get("x-model-version"),
      });
      await new Promise((r) => setTimeout(r, 3));
    }
    expect(answers.filter((a) => a.status !== 200)).toEqual([]);
    expect(answers.every((a) => a.age >= 42 && a.version === "1")).toBe(true);
    // A page never built before the cut is built from the store after it (its write to the
    // table fails, the reader does not notice).
    const fresh = await list("/api/news?limit=17&lang=en");
    expect(fresh.status).toBe(200);
    expect(fresh.headers.get("x-cache")).toBe("miss");
    await useModel(memoryModel());
  });
});

describe("HTTP: caching headers, ETag and 304", () => {
  it("answers the first page with the caching headers, the model's version and age", async () => {
    const res = await list("/api/news");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(res.headers.get("cache-control")).toBe(
      "public, s-maxage=15, stale-while-revalidate=60, stale-if-error=600",
    );
    expect(res.headers.get("etag")).toMatch(/^"1-[A-Za-z0-9_-]{16}"$/);
    expect(res.headers.get("x-model-version")).toBe("1");
    expect(Number(res.headers.get("x-model-age"))).toBeGreaterThanOrEqual(42);
    expect(res.headers.get("vary")).toBeNull();
    expect(res.headers.get("x-cache")).toBe("hit");
    const body = (await res.json()) as ListPage;
    expect(body.items.map((s) => s.id)).toEqual(stories.slice(0, 20).map((s) => s.id));
    expect(body.nextCursor).toEqual(expect.any(String));
    expect(body.model.version).toBe(1);
  });

  it("304 for If-None-Match by the weak comparison; 200 for another tag", async () => {
    const etag = (await list("/api/news?lang=bn")).headers.get("etag") ?? "";
    for (const inm of [etag, `W/${etag}`, `"x", ${etag}`, "*"]) {
      const res = await list("/api/news?lang=bn", { "if-none-match": inm });
      expect(res.status, inm).toBe(304);
      expect(res.headers.get("etag")).toBe(etag);
      expect(res.headers.get("cache-control")).toContain("s-maxage=15");
      expect(await res.text()).toBe("");
    }
    expect((await list("/api/news?lang=bn", { "if-none-match": '"1-other"' })).status).toBe(200);
    const one = stories[3] as PublicStory;
    const storyTag = (await story(one.id)).headers.get("etag") ?? "";
    expect((await story(one.id, { "if-none-match": storyTag })).status).toBe(304);
  });

  it("filters by language and category, Bangla intact", async () => {
    const bn = (await (await list("/api/news?lang=bn&limit=100")).json()) as ListPage;
    expect(bn.items.length).toBe(65);
    expect(bn.items.every((s) => s.language === "bn" && s.title.startsWith("খবর"))).toBe(true);
    const both = (await (await list("/api/news?category=sports&lang=en")).json()) as ListPage;
    expect(both.items.every((s) => s.category === "sports" && s.language === "en")).toBe(true);
  });

  it("GET /api/news/{id}: the story; 404 when there is none", async () => {
    const one = stories[5] as PublicStory;
    const res = await story(one.id);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toContain("public");
    expect(((await res.json()) as { story: PublicStory }).story).toEqual(one);
    const missing = await story("0".repeat(64));
    expect(missing.status).toBe(404);
    expect((await missing.json()).error.code).toBe("not_found");
  });
});

describe("HTTP: what it refuses", () => {
  it("400 with {error:{code,message}} for bad input, a bad cursor and a bad id", async () => {
    const cases: [string, string][] = [
      ["/api/news?limit=0", "bad_request"],
      ["/api/news?limit=101", "bad_request"],
      ["/api/news?limit=ten", "bad_request"],
      ["/api/news?page=2", "bad_request"],
      ["/api/news?lang=bn&lang=en", "bad_request"],
      ["/api/news?cursor=not-a-cursor!", "bad_cursor"],
      [
        `/api/news?cursor=${Buffer.from('{"v":1,"o":-5,"l":"home"}').toString("base64url")}`,
        "bad_cursor",
      ],
      ["/api/news?category=Sports!", "bad_filter"],
    ];
    for (const [path, code] of cases) {
      const res = await list(path);
      expect(res.status, path).toBe(400);
      const body = await res.json();
      expect(body.error.code, path).toBe(code);
      expect(body.error.message, path).toEqual(expect.any(String));
    }
    const next = ((await (await list("/api/news?lang=en")).json()) as ListPage).nextCursor;
    expect((await (await list(`/api/news?lang=bn&cursor=${next}`)).json()).error.code).toBe(
      "bad_cursor",
    );
    const bad = await story("not-a-story");
    expect(bad.status).toBe(400);
  });

  it("410 for a cursor whose model version is gone", async () => {
    const gone = Buffer.from('{"v":99,"o":20,"l":"home"}').toString("base64url");
    const res = await list(`/api/news?cursor=${gone}`);
    expect(res.status).toBe(410);
    expect((await res.json()).error.code).toBe("cursor_expired");
  });

  it("429 with Retry-After past WIREWATCH_PUBLIC_RATE_LIMIT a minute for one client", async () => {
    const client = { "x-forwarded-for": "203.0.113.77" };
    // A bucket of 600 refilled at 10 a second: the 601st request within the first second is
    // refused; a slower loop earns one more per 100 ms it takes.
    const started = Date.now();
    let allowed = 0;
    let refused: Response | null = null;
    for (let i = 0; i < 2_000 && !refused; i++) {
      const res = await list("/api/news", client);
      if (res.status === 429) refused = res;
      else allowed += 1;
    }
    const refill = Math.ceil((Date.now() - started) / 100);
    expect(allowed).toBeGreaterThanOrEqual(600);
    expect(allowed).toBeLessThanOrEqual(600 + refill);
    if (!refused) throw new Error("never refused");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect((await refused.json()).error.code).toBe("rate_limited");
    expect((await story(stories[0]?.id ?? "", client)).status).toBe(429);
    // Another client is not affected.
    expect((await list("/api/news", { "x-forwarded-for": "203.0.113.78" })).status).toBe(200);
  });
});
