import { createHash } from "node:crypto";
import type http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { type FetchSourceOptions, fetchSource } from "./index";
import { OutageWatch } from "./outage";
import { RateBudget } from "./rateBudget";
import { createSources, startServer, type TestServer } from "./testing/servers";

let db: TestDatabase;
let server: TestServer;
const routes = new Map<string, http.RequestListener>();
let n = 0;

beforeAll(async () => {
  db = await createTestDatabase();
  server = await startServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    const route = routes.get(path);
    if (route) return void route(req, res);
    res.writeHead(404);
    res.end();
  });
});
afterAll(async () => {
  await server.close();
  await db.drop();
});

/** A fresh source on its own path, its own options (own outage watch, no real sleeping). */
async function setup(path: string, handler: http.RequestListener, extra: FetchSourceOptions = {}) {
  const id = `src-${++n}`;
  const route = `/${id}${path}`;
  routes.set(route, handler);
  await createSources(db, [id]);
  const slept: number[] = [];
  const options: FetchSourceOptions = {
    robots: false,
    breaker: { threshold: 3 },
    ...extra,
    deps: {
      sleep: async (ms) => void slept.push(ms),
      rateBudget: new RateBudget({ ratePerSecond: 1_000, burst: 1_000 }),
      outage: new OutageWatch(),
      ...extra.deps,
    },
  };
  const source = { id, url: `${server.origin}${route}`, allowPrivate: true };
  return {
    id,
    route,
    slept,
    source,
    poll: (more: FetchSourceOptions = {}) => fetchSource(db, source, "A", { ...options, ...more }),
  };
}

const state = (id: string) => db.prisma.sourceState.findUniqueOrThrow({ where: { sourceId: id } });
const attempts = (id: string) =>
  db.prisma.fetchAttempt.findMany({ where: { sourceId: id }, orderBy: { id: "asc" } });
const backdateFullFetch = (id: string) => db.prisma.$executeRaw`
  UPDATE source_state SET last_full_fetch_at = now() - interval '2 hours' WHERE source_id = ${id}`;

/** A feed that honours If-None-Match with an ETag derived from its body. */
function honestFeed(body: () => string): http.RequestListener {
  return (req, res) => {
    const etag = `"${createHash("sha1").update(body()).digest("hex").slice(0, 12)}"`;
    if (req.headers["if-none-match"] === etag) {
      res.writeHead(304, { etag });
      return void res.end();
    }
    res.writeHead(200, { etag, "content-type": "application/rss+xml" });
    res.end(body());
  };
}

