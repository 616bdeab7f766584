import type http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Clock } from "@/lib/backoff";
import { type EventMap, type EventName, on } from "@/lib/events";
import { registerMetrics, scrape } from "@/lib/metrics";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { requireTool } from "@/lib/testing/requireTool";
import type { SourceRef } from "@/workers/collectors/sourceRef";
import type { FetchSourceOptions } from "@/workers/fetcher";
import { OutageWatch } from "@/workers/fetcher/outage";
import { RateBudget } from "@/workers/fetcher/rateBudget";
import {
  createSources,
  fixedResolver,
  startServer,
  type TestServer,
} from "@/workers/fetcher/testing/servers";
import { selfSignedCert } from "@/workers/fetcher/testing/tls";
import { type Delivery, writeBatch } from "@/workers/store";
import { type StreamWatchOptions, watchStream } from "./watchStream";

// A stream's connect is a request like any poll's: through the fetcher's guard, budget and
// classification, recorded in fetch_attempts and counted by fetch:finished, judged by the breaker.

const openssl = requireTool("openssl", "the stream's TLS failure test", "apt-get install openssl");

let db: TestDatabase;
let server: TestServer;
const routes = new Map<string, http.RequestListener>();
let n = 0;

beforeAll(async () => {
  db = await createTestDatabase();
  server = await startServer((req, res) => {
    const route = routes.get(new URL(req.url ?? "/", "http://x").pathname);
    if (route) return void route(req, res);
    res.writeHead(404).end();
  });
});
afterAll(async () => {
  await server?.close();
  await db?.drop();
});

/** A stream source on its own route; its watcher stops at its first reconnect wait. */
async function streamSource(handler: http.RequestListener, url?: string) {
  const id = `stream-${++n}`;
  routes.set(`/${id}`, handler);
  await createSources(db, [id]);
  const source: SourceRef = {
    id,
    kind: "stream",
    url: url ?? `${server.origin}/${id}`,
    allowPrivate: true,
    pollIntervalSeconds: 60,
    backfillUrl: null,
    observes: null,
    render: "http",
  };
  return source;
}

function watchOnce(
  source: SourceRef,
  fetch: FetchSourceOptions = {},
  more: StreamWatchOptions = {},
): Promise<void> {
  const stop = new AbortController();
  const clock: Clock = {
    now: Date.now,
    random: () => 0,
    sleep: async () => stop.abort(),
  };
  return watchStream(db, source, "A", stop.signal, {
    clock,
    ...more,
    fetch: {
      ...fetch,
      deps: {
        outage: new OutageWatch(),
        rateBudget: new RateBudget({ ratePerSecond: 1_000, burst: 1_000 }),
        ...fetch.deps,
      },
    },
  });
}

/** Events of `name` about `source` while `run` runs. */
async function eventsDuring<E extends EventName>(
  name: E,
  source: string,
  run: () => Promise<void>,
): Promise<EventMap[E][]> {
  const seen: EventMap[E][] = [];
  const off = on(name, (e) => {
    if ((e as { source: string }).source === source) seen.push(e);
  });
  try {
    await run();
  } finally {
    off();
  }
  return seen;
}

const attemptsOf = (id: string) =>
  db.prisma.fetchAttempt.findMany({ where: { sourceId: id }, orderBy: { id: "asc" } });

function sse(events: object[]): string {
  return events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join("");
}

