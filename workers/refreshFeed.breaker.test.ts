import type http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_BREAKER } from "@/lib/breaker";
import { on } from "@/lib/events";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { toSourceRef } from "@/workers/collectors/sourceRef";
import type { FetchSourceOptions } from "@/workers/fetcher";
import { DEFAULT_LIMITS } from "@/workers/fetcher/httpGet";
import { OutageWatch } from "@/workers/fetcher/outage";
import { RateBudget } from "@/workers/fetcher/rateBudget";
import { DEFAULT_FETCH_RETRY } from "@/workers/fetcher/retry";
import { startServer, type TestServer } from "@/workers/fetcher/testing/servers";
import type { ClaimedJob } from "@/workers/queue/types";
import { refreshFeed } from "@/workers/refreshFeed";
import { type SourceConfig, sourceSchema } from "@/workers/sources/sourcesFile";
import { syncSources } from "@/workers/sources/syncSources";
import { fetchStage } from "@/workers/stages/fetchStage";
import { FETCH_QUEUE, syncFrontier } from "@/workers/stages/frontier";
import { writeBatch } from "@/workers/store";

// A source that fails every poll must have its breaker open within 3 minutes of default settings
// (threshold, retries, schedule), whether it fails at the transport (503) or answers 200 with
// something that is not a feed. The schedule is simulated: each poll runs for real against a
// loopback server through the fetch stage, and the clock advances by the retry sleeps it asked
// for and the delay the stage rescheduled it with, instead of waiting real minutes.

const HTML = "<!doctype html><html><body><h1>Welcome</h1><p>Not a feed.</p></body></html>";
const RSS = `<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>
<item><guid>g1</guid><title>One</title><link>http://example.test/1</link></item></channel></rss>`;

let db: TestDatabase;
let server: TestServer;
const routes = new Map<string, http.RequestListener>();
const configs: SourceConfig[] = [];
let n = 0;

beforeAll(async () => {
  db = await createTestDatabase();
  server = await startServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    const route = routes.get(path);
    if (route) return void route(req, res);
    res.writeHead(404).end();
  });
});
afterAll(async () => {
  await server?.close();
  await db?.drop();
});

/** A feed source from a sources file (its defaults: poll interval, breaker) on its own route. */
async function feedSource(handler: http.RequestListener, extra: Record<string, unknown> = {}) {
  const id = `src-${++n}`;
  routes.set(`/${id}`, handler);
  const config = sourceSchema.parse({
    id,
    name: id,
    kind: "feed",
    url: `${server.origin}/${id}`,
    allowPrivate: true,
    ...extra,
  });
  configs.push(config);
  await syncSources(db, configs);
  return { id, config };
}

const breaker = (id: string) =>
  db.prisma.sourceState.findUniqueOrThrow({ where: { sourceId: id } });

/** The fetch options of a worker, with the retry sleeps recorded instead of waited for. */
function workerOptions(slept: number[], more: FetchSourceOptions = {}): FetchSourceOptions {
  return {
    robots: false,
    ...more,
    deps: {
      sleep: async (ms) => void slept.push(ms),
      rateBudget: new RateBudget({ ratePerSecond: 1_000, burst: 1_000 }),
      outage: new OutageWatch(),
    },
  };
}

/**
 * Polls the source as the frontier schedules it, until its breaker opens or `maxPolls` ran out.
 * Returns the simulated seconds from the first poll to the end of the poll that opened it.
 */
async function secondsUntilOpen(id: string, maxPolls = 30) {
  await syncFrontier(db);
  const job = await db.prisma.job.findFirstOrThrow({ where: { queue: FETCH_QUEUE, sourceId: id } });
  const slept: number[] = [];
  const stage = fetchStage(db, (deliveries) => writeBatch(db, deliveries), {
    fetch: workerOptions(slept),
  });
  let payload = job.payload as Record<string, unknown>;
  let elapsed = 0;
  const delays: number[] = [];
  for (let poll = 1; poll <= maxPolls; poll++) {
    slept.length = 0;
    const t0 = Date.now();
    const outcome = await stage.handler(
      { queue: FETCH_QUEUE, key: job.key, sourceId: id, payload } as unknown as ClaimedJob,
      { signal: new AbortController().signal },
    );
    elapsed += (Date.now() - t0) / 1000 + slept.reduce((a, b) => a + b, 0) / 1000;
    if ((await breaker(id)).breakerState === "open") return { elapsed, polls: poll, delays };
    if (!outcome) throw new Error("the fetch stage ended the job");
    delays.push(outcome.reschedule.delaySeconds);
    elapsed += outcome.reschedule.delaySeconds;
    payload = outcome.reschedule.payload as Record<string, unknown>;
  }
  return { elapsed: Number.POSITIVE_INFINITY, polls: maxPolls, delays };
}