describe("conditional GET", () => {
  it("a 304 is a success: counted, recorded, and it resets the breaker's count", async () => {
    const s = await setup(
      "/feed",
      honestFeed(() => "<rss>one</rss>"),
    );
    const first = await s.poll();
    expect(first).toMatchObject({
      code: "ok",
      status: 200,
      conditional: false,
      notModified: false,
    });
    expect(first.body?.toString()).toBe("<rss>one</rss>");
    expect(first.contentType).toBe("application/rss+xml");
    await db.prisma.sourceState.update({ where: { sourceId: s.id }, data: { breakerFailures: 2 } });
    const second = await s.poll();
    expect(second).toMatchObject({
      code: "not_modified",
      status: 304,
      conditional: true,
      notModified: true,
    });
    expect(second.body).toBeUndefined();
    const rows = await attempts(s.id);
    expect(rows.map((r) => [r.code, r.notModified, r.conditional])).toEqual([
      ["ok", false, false],
      ["not_modified", true, true],
    ]);
    expect((await state(s.id)).breakerFailures).toBe(0);
    expect((await state(s.id)).lastPolledAt).not.toBeNull();
  });

  it("Last-Modified alone is a validator too", async () => {
    const stamp = "Mon, 30 Nov 2026 06:00:00 GMT";
    const s = await setup("/feed", (req, res) => {
      if (req.headers["if-modified-since"] === stamp) return void res.writeHead(304).end();
      res.writeHead(200, { "last-modified": stamp }).end("body");
    });
    expect((await s.poll()).code).toBe("ok");
    expect((await state(s.id)).lastModified).toBe(stamp);
    expect(await s.poll()).toMatchObject({ code: "not_modified", conditional: true });
  });

  it("a source that stops sending validators is fetched in full", async () => {
    let validators = true;
    const seen: (string | undefined)[] = [];
    const s = await setup("/feed", (req, res) => {
      seen.push(req.headers["if-none-match"] as string | undefined);
      if (validators && req.headers["if-none-match"] === '"a"')
        return void res.writeHead(304).end();
      res.writeHead(200, validators ? { etag: '"a"' } : {});
      res.end("body");
    });
    expect((await s.poll()).code).toBe("ok");
    expect((await s.poll()).code).toBe("not_modified");
    validators = false;
    await backdateFullFetch(s.id); // the hourly full fetch: the answer carries no ETag any more
    expect((await s.poll()).code).toBe("ok");
    expect((await state(s.id)).etag).toBeNull();
    const after = await s.poll();
    expect(after).toMatchObject({ code: "ok", conditional: false });
    expect(seen).toEqual([undefined, '"a"', undefined, undefined]);
  });

  it("the honesty check catches a lying ETag and fetches in full from then on", async () => {
    let body = "<rss>first</rss>";
    const seen: (string | undefined)[] = [];
    // Answers 304 to its one fixed ETag whatever the body has become.
    const s = await setup("/feed", (req, res) => {
      seen.push(req.headers["if-none-match"] as string | undefined);
      if (req.headers["if-none-match"] === '"fixed"') return void res.writeHead(304).end();
      res.writeHead(200, { etag: '"fixed"' });
      res.end(body);
    });
    expect((await s.poll()).code).toBe("ok");
    body = "<rss>second: a story the 304s hide</rss>";
    expect((await s.poll()).code).toBe("not_modified"); // the lie
    await backdateFullFetch(s.id);
    const check = await s.poll();
    expect(check).toMatchObject({ code: "ok", conditional: false, caughtLyingValidators: true });
    expect(check.body?.toString()).toBe(body);
    expect((await state(s.id)).trustsValidators).toBe(false);
    body = "<rss>third</rss>";
    const next = await s.poll();
    expect(next).toMatchObject({ code: "ok", conditional: false });
    expect(next.body?.toString()).toBe(body);
    expect(seen.at(-1)).toBeUndefined();
  });

  it("an honest source passes the honesty check", async () => {
    let body = "<rss>first</rss>";
    const s = await setup(
      "/feed",
      honestFeed(() => body),
    );
    await s.poll();
    expect((await s.poll()).code).toBe("not_modified");
    body = "<rss>second</rss>";
    await backdateFullFetch(s.id);
    expect((await s.poll()).code).toBe("ok");
    expect((await state(s.id)).trustsValidators).toBe(true);
    expect((await s.poll()).code).toBe("not_modified");
  });
});

describe("retries", () => {
  it("a 429 is retried after its Retry-After", async () => {
    let calls = 0;
    const s = await setup("/feed", (_req, res) => {
      if (++calls === 1) return void res.writeHead(429, { "retry-after": "7" }).end();
      res.end("ok");
    });
    const result = await s.poll();
    expect(result).toMatchObject({ code: "ok", attempts: 2 });
    expect(s.slept).toEqual([7_000]);
    expect((await attempts(s.id)).map((r) => [r.code, r.httpStatus, r.retry])).toEqual([
      ["http_429", 429, 0],
      ["ok", 200, 1],
    ]);
  });

  it("hands the source's pacing hints to the scheduler", async () => {
    const s = await setup("/feed", (_req, res) => {
      res.writeHead(200, { "cache-control": "public, max-age=600" });
      res.end("ok");
    });
    expect(await s.poll()).toMatchObject({ code: "ok", cacheControl: "public, max-age=600" });
    const busy = await setup(
      "/busy",
      (_req, res) => void res.writeHead(429, { "retry-after": "90" }).end(),
      {
        retry: { attempts: 1 },
      },
    );
    expect(await busy.poll()).toMatchObject({ code: "http_429", retryAfterSeconds: 90 });
  });

  it("a 503 is retried with jitter up to the attempt limit", async () => {
    const s = await setup("/feed", (_req, res) => void res.writeHead(503).end(), {
      deps: { random: () => 0.5 },
    });
    const result = await s.poll();
    expect(result).toMatchObject({ code: "http_5xx", status: 503, attempts: 3 });
    expect(s.slept).toEqual([250, 500]);
    // Each failed request counts toward the breaker, the retries included (decision 012).
    expect((await state(s.id)).breakerFailures).toBe(3);
  });

  it.each([400, 401, 403, 451])("a %i is never retried", async (status) => {
    const s = await setup("/feed", (_req, res) => void res.writeHead(status).end());
    const result = await s.poll();
    expect(result).toMatchObject({ code: "http_4xx", status, attempts: 1 });
    expect(s.slept).toEqual([]);
    expect(server.hits(s.route)).toBe(1);
  });

  it("404 and 410 disable the source without touching the breaker", async () => {
    for (const status of [404, 410]) {
      const s = await setup("/feed", (_req, res) => void res.writeHead(status).end());
      expect((await s.poll()).code).toBe(status === 404 ? "http_404" : "http_410");
      const st = await state(s.id);
      expect(st.disabledReason).toMatch(/^http_4(04|10)/);
      expect(st.breakerFailures).toBe(0);
      expect(await s.poll()).toMatchObject({ code: "disabled", attempts: 0 });
      expect(server.hits(s.route)).toBe(1);
    }
  });

  it("reports a validated permanent redirect so the caller may store it", async () => {
    const s = await setup(
      "/old",
      (_req, res) => void res.writeHead(301, { location: "new" }).end(),
    );
    routes.set(s.route.replace(/old$/, "new"), (_req, res) => void res.end("moved"));
    const result = await s.poll();
    expect(result.code).toBe("ok");
    expect(result.permanentRedirect).toBe(s.source.url.replace(/old$/, "new"));
  });
});