describe("a stream's connect goes through the fetcher", () => {
  it("a 404 stream is http_404 in fetch_attempts and fetch:finished, and disables the source", async () => {
    const source = await streamSource((_req, res) => void res.writeHead(404).end());
    // No stop: the watcher ends by itself once the source is disabled.
    const finished = await eventsDuring("fetch:finished", source.id, () =>
      watchStream(db, source, "A", new AbortController().signal, {
        clock: { now: Date.now, random: () => 0, sleep: async () => {} },
        fetch: { deps: { outage: new OutageWatch() } },
      }),
    );
    expect(finished).toEqual([
      expect.objectContaining({ source: source.id, collector: "A", code: "http_404", status: 404 }),
    ]);
    const [attempt, ...more] = await attemptsOf(source.id);
    expect(more).toEqual([]);
    expect(attempt).toMatchObject({ code: "http_404", httpStatus: 404, collector: "A", retry: 0 });
    const [clock] = await db.prisma.$queryRaw<{ skew: number }[]>`
      SELECT abs(extract(epoch FROM now() - started_at))::float8 AS skew
      FROM fetch_attempts WHERE id = ${attempt?.id}`;
    expect(clock?.skew).toBeLessThan(5);
    const state = await db.prisma.sourceState.findUniqueOrThrow({ where: { sourceId: source.id } });
    expect(state).toMatchObject({
      lastErrorCode: "http_404",
      disabledReason: expect.stringMatching(/^http_404/),
    });
  });

  it("connects are counted in wirewatch_fetch_requests_total with the codes polls use", async () => {
    registerMetrics();
    const gone = await streamSource((_req, res) => void res.writeHead(404).end());
    const open = await streamSource((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" }).end(": hi\n\n");
    });
    await watchOnce(gone);
    await watchOnce(open);
    const lines = (await scrape()).body
      .split("\n")
      .filter((l) => l.startsWith("wirewatch_fetch_requests_total{"));
    const count = (source: string, code: string) =>
      lines.find((l) => l.includes(`source="${source}"`) && l.includes(`code="${code}"`));
    expect(count(gone.id, "http_404")).toMatch(/ 1$/);
    expect(count(open.id, "ok")).toMatch(/ 1$/);
  });

  it("a stream refused by the SSRF check is blocked_ssrf and never connects", async () => {
    const source = await streamSource((_req, res) => void res.end());
    const before = server.connections();
    await watchOnce({ ...source, allowPrivate: false });
    expect(server.connections()).toBe(before);
    expect((await attemptsOf(source.id)).map((a) => a.code)).toEqual(["blocked_ssrf"]);
    const state = await db.prisma.sourceState.findUniqueOrThrow({ where: { sourceId: source.id } });
    expect(state).toMatchObject({ breakerFailures: 0, lastErrorCode: "blocked_ssrf" });
  });

  it("connects wait for the host's rate budget, and each failed one counts against the breaker", async () => {
    const source = await streamSource((_req, res) => void res.writeHead(503).end());
    const waits: number[] = [];
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
    const hosts: string[] = [];
    const take = budget.take.bind(budget);
    budget.take = (host) => {
      hosts.push(host);
      return take(host);
    };
    const stop = new AbortController();
    let reconnects = 0;
    await watchStream(db, source, "A", stop.signal, {
      clock: {
        now: Date.now,
        random: () => 0,
        sleep: async () => void (++reconnects === 3 && stop.abort()),
      },
      fetch: { deps: { rateBudget: budget, outage: new OutageWatch() } },
    });
    const host = new URL(server.origin).host;
    expect(hosts).toEqual([host, host, host]);
    expect(waits).toHaveLength(2); // the burst of 1 went to the first connect
    const attempts = await attemptsOf(source.id);
    expect(attempts.map((a) => [a.code, a.retry])).toEqual([
      ["http_5xx", 0],
      ["http_5xx", 1],
      ["http_5xx", 2],
    ]);
    const state = await db.prisma.sourceState.findUniqueOrThrow({ where: { sourceId: source.id } });
    expect(state.breakerFailures).toBe(3);
  });

  it("an open connect is ok in fetch_attempts, closes the breaker, and emits stream:connected/disconnected", async () => {
    const source = await streamSource((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(sse([{ type: "item", seq: 1, guid: "a", title: "A" }]));
    });
    const connected = await eventsDuring("stream:connected", source.id, async () => {
      const disconnected = await eventsDuring("stream:disconnected", source.id, () =>
        watchOnce(source),
      );
      expect(disconnected).toEqual([
        expect.objectContaining({ source: source.id, collector: "A", code: "reset" }),
      ]);
    });
    expect(connected).toEqual([{ source: source.id, collector: "A" }]);
    expect((await attemptsOf(source.id)).map((a) => a.code)).toEqual(["ok"]);
    expect(await db.prisma.news.count({ where: { sourceId: source.id } })).toBe(1);
  });

  it("a 200 that is not an event stream is a parse_error held against the breaker", async () => {
    const source = await streamSource((_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end("<html>maintenance</html>");
    });
    await watchOnce(source);
    expect((await attemptsOf(source.id)).map((a) => a.code)).toEqual(["parse_error"]);
    const state = await db.prisma.sourceState.findUniqueOrThrow({ where: { sourceId: source.id } });
    expect(state).toMatchObject({ breakerFailures: 1, lastErrorCode: "parse_error" });
  });

  it("the backfill is a recorded request too: a 500 history is http_5xx, retried, and drops the connection", async () => {
    const id = `stream-${n + 1}`;
    routes.set(`/${id}/history`, (_req, res) => void res.writeHead(500).end());
    const source = await streamSource((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(": hello\n\n");
    });
    await watchOnce(
      { ...source, backfillUrl: `${server.origin}/${id}/history` },
      { deps: { sleep: async () => {} } },
    );
    expect((await attemptsOf(source.id)).map((a) => a.code)).toEqual([
      "ok",
      "http_5xx",
      "http_5xx",
      "http_5xx",
    ]);
    const state = await db.prisma.sourceState.findUniqueOrThrow({ where: { sourceId: source.id } });
    expect(state).toMatchObject({ breakerFailures: 3, lastErrorCode: "http_5xx" });
  });
});

