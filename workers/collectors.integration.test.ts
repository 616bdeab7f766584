import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sourceHealth } from "@/lib/health";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { type Simulator, startSimulator } from "@/simulator/server";
import { type SourceRef, toSourceRef } from "@/workers/collectors/sourceRef";
import { sourceSchema } from "@/workers/sources/sourcesFile";
import { syncSources } from "@/workers/sources/syncSources";
import { refreshFeed } from "./refreshFeed";
import { refreshPage } from "./refreshPage";
import { writeBatch } from "./store";
import { watchStream } from "./watchStream";

// The collectors against the newsroom simulator on loopback, in simulated time: what a newcomer's
// `npm start` does, step by step, with the seed's situations made to happen on purpose.

let sim: Simulator;
let db: TestDatabase;
let refs: Map<string, SourceRef>;

async function until<T>(
  what: string,
  probe: () => Promise<T | null | undefined | false>,
  ms = 10_000,
) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  sim = await startSimulator({ seed: 7, manual: true, keepaliveMs: 1_000, backlogMs: 5 * 60_000 });
  db = await createTestDatabase();
  const sources = sim.sources().map((s) => sourceSchema.parse(s));
  await syncSources(db, sources);
  refs = new Map(
    (await db.prisma.source.findMany()).map((s) => [s.id, toSourceRef(s) as SourceRef]),
  );
});
afterAll(async () => {
  await sim?.stop();
  await db?.drop();
});

const ref = (id: string) => refs.get(id) as SourceRef;

