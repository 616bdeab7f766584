import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { on } from "@/lib/events";
import { createTestDatabase, requireRealPostgres, type TestDatabase } from "@/lib/testing/db";
import { RateBudget } from "./fetcher/rateBudget";
import { startWorkers } from "./index";

// The runtime's bookkeeping: one frontier job per enabled source and collector name, following
// the sources table as it changes. The URLs point at a closed local port: every fetch fails fast.
let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db?.drop());

const closed = "http://127.0.0.1:9/feed.xml";
const until = async (what: string, ok: () => Promise<boolean>) => {
  const deadline = Date.now() + 10_000;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
};
const frontier = async () =>
  (await db.prisma.job.findMany({ where: { queue: { in: ["fetch", "stream"] } } }))
    .map((j) => `${j.queue}:${j.key}`)
    .sort();

describe("startWorkers", () => {
  it("keeps one frontier job per source and collector, following the sources table", async () => {
    await db.prisma.source.createMany({
      data: [
        {
          id: "a",
          name: "A",
          kind: "feed",
          url: closed,
          allowPrivate: true,
          collectors: ["A", "B"],
        },
        { id: "b", name: "B", kind: "page", url: closed, allowPrivate: true },
        { id: "c", name: "C", kind: "feed", url: null },
        { id: "d", name: "D", kind: "feed", url: closed, enabled: false },
        { id: "s", name: "S", kind: "stream", url: "http://127.0.0.1:9/events" },
      ],
    });
    const workers = await startWorkers(db, {
      sourcesRefreshMs: 50,
      fetch: { robots: false },
      // On PostgreSQL polling starts after two reports (its share of host budgets): often here.
      queue: { pollMs: 50, reportMs: 100 },
      streamRecheckMs: 100,
    });
    try {
      expect(await frontier()).toEqual(["fetch:a/A", "fetch:a/B", "fetch:b/A", "stream:s/A"]);
      // Each poll ran once and was rescheduled for later (failures back off), not repeated.
      await until("the first polls", async () => {
        const due = await db.prisma.job.count({
          where: { queue: "fetch", state: "ready", runAt: { gt: new Date(Date.now() + 5_000) } },
        });
        return due === 3;
      });
      await db.prisma.source.update({ where: { id: "a" }, data: { collectors: ["A"] } });
      await db.prisma.source.update({ where: { id: "d" }, data: { enabled: true } });
      await db.prisma.source.update({ where: { id: "b" }, data: { enabled: false } });
      await db.prisma.source.update({ where: { id: "s" }, data: { enabled: false } });
      await until("the changes", async () => (await frontier()).join() === "fetch:a/A,fetch:d/A");
    } finally {
      await workers.stop();
    }
    // Nothing is left leased by a stopped runtime.
    expect(await db.prisma.job.count({ where: { state: "leased" } })).toBe(0);
    // the failing fetches were recorded, not thrown
    expect(
      await db.prisma.fetchAttempt.count({ where: { sourceId: "a", code: "connect" } }),
    ).toBeGreaterThan(0);
    const failures = await db.prisma.fetchAttempt.groupBy({
      by: ["sourceId", "collector"],
      where: { sourceId: "a" },
      _count: true,
    });
    // One poll per collector so far: the failure schedules the next one for later.
    for (const f of failures) expect(f._count).toBe(1);
  });
});

describe.skipIf(!requireRealPostgres("several ingestion processes sharing the frontier"))(
  "several runtimes on one database",
  () => {
    it("poll each source once between them, not once each", async () => {
      const requests = new Map<string, number>();
      const server = createServer((req, res) => {
        requests.set(req.url ?? "", (requests.get(req.url ?? "") ?? 0) + 1);
        res.writeHead(200, { "content-type": "application/rss+xml" });
        res.end(
          `<rss version="2.0"><channel><title>t</title><link>https://x.example/</link>` +
            `<description>d</description><item><guid>${req.url}</guid><title>News at ${req.url}</title>` +
            `</item></channel></rss>`,
        );
      });
      server.listen(0, "127.0.0.1");
      await once(server, "listening");
      const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      await db.prisma.$executeRaw`TRUNCATE sources, jobs, lease_events CASCADE`;
      await db.prisma.source.createMany({
        data: Array.from({ length: 12 }, (_, i) => ({
          id: `many-${i}`,
          name: `Many ${i}`,
          kind: "feed",
          url: `${origin}/feed/${i}`,
          allowPrivate: true,
          pollIntervalSeconds: 86_400,
        })),
      });
      const other = await db.connectAnother(4);
      const options = {
        fetch: {
          robots: false as const,
          deps: { rateBudget: new RateBudget({ ratePerSecond: 1e6, burst: 1e6 }) },
        },
        // Reports often, so each learns its share of the host budget (two reports) quickly.
        queue: { pollMs: 20, reportMs: 100 },
      };
      // Who claimed fetch jobs, from the claim's own event (claims are counted per minute in
      // queue_claim_stats, not per worker in a table).
      const claimers = new Set<string>();
      const offClaims = on("job:claimed", (e) => {
        if (e.queue === "fetch" && e.count > 0) claimers.add(e.workerId);
      });
      const runtimes = await Promise.all([startWorkers(db, options), startWorkers(other, options)]);
      try {
        await until("every feed polled", async () => {
          const polled = await db.prisma.news.count();
          return polled === 12;
        });
        await new Promise((r) => setTimeout(r, 300)); // room for a second, wrong poll
      } finally {
        await Promise.all(runtimes.map((r) => r.stop()));
        offClaims();
        server.close();
      }
      expect([...requests.values()].every((n) => n === 1)).toBe(true);
      expect(requests.size).toBe(12);
      expect([...claimers].sort()).toEqual(runtimes.map((r) => r.id).sort());
    });
  },
);