describe("a source failing every poll opens its breaker within 3 minutes of default settings", () => {
  it.each([
    ["the sources file's default", undefined],
    ["30 s", 30],
    ["1 h", 3_600],
  ])("poll interval %s: a 200 with an HTML page, and a 503", async (_label, interval) => {
    const extra = interval ? { pollIntervalSeconds: interval } : {};
    const html = await feedSource((_req, res) => {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(HTML);
    }, extra);
    const down = await feedSource((_req, res) => void res.writeHead(503).end(), extra);

    const page = await secondsUntilOpen(html.id);
    const unavailable = await secondsUntilOpen(down.id);
    expect({ polls: page.polls, opened: page.elapsed <= 180 }).toEqual({
      polls: DEFAULT_BREAKER.threshold,
      opened: true,
    });
    // Every failed request counts, the retries inside a poll included: a 503 poll tries 3 times,
    // so the second poll reaches the threshold of 5.
    expect({ polls: unavailable.polls, opened: unavailable.elapsed <= 180 }).toEqual({
      polls: Math.ceil(DEFAULT_BREAKER.threshold / DEFAULT_FETCH_RETRY.attempts),
      opened: true,
    });
    expect(server.hits(`/${down.id}`)).toBe(
      DEFAULT_FETCH_RETRY.attempts *
        Math.ceil(DEFAULT_BREAKER.threshold / DEFAULT_FETCH_RETRY.attempts),
    );
    const state = await breaker(html.id);
    expect(state).toMatchObject({ lastErrorCode: "parse_error", breakerFailures: 5 });
  });

  it("a source that never answers: every timed-out request counts, so its second poll opens it", async () => {
    // Timeouts are real waits, so this one runs with short limits; with the defaults (15 s for
    // headers) the same two polls take 3 × 15 s + ≤ 33 s + 2 × 15 s ≈ 108 s (decision 012).
    const hung = await feedSource(() => {});
    await syncFrontier(db);
    const job = await db.prisma.job.findFirstOrThrow({
      where: { queue: FETCH_QUEUE, sourceId: hung.id },
    });
    const stage = fetchStage(db, (deliveries) => writeBatch(db, deliveries), {
      fetch: workerOptions([], { limits: { ...DEFAULT_LIMITS, headersTimeoutMs: 200 } }),
    });
    let payload = job.payload as Record<string, unknown>;
    const codes: string[] = [];
    for (let poll = 1; poll <= 2; poll++) {
      const outcome = await stage.handler(
        { queue: FETCH_QUEUE, key: job.key, sourceId: hung.id, payload } as unknown as ClaimedJob,
        { signal: new AbortController().signal },
      );
      codes.push((await breaker(hung.id)).breakerState);
      if (outcome) payload = outcome.reschedule.payload as Record<string, unknown>;
    }
    expect(codes).toEqual(["closed", "open"]);
    expect(server.hits(`/${hung.id}`)).toBe(2 * DEFAULT_FETCH_RETRY.attempts);
  });

  it("a broken page's Cache-Control does not hold the next poll back", async () => {
    const html = await feedSource((_req, res) => {
      res.writeHead(200, { "content-type": "text/html", "cache-control": "max-age=3600" });
      res.end(HTML);
    });
    const page = await secondsUntilOpen(html.id);
    expect(page.delays.every((d) => d <= 60)).toBe(true);
    expect(page.elapsed).toBeLessThanOrEqual(180);
  });
});