describe("collectors against the simulator", () => {
  it("seed 000's race, live: the page sees it first, the stream 28 ms later; one upgraded row", async () => {
    const stop = new AbortController();
    const watchers = ["A", "B"].map((c) => watchStream(db, ref("wire"), c, stop.signal));
    try {
      await until(
        "both stream collectors to connect",
        async () => sim.control.connections().wire === 2,
      );
      const story = sim.control.publish({
        outlet: "wire",
        title: "Port strike ends",
        pageLeadMs: 28,
      });
      const page = await refreshPage(db, ref("wire-page"), "A", null, { robots: false });
      expect(page.code).toBe("ok");
      const row = await until("the fallback row", () =>
        db.prisma.news.findFirst({ where: { sourceId: "wire", link: story.link } }),
      );
      expect(row).toMatchObject({ quality: "fallback", version: 1, title: "Port strike ends" });

      sim.control.advance(28);
      const upgraded = await until("the upgrade", async () => {
        const r = await db.prisma.news.findUnique({ where: { entryKey: row.entryKey } });
        const events = await db.prisma.newsEvent.count({ where: { entryKey: row.entryKey } });
        return r?.quality === "authoritative" && events >= 3 ? r : null;
      });
      expect(upgraded).toMatchObject({
        version: 2,
        category: story.category,
        breaking: story.breaking,
        firstCollector: "A",
      });
      const events = await db.prisma.newsEvent.findMany({
        where: { entryKey: row.entryKey },
        orderBy: { id: "asc" },
      });
      // The second stream collector's copy, and a backfill that may have been reading the
      // history at that moment, are recorded and change nothing.
      const [first, second, ...rest] = events.map((e) => [e.origin, e.result]);
      expect([first, second]).toEqual([
        ["fallback", "inserted"],
        ["primary", "upgraded"],
      ]);
      expect(rest).toContainEqual(["primary", "unchanged"]);
      expect(rest.every(([, result]) => result === "unchanged")).toBe(true);
    } finally {
      stop.abort();
      await Promise.all(watchers);
    }
  });

  it("reconnects after a reset and backfills what it missed, silently", async () => {
    const stop = new AbortController();
    const watcher = watchStream(db, ref("wire"), "A", stop.signal, { reconnectBaseMs: 50 });
    try {
      await until("the collector to connect", async () => sim.control.connections().wire === 1);
      sim.control.inject("wire", { kind: "503" }); // refuse reconnects for now…
      sim.control.inject("wire", { kind: "reset" }); // …and drop the open stream
      await until("the drop", async () => !sim.control.connections().wire);
      const missed = sim.control.publish({ outlet: "wire", title: "Missed while away" });
      sim.control.advance(50);
      // a reconnect is refused (and recorded) before the source comes back
      const refused = await until("a refused reconnect", () =>
        db.prisma.fetchAttempt.findFirst({
          where: { sourceId: "wire", collector: "A", code: { not: "ok" } },
        }),
      );
      expect(refused.code).toMatch(/reset|http_5xx/);
      sim.control.clear("wire");
      const row = await until("the backfilled row", () =>
        db.prisma.news.findFirst({ where: { sourceId: "wire", link: missed.link } }),
      );
      const events = await db.prisma.newsEvent.findMany({ where: { entryKey: row.entryKey } });
      expect(events.map((e) => [e.origin, e.result])).toEqual([["backfill", "inserted"]]);
      const state = await db.prisma.sourceState.findUniqueOrThrow({ where: { sourceId: "wire" } });
      expect(state.lastErrorCode).toMatch(/reset|http_5xx/);
    } finally {
      sim.control.clear("wire");
      stop.abort();
      await watcher;
    }
  });

  it("a stop that lands while the stream is backfilling ends the watcher at once, disconnected", async () => {
    sim.control.publish({ outlet: "wire", title: "In the history before the connect" });
    sim.control.advance(50);
    const stop = new AbortController();
    // The stop arrives during the backfill that follows the connect, before events are read.
    const watcher = watchStream(db, ref("wire"), "A", stop.signal, {
      idleTimeoutMs: 60_000,
      write: async (deliveries) => {
        stop.abort();
        return writeBatch(db, deliveries);
      },
    });
    // The simulator sends nothing more on its own (simulated time): a watcher that kept reading
    // would wait for the 60 s idle timeout.
    const ended = await Promise.race([
      watcher.then(() => "ended"),
      new Promise((r) => setTimeout(() => r("still reading after 5 s"), 5_000)),
    ]);
    expect(ended).toBe("ended");
    const status = await db.prisma.collectorStatus.findUniqueOrThrow({
      where: { sourceId_collector: { sourceId: "wire", collector: "A" } },
    });
    expect(status.connected).toBe(false);
    await until("the connection to close", async () => !sim.control.connections().wire);
  });

  it("polls feeds: entries written once, unchanged feeds answer 304 and count as successes", async () => {
    for (const id of ["meridian-rss", "harbour-atom", "padma-rdf"]) {
      const first = await refreshFeed(db, ref(id), "A", null, { robots: false });
      expect(first).toMatchObject({ code: "ok" });
      expect(first.entries).toBeGreaterThan(0);
      expect(first.changed).toBe(first.entries);
      const again = await refreshFeed(db, ref(id), "A", first.bodyHash, { robots: false });
      expect(again.code).toBe("not_modified");
    }
    const attempts = await db.prisma.fetchAttempt.groupBy({
      by: ["code"],
      where: { sourceId: { in: ["meridian-rss", "harbour-atom", "padma-rdf"] } },
      _count: true,
    });
    expect(Object.fromEntries(attempts.map((a) => [a.code, a._count]))).toEqual({
      ok: 3,
      not_modified: 3,
    });
    const bangla = await db.prisma.news.findFirst({ where: { sourceId: "padma-rdf" } });
    expect(bangla?.title).toMatch(/[\u0980-\u09FF]/);
  });

  it("a malformed feed is a recorded parse error held against its breaker, and nothing else breaks", async () => {
    sim.control.inject("ledger-rss", { kind: "malformed" });
    try {
      const out = await refreshFeed(db, ref("ledger-rss"), "A", null, { robots: false });
      expect(out.code).toBe("parse_error");
      const state = await db.prisma.sourceState.findUniqueOrThrow({
        where: { sourceId: "ledger-rss" },
      });
      expect(state).toMatchObject({ lastErrorCode: "parse_error", breakerFailures: 1 });
      const [attempt] = await db.prisma.fetchAttempt.findMany({
        where: { sourceId: "ledger-rss" },
        orderBy: { id: "desc" },
        take: 1,
      });
      expect(attempt?.code).toBe("parse_error");
      expect((await refreshFeed(db, ref("harbour-rss"), "A", null, { robots: false })).code).toBe(
        "ok",
      );
    } finally {
      sim.control.clear("ledger-rss");
    }
  });

  it("tells a stalled stream from a quiet one by their keepalives", async () => {
    const stop = new AbortController();
    const watcher = watchStream(db, ref("wire"), "A", stop.signal);
    try {
      await until("the collector to connect", async () => sim.control.connections().wire === 1);
      sim.control.inject("wire", { kind: "quiet" });
      sim.control.advance(1_000); // one keepalive
      const quietSince = await until("a keepalive", async () => {
        const st = await db.prisma.collectorStatus.findUnique({
          where: { sourceId_collector: { sourceId: "wire", collector: "A" } },
        });
        return st?.lastActivityKind === "keepalive" ? st : null;
      });
      const facts = (lastActivityAt: Date | null) => ({
        kind: "stream",
        enabled: true,
        disabledReason: null,
        breakerState: "closed",
        lastErrorAt: null,
        lastErrorCode: null,
        activityIntervalSeconds: 1,
        collectors: [
          {
            collector: "A",
            lastActivityAt,
            lastContentAt: quietSince.lastContentAt,
            usualGapSeconds: 60,
          },
        ],
      });
      const at = (ms: number) => new Date((quietSince.lastActivityAt as Date).getTime() + ms);
      expect(sourceHealth(facts(quietSince.lastActivityAt), at(500)).state).toMatch(
        /healthy|quiet/,
      );

      sim.control.clear("wire");
      sim.control.inject("wire", { kind: "stall" });
      sim.control.advance(3_000); // keepalives due, none sent
      const stalled = await db.prisma.collectorStatus.findUniqueOrThrow({
        where: { sourceId_collector: { sourceId: "wire", collector: "A" } },
      });
      // within one keepalive interval plus half an interval of margin, the stall shows
      expect(sourceHealth(facts(stalled.lastActivityAt), at(1_600)).state).toBe("stalled");
    } finally {
      sim.control.clear("wire");
      stop.abort();
      await watcher;
    }
  });
});