describe("the breaker around fetchSource", () => {
  it("opens after the threshold, sends zero requests while open, probes once, closes on success", async () => {
    let up = false;
    const s = await setup(
      "/feed",
      (_req, res) => void (up ? res.end("ok") : res.writeHead(503).end()),
      {
        retry: { attempts: 1 },
      },
    );
    const polls = [];
    for (let i = 0; i < 3; i++) polls.push(await s.poll());
    expect(polls.map((p) => p.code)).toEqual(["http_5xx", "http_5xx", "http_5xx"]);
    expect(polls.map((p) => p.breaker)).toEqual([
      { state: "closed", opened: false },
      { state: "closed", opened: false },
      { state: "open", opened: true },
    ]);
    expect((await state(s.id)).breakerState).toBe("open");
    const hits = server.hits(s.route);
    for (let i = 0; i < 10; i++) expect((await s.poll()).code).toBe("breaker_open");
    expect(server.hits(s.route)).toBe(hits);
    // Cool-down over (back-dated, not waited for): one probe, which fails and reopens.
    await db.prisma
      .$executeRaw`UPDATE source_state SET breaker_changed_at = now() - interval '1 hour' WHERE source_id = ${s.id}`;
    const probes = [];
    for (let i = 0; i < 50; i++) probes.push(await s.poll());
    expect(probes.filter((p) => p.code === "http_5xx")).toHaveLength(1);
    expect(server.hits(s.route)).toBe(hits + 1);
    expect((await state(s.id)).breakerState).toBe("open");
    up = true;
    await db.prisma
      .$executeRaw`UPDATE source_state SET breaker_changed_at = now() - interval '1 hour' WHERE source_id = ${s.id}`;
    expect((await s.poll()).code).toBe("ok");
    expect(await state(s.id)).toMatchObject({ breakerState: "closed", breakerFailures: 0 });
  });

  it("a probe that hangs loses its lease; the next probe decides, the late one is fenced off", async () => {
    let calls = 0;
    const s = await setup("/feed", (_req, res) => {
      if (++calls === 1) return; // the first probe's request never gets an answer
      res.end("back");
    });
    await db.prisma.$executeRaw`
      INSERT INTO source_state (source_id, breaker_state, breaker_failures, breaker_changed_at)
      VALUES (${s.id}, 'open', 3, now() - interval '1 hour')`;
    const options = {
      breaker: { threshold: 3, probeLeaseMs: 300 },
      limits: { totalTimeoutMs: 1_500, headersTimeoutMs: 1_500 },
    };
    const hung = s.poll(options);
    await new Promise((r) => setTimeout(r, 100));
    expect((await s.poll(options)).code).toBe("breaker_open"); // the probe is out
    await new Promise((r) => setTimeout(r, 400)); // its 300 ms lease is over
    expect((await s.poll(options)).code).toBe("ok");
    expect((await state(s.id)).breakerState).toBe("closed");
    const late = await hung;
    expect(late.code).toBe("timeout");
    expect(late.breaker?.state).toBe("closed"); // counted, but it no longer holds the probe
    expect(calls).toBe(2);
  });

  it("a probe is a single attempt even when its answer is retryable", async () => {
    const s = await setup("/feed", (_req, res) => void res.writeHead(503).end());
    for (let i = 0; i < 3; i++) await s.poll();
    await db.prisma
      .$executeRaw`UPDATE source_state SET breaker_changed_at = now() - interval '1 hour' WHERE source_id = ${s.id}`;
    const hits = server.hits(s.route);
    expect(await s.poll()).toMatchObject({ code: "http_5xx", attempts: 1 });
    expect(server.hits(s.route)).toBe(hits + 1);
  });
});