describe.skipIf(openssl.skip)(`a stream over TLS${openssl.note}`, () => {
  let tls: https.Server;
  let port = 0;
  beforeAll(async () => {
    tls = https.createServer(selfSignedCert(openssl.need(), "stream.test"), (_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" }).write(": hi\n\n");
    });
    await new Promise<void>((resolve) => tls.listen(0, "127.0.0.1", resolve));
    port = (tls.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => (tls ? tls.close(() => resolve()) : resolve())));

  it("an untrusted certificate is `tls`, in fetch_attempts and fetch:finished", async () => {
    const source = await streamSource(() => {}, `https://stream.test:${port}/`);
    const finished = await eventsDuring("fetch:finished", source.id, () =>
      watchOnce(source, { deps: { resolver: fixedResolver("127.0.0.1") } }),
    );
    expect(finished.map((e) => e.code)).toEqual(["tls"]);
    expect((await attemptsOf(source.id)).map((a) => a.code)).toEqual(["tls"]);
  });
});

describe("stream events are written in batches", () => {
  it("keeps an item's order and loses nothing when the stream drops mid-batch", async () => {
    const events = [
      { type: "item", seq: 1, guid: "g1", title: "First", revision: 1 },
      { type: "item", seq: 2, guid: "g2", title: "Other" },
      { type: "item", seq: 3, guid: "g1", title: "First, corrected", revision: 2 },
      { type: "item", seq: 4, guid: "g1", title: "First, corrected again", revision: 3 },
      { type: "retraction", seq: 5, guid: "g2" },
    ];
    let open: http.ServerResponse | undefined;
    let keepalives: NodeJS.Timeout | undefined;
    const source = await streamSource((_req, res) => {
      open = res;
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(sse(events.slice(0, 2)));
      res.write(sse(events.slice(2)));
      // Keepalives until the drop: one read on its own says every event before it was read.
      keepalives = setInterval(() => res.write(": keepalive\n\n"), 20);
    });
    const batches: Delivery[][] = [];
    const counted = await eventsDuring("stream:events", source.id, async () => {
      const watcher = watchOnce(
        source,
        {},
        {
          batch: { maxEvents: 100, maxWaitMs: 60_000 },
          write: (deliveries) => {
            batches.push(deliveries);
            return writeBatch(db, deliveries);
          },
        },
      );
      for (let i = 0; ; i++) {
        const status = await db.prisma.collectorStatus.findUnique({
          where: { sourceId_collector: { sourceId: source.id, collector: "A" } },
        });
        if (status?.lastActivityKind === "keepalive") break;
        if (i > 200) throw new Error("no keepalive read in 10 s");
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(batches).toEqual([]); // all five read, none written yet
      clearInterval(keepalives);
      open?.destroy(); // dropped with all five waiting for their batch
      await watcher;
    });
    expect(batches.map((b) => b.length)).toEqual([5]);
    expect(counted).toEqual([{ source: source.id, collector: "A", count: 5 }]);
    const rows = await db.prisma.news.findMany({
      where: { sourceId: source.id },
      orderBy: { title: "asc" },
    });
    expect(rows.map((r) => [r.title, r.version, r.deletedAt !== null])).toEqual([
      ["First, corrected again", 3, false],
      ["Other", 2, true],
    ]);
    const history = await db.prisma.newsEvent.findMany({
      where: { entryKey: rows[0]?.entryKey },
      orderBy: { id: "asc" },
    });
    expect(history.map((e) => e.result)).toEqual(["inserted", "updated", "updated"]);
  });

  it("a full batch goes at once; what is left goes when the stream ends", async () => {
    const source = await streamSource((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(
        sse(
          Array.from({ length: 5 }, (_, i) => ({
            type: "item",
            seq: i + 1,
            guid: `b${i}`,
            title: `B${i}`,
          })),
        ),
      );
    });
    const sizes: number[] = [];
    await watchOnce(
      source,
      {},
      {
        batch: { maxEvents: 2, maxWaitMs: 10 },
        write: (deliveries) => {
          sizes.push(deliveries.length);
          return writeBatch(db, deliveries);
        },
      },
    );
    expect(sizes).toEqual([2, 2, 1]);
    expect(await db.prisma.news.count({ where: { sourceId: source.id } })).toBe(5);
  });

  it("a stream that opens with a UTF-8 BOM loses none of its events (the spec drops the BOM)", async () => {
    const source = await streamSource((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      const events = [1, 2].map((seq) => ({
        type: "item",
        seq,
        guid: `bom${seq}`,
        title: `M${seq}`,
      }));
      res.end(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(sse(events))]));
    });
    await watchOnce(source);
    const rows = await db.prisma.news.findMany({
      where: { sourceId: source.id },
      orderBy: { title: "asc" },
    });
    expect(rows.map((r) => r.title)).toEqual(["M1", "M2"]);
  });

  it("a Bangla title split across two reads arrives whole", async () => {
    const source = await streamSource((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      const body = Buffer.from(sse([{ type: "item", seq: 1, guid: "split", title: "বাজেট পাস" }]));
      // Cut inside the first letter's three bytes, and wait so the two halves are two reads.
      const cut = body.indexOf(Buffer.from("বা")) + 1;
      res.write(body.subarray(0, cut));
      setTimeout(() => res.end(body.subarray(cut)), 50);
    });
    await watchOnce(source);
    const rows = await db.prisma.news.findMany({ where: { sourceId: source.id } });
    expect(rows.map((r) => r.title)).toEqual(["বাজেট পাস"]);
  });
});