describe("one verdict per poll, after the body is read", () => {
  it("the source's own breaker options are used for a body that does not parse", async () => {
    const { id, config } = await feedSource((_req, res) => void res.end(HTML));
    const ref = toSourceRef({ ...config, backfillUrl: null, observes: null });
    if (!ref) throw new Error("no ref");
    const options = workerOptions([], { breaker: { threshold: 7 } });
    for (let i = 1; i <= 6; i++) {
      expect((await refreshFeed(db, ref, "A", null, options)).code).toBe("parse_error");
      expect(await breaker(id)).toMatchObject({ breakerState: "closed", breakerFailures: i });
    }
    await refreshFeed(db, ref, "A", null, options);
    expect(await breaker(id)).toMatchObject({ breakerState: "open", breakerFailures: 7 });
  });

  it("the attempt is recorded once, with its final code, and a parsed 200 closes the count", async () => {
    let body = HTML;
    const { id, config } = await feedSource((_req, res) => void res.end(body));
    const ref = toSourceRef({ ...config, backfillUrl: null, observes: null });
    if (!ref) throw new Error("no ref");
    const seen: string[] = [];
    const off = on("fetch:finished", (e) => {
      if (e.source === id) seen.push(e.code);
    });
    try {
      const options = workerOptions([]);
      await refreshFeed(db, ref, "A", null, options);
      await refreshFeed(db, ref, "A", null, options);
      expect((await breaker(id)).breakerFailures).toBe(2);
      body = RSS;
      expect((await refreshFeed(db, ref, "A", null, options)).code).toBe("ok");
      expect((await breaker(id)).breakerFailures).toBe(0);
    } finally {
      off();
    }
    expect(seen).toEqual(["parse_error", "parse_error", "ok"]);
    const rows = await db.prisma.fetchAttempt.findMany({
      where: { sourceId: id },
      orderBy: { id: "asc" },
    });
    expect(rows.map((r) => [r.code, r.httpStatus])).toEqual([
      ["parse_error", 200],
      ["parse_error", 200],
      ["ok", 200],
    ]);
    expect(rows[0]?.message).toMatch(/not|feed/i);
  });

  it("a body that does not parse leaves no validators: the next poll is not a 304 success", async () => {
    const { id, config } = await feedSource((req, res) => {
      if (req.headers["if-none-match"] === '"page"') return void res.writeHead(304).end();
      res.writeHead(200, { etag: '"page"', "content-type": "text/html" }).end(HTML);
    });
    const ref = toSourceRef({ ...config, backfillUrl: null, observes: null });
    if (!ref) throw new Error("no ref");
    const options = workerOptions([]);
    for (let i = 0; i < 3; i++) {
      expect((await refreshFeed(db, ref, "A", null, options)).code).toBe("parse_error");
    }
    expect(await breaker(id)).toMatchObject({ breakerFailures: 3, etag: null });
  });

  it("a half-open probe whose 200 does not parse reopens the breaker", async () => {
    const { id, config } = await feedSource((_req, res) => void res.end(HTML));
    const ref = toSourceRef({ ...config, backfillUrl: null, observes: null });
    if (!ref) throw new Error("no ref");
    const options = workerOptions([], { breaker: { threshold: 2 } });
    await refreshFeed(db, ref, "A", null, options);
    await refreshFeed(db, ref, "A", null, options);
    expect((await breaker(id)).breakerState).toBe("open");
    await db.prisma.$executeRaw`
      UPDATE source_state SET breaker_changed_at = now() - interval '1 hour' WHERE source_id = ${id}`;
    const hits = server.hits(`/${id}`);
    expect((await refreshFeed(db, ref, "A", null, options)).code).toBe("parse_error");
    expect(server.hits(`/${id}`)).toBe(hits + 1);
    const [state] = await db.prisma.$queryRaw<{ state: string; age: number }[]>`
      SELECT breaker_state AS state, extract(epoch FROM now() - breaker_changed_at)::float8 AS age
      FROM source_state WHERE source_id = ${id}`;
    expect(state?.state).toBe("open");
    expect(state?.age).toBeLessThan(5);
    expect((await refreshFeed(db, ref, "A", null, options)).code).toBe("breaker_open");
  });
});

describe("hot sources", () => {
  it("a first poll's items do not make a source hot; news on a later poll does", async () => {
    let items = 3;
    const feed = () =>
      `<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>${Array.from(
        { length: items },
        (_, i) => `<item><guid>h${i}</guid><title>Item ${i}</title></item>`,
      ).join("")}</channel></rss>`;
    const { id } = await feedSource((_req, res) => {
      res.writeHead(200, { "content-type": "application/rss+xml" }).end(feed());
    });
    await syncFrontier(db);
    const job = await db.prisma.job.findFirstOrThrow({
      where: { queue: FETCH_QUEUE, sourceId: id },
    });
    const stage = fetchStage(db, (deliveries) => writeBatch(db, deliveries), {
      fetch: workerOptions([]),
    });
    const poll = async (payload: Record<string, unknown>) => {
      const outcome = await stage.handler(
        { queue: FETCH_QUEUE, key: job.key, sourceId: id, payload } as unknown as ClaimedJob,
        { signal: new AbortController().signal },
      );
      if (!outcome) throw new Error("the fetch stage ended the job");
      return outcome.reschedule;
    };
    // The first sight of a feed: three items new to us, none of them news arriving.
    const first = await poll(job.payload as Record<string, unknown>);
    expect(first.priority).toBe(0);
    expect(first.delaySeconds).toBeGreaterThan(250); // the 300 s interval, jittered
    // Nothing new: still not hot.
    const second = await poll(first.payload as Record<string, unknown>);
    expect(second.priority).toBe(0);
    // A new item: hot, polled 4× as often and claimed first.
    items = 4;
    const third = await poll(second.payload as Record<string, unknown>);
    expect(third.priority).toBe(1);
    expect(third.delaySeconds).toBeLessThan(90);
  });
});