describe("robots.txt", () => {
  it("is respected for our user agent, fetched once and cached", async () => {
    const s = await setup("/private/feed", (_req, res) => void res.end("secret"), { robots: {} });
    routes.set("/robots.txt", (_req, res) => {
      res.end(`User-agent: *\nAllow: /\n\nUser-agent: wirewatch\nDisallow: /${s.id}/private/\n`);
    });
    const robotsBefore = server.hits("/robots.txt");
    const result = await s.poll();
    expect(result).toMatchObject({ code: "blocked_robots" });
    expect(server.hits(s.route)).toBe(0);
    const open = await setup("/feed", (_req, res) => void res.end("public"), { robots: {} });
    expect((await open.poll()).code).toBe("ok");
    expect(server.hits("/robots.txt") - robotsBefore).toBe(1);
    expect((await state(s.id)).breakerFailures).toBe(0);
    expect((await attempts(s.id)).map((r) => r.code)).toEqual(["blocked_robots"]);
  });
});

describe("SSRF through fetchSource", () => {
  it("a source not allowed private cannot reach 127.0.0.1, and it is not the source's fault", async () => {
    const s = await setup("/feed", (_req, res) => void res.end("x"), { robots: {} });
    const before = server.connections();
    const result = await fetchSource(db, { ...s.source, allowPrivate: false }, "A", {
      deps: { outage: new OutageWatch(), sleep: async () => {} },
    });
    expect(result.code).toBe("blocked_ssrf"); // by robots.txt or the feed request, whichever goes first
    expect(server.connections()).toBe(before);
    const st = await state(s.id);
    expect(st).toMatchObject({ lastErrorCode: "blocked_ssrf", breakerFailures: 0 });
  });

  it("a redirect to a private address is refused", async () => {
    const s = await setup("/feed", (_req, res) => {
      res.writeHead(302, { location: "http://169.254.169.254/latest/meta-data/" }).end();
    });
    const result = await fetchSource(
      db,
      { ...s.source, url: s.source.url.replace("127.0.0.1", "feed.test"), allowPrivate: false },
      "A",
      {
        robots: false,
        allowPrivateHosts: ["feed.test"],
        deps: { resolver: async () => ["127.0.0.1"], outage: new OutageWatch() },
      },
    );
    expect(result.code).toBe("blocked_ssrf");
    expect(server.hits(s.route)).toBe(1);
  });

  it("a 50 MB body is too_large and counts against the breaker", async () => {
    const s = await setup("/feed", (_req, res) => {
      res.writeHead(200, { "content-length": String(50 * 1024 * 1024) });
      res.write("x");
    });
    const result = await s.poll({ limits: { maxBytes: 1024 * 1024 } });
    expect(result.code).toBe("too_large");
    expect((await state(s.id)).breakerFailures).toBe(1);
  });
});

describe("one rate budget per host, for every fetch path", () => {
  it("robots.txt and the feed draw from the same bucket", async () => {
    const waits: number[] = [];
    const s = await setup("/feed", (_req, res) => void res.end("x"), { robots: {} });
    // The budget's own clock, which its sleeps move on (no real waiting).
    let now = 0;
    const budget = new RateBudget({
      ratePerSecond: 1,
      burst: 1,
      now: () => now,
      sleep: async (ms) => {
        waits.push(ms);
        now += ms;
      },
    });
    // A fresh origin name so robots.txt is not already cached.
    const url = s.source.url.replace("127.0.0.1", "budget.test");
    await fetchSource(db, { ...s.source, url }, "A", {
      robots: {},
      deps: { rateBudget: budget, resolver: async () => ["127.0.0.1"], outage: new OutageWatch() },
    });
    expect(waits).toHaveLength(1); // robots.txt took the one token; the feed waited ~1 s
    expect(waits[0]).toBeGreaterThan(900);
  });

  it("waiting for the budget does not eat into the total timeout", async () => {
    const s = await setup("/feed", (_req, res) => void res.end("x"));
    // Real sleeping here: 2 requests/s, burst 1, so the second poll waits ~500 ms for its token,
    // longer than the 300 ms total timeout of the exchange itself.
    const budget = new RateBudget({ ratePerSecond: 2, burst: 1 });
    const options = {
      limits: { totalTimeoutMs: 300 },
      deps: { rateBudget: budget, outage: new OutageWatch() },
    };
    const [a, b] = await Promise.all([s.poll(options), s.poll(options)]);
    expect([a.code, b.code]).toEqual(["ok", "ok"]);
    expect(Math.max(a.durationMs, b.durationMs)).toBeGreaterThan(400);
  });
});
