import type http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "@/lib/db";
import { createTestDatabase, requireRealPostgres, type TestDatabase } from "@/lib/testing/db";
import { type FetchSourceOptions, fetchSource } from "./index";
import { currentOutage, OutageWatch } from "./outage";
import { RateBudget } from "./rateBudget";
import { createSources, startServer, type TestServer } from "./testing/servers";

let db: TestDatabase;
let server: TestServer;
const routes = new Map<string, http.RequestListener>();

beforeAll(async () => {
  db = await createTestDatabase();
  server = await startServer((req, res) => {
    const route = routes.get(new URL(req.url ?? "/", "http://x").pathname);
    if (route) return void route(req, res);
    res.writeHead(404).end();
  });
  routes.set("/ok", (_req, res) => void res.end("<rss/>"));
  routes.set("/503", (_req, res) => void res.writeHead(503).end());
  routes.set("/hang", () => {}); // accepts the connection, never answers: a blackhole
  routes.set("/slow", (_req, res) => void setTimeout(() => res.end("<rss/>"), 400));
  routes.set("/slow503", (_req, res) => void setTimeout(() => res.writeHead(503).end(), 400));
});
afterAll(async () => {
  await server.close();
  await db.drop();
});

const toLocal = async () => ["127.0.0.1"];
const state = (id: string) => db.prisma.sourceState.findUniqueOrThrow({ where: { sourceId: id } });
const base = (extra: FetchSourceOptions["deps"] = {}): FetchSourceOptions => ({
  robots: false,
  allowPrivateHosts: [],
  breaker: { threshold: 2 },
  limits: { connectTimeoutMs: 500, headersTimeoutMs: 700, totalTimeoutMs: 700 },
  deps: {
    resolver: toLocal,
    sleep: async () => {},
    rateBudget: new RateBudget({ ratePerSecond: 1_000, burst: 1_000 }),
    outage: new OutageWatch(),
    ...extra,
  },
});

async function sources(prefix: string, count: number): Promise<string[]> {
  const ids = Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
  await createSources(db, ids);
  return ids;
}

describe("one bad source among ten", () => {
  it.each(["/hang", "/503"])(
    "a source answering %s does not hold up the other nine",
    async (bad) => {
      const ids = await sources(`ten${bad.slice(1)}`, 10);
      // The bad source's timeouts are 1.5 s, three attempts: it takes ≥ 4.5 s. "On time" for the
      // nine is before its first timeout, whatever the load on the machine running the tests.
      const limits = { connectTimeoutMs: 1_500, headersTimeoutMs: 1_500, totalTimeoutMs: 1_500 };
      const options = { ...base(), limits };
      const finished: Record<string, number> = {};
      const t0 = Date.now();
      const results = await Promise.all(
        ids.map(async (id, i) => {
          // Each source on its own host name (one breaker, one rate bucket each).
          const url = `http://${id}.test:${server.port}${i === 0 ? bad : "/ok"}`;
          const result = await fetchSource(db, { id, url, allowPrivate: true }, "A", options);
          finished[id] = Date.now() - t0;
          return result;
        }),
      );
      expect(results[0]?.code).toBe(bad === "/hang" ? "timeout" : "http_5xx");
      expect(results[0]?.attempts).toBe(3);
      if (bad === "/hang") expect(finished[ids[0] as string]).toBeGreaterThanOrEqual(4_400);
      for (const [i, id] of ids.entries()) {
        if (i === 0) continue;
        expect(results[i]?.code).toBe("ok");
        expect(finished[id]).toBeLessThan(1_500);
      }
      // Its three failed requests each count (decision 012).
      expect((await state(ids[0] as string)).breakerFailures).toBe(3);
      for (const id of ids.slice(1)) expect((await state(id)).breakerFailures).toBe(0);
    },
  );
});

describe("a local network outage", () => {
  it("all hosts failing DNS at once freezes breakers instead of opening them; a success ends it", async () => {
    const ids = await sources("outage", 5);
    const watch = new OutageWatch();
    const down = async (): Promise<string[]> => {
      throw Object.assign(new Error("getaddrinfo ENOTFOUND"), { code: "ENOTFOUND" });
    };
    const options = base({ resolver: down, outage: watch });
    for (let round = 0; round < 4; round++) {
      const results = await Promise.all(
        ids.map((id) =>
          fetchSource(db, { id, url: `http://${id}.test/ok`, allowPrivate: true }, "A", options),
        ),
      );
      for (const r of results) expect(r.code).toBe("dns");
      if (round > 0)
        for (const r of results) expect(r).toMatchObject({ outage: true, breaker: undefined });
    }
    for (const id of ids) {
      const st = await state(id);
      expect(st.breakerState).toBe("closed");
      expect(st.breakerFailures).toBeLessThan(2);
      expect(st.lastErrorCode).toBe("dns");
      expect(st.disabledAt).toBeNull();
    }
    const outage = currentOutage(watch);
    expect(outage).toMatchObject({ failingHosts: 3, totalHosts: 3 });
    const rows = await db.prisma.networkOutage.findMany();
    expect(rows).toHaveLength(1);
    expect(rows[0]?.endedAt).toBeNull();
    // Attempts are still recorded: the dashboard shows what happened.
    expect(
      await db.prisma.fetchAttempt.count({ where: { sourceId: { in: ids }, code: "dns" } }),
    ).toBe(20);

    const back = await fetchSource(
      db,
      { id: ids[0] as string, url: `http://${ids[0]}.test:${server.port}/ok`, allowPrivate: true },
      "A",
      base({ outage: watch }),
    );
    expect(back.code).toBe("ok");
    expect(currentOutage(watch)).toBeNull();
    expect((await db.prisma.networkOutage.findFirstOrThrow()).endedAt).not.toBeNull();
  });

  it("one host failing is that host's problem: its breaker opens", async () => {
    const [id] = await sources("lonely", 1);
    const watch = new OutageWatch();
    const options = base({ outage: watch });
    for (const other of ["a", "b", "c"]) {
      const [ok] = await sources(`fine-${other}`, 1);
      await fetchSource(
        db,
        { id: ok as string, url: `http://${other}.test:${server.port}/ok`, allowPrivate: true },
        "A",
        options,
      );
    }
    const down = async (): Promise<string[]> => {
      throw Object.assign(new Error("ENOTFOUND"), { code: "ENOTFOUND" });
    };
    for (let i = 0; i < 2; i++) {
      await fetchSource(
        db,
        { id: id as string, url: "http://gone.test/", allowPrivate: true },
        "A",
        {
          ...options,
          deps: { ...options.deps, resolver: down },
        },
      );
    }
    expect(watch.active()).toBe(false);
    expect((await state(id as string)).breakerState).toBe("open");
  });
});

describe("robots.txt answers", () => {
  it("5xx disallows for a short while; 4xx allows everything", async () => {
    const [a, b] = await sources("robots", 2);
    routes.set("/robots.txt", (req, res) => {
      const status = req.headers.host?.startsWith("five") ? 503 : 403;
      res.writeHead(status).end();
    });
    const options = { ...base(), robots: {} };
    const five = await fetchSource(
      db,
      { id: a as string, url: `http://five.test:${server.port}/ok`, allowPrivate: true },
      "A",
      options,
    );
    expect(five.code).toBe("blocked_robots");
    const four = await fetchSource(
      db,
      { id: b as string, url: `http://four.test:${server.port}/ok`, allowPrivate: true },
      "A",
      options,
    );
    expect(four.code).toBe("ok");
    const cached = await db.prisma.robotsCache.findMany({ orderBy: { origin: "asc" } });
    const ttl = (c: (typeof cached)[number]) =>
      (c.expiresAt.getTime() - c.fetchedAt.getTime()) / 60_000;
    expect(cached.map((c) => [c.status, Math.round(ttl(c))])).toEqual([
      [503, 10],
      [403, 24 * 60],
    ]);
  });
});

describe.skipIf(!requireRealPostgres("50 workers racing for one half-open probe"))(
  "the half-open probe across processes, end to end",
  () => {
    it.each(["/slow", "/slow503"])(
      "exactly one of 50 concurrent fetches over 5 connections reaches the network (%s)",
      async (path) => {
        const [id] = await sources(`race${path.slice(1)}`, 1);
        const clients: Database[] = [db];
        for (let i = 0; i < 4; i++) clients.push(await db.connectAnother(10));
        // Open, its cool-down long over: the next admit may claim the probe.
        await db.prisma.$executeRaw`
          INSERT INTO source_state (source_id, breaker_state, breaker_failures, breaker_changed_at)
          VALUES (${id}, 'open', 2, now() - interval '1 hour') ON CONFLICT DO NOTHING`;
        const before = server.hits(path);
        const options = base();
        const results = await Promise.all(
          Array.from({ length: 50 }, (_, i) =>
            fetchSource(
              clients[i % clients.length] as Database,
              {
                id: id as string,
                url: `http://race.test:${server.port}${path}`,
                allowPrivate: true,
              },
              "A",
              options,
            ),
          ),
        );
        expect(server.hits(path) - before).toBe(1);
        expect(results.filter((r) => r.attempts > 0)).toHaveLength(1);
        expect(results.filter((r) => r.code === "breaker_open")).toHaveLength(49);
        expect((await state(id as string)).breakerState).toBe(path === "/slow" ? "closed" : "open");
      },
    );
  },
);
