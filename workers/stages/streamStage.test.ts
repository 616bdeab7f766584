import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, requireRealPostgres, type TestDatabase } from "@/lib/testing/db";
import { type Simulator, startSimulator } from "@/simulator/server";
import type { ClaimedJob } from "@/workers/queue/types";
import { sourceSchema } from "@/workers/sources/sourcesFile";
import { syncSources } from "@/workers/sources/syncSources";
import { startWorkers, type Workers } from "../index";
import { syncFrontier } from "./frontier";
import { streamStage } from "./streamStage";

// The stream stage on the queue, against the simulator's primary stream: one watcher per
// (stream, collector) however many runtimes run, and a takeover when the watcher goes away.

let sim: Simulator;
let db: TestDatabase;
beforeAll(async () => {
  sim = await startSimulator({ seed: 3, manual: true, keepaliveMs: 500 });
  db = await createTestDatabase();
  const wire = sim.sources().filter((s) => s.id === "wire");
  await syncSources(
    db,
    wire.map((s) => sourceSchema.parse({ ...s, collectors: ["A"] })),
  );
});
afterAll(async () => {
  await sim?.stop();
  await db?.drop();
});

async function until(what: string, ok: () => boolean | Promise<boolean>, ms = 15_000) {
  const deadline = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const options = { queue: { pollMs: 50, sweepMs: 100 } };

describe("the stream stage", () => {
  it("watches a stream from one runtime, and ends the job when the source is switched off", async () => {
    const workers = await startWorkers(db, { ...options, streamRecheckMs: 100 });
    try {
      await until("the stream to be watched", () => sim.control.connections().wire === 1);
      const job = await db.prisma.job.findFirstOrThrow({ where: { queue: "stream" } });
      expect(job).toMatchObject({ state: "leased", key: "wire/A", leaseOwner: workers.id });
      sim.control.publish({ outlet: "wire", title: "Stream stage story" });
      sim.control.advance(50);
      await until(
        "the story",
        async () => (await db.prisma.news.count({ where: { title: "Stream stage story" } })) === 1,
      );
      await db.prisma.source.update({ where: { id: "wire" }, data: { enabled: false } });
      await until("the watcher to stop", () => (sim.control.connections().wire ?? 0) === 0);
      await until(
        "the job to end",
        async () => (await db.prisma.job.count({ where: { queue: "stream" } })) === 0,
      );
    } finally {
      await workers.stop();
      await db.prisma.source.update({ where: { id: "wire" }, data: { enabled: true } });
    }
  });

  it.skipIf(!requireRealPostgres("two runtimes sharing a stream"))(
    "with two runtimes, one watches; when it stops, the other takes the stream over",
    async () => {
      const other = await db.connectAnother(4);
      const runtimes: Workers[] = [
        await startWorkers(db, options),
        await startWorkers(other, options),
      ];
      try {
        await until("the stream to be watched", () => sim.control.connections().wire === 1);
        await new Promise((r) => setTimeout(r, 500));
        expect(sim.control.connections().wire).toBe(1); // not one per runtime
        const holder = (await db.prisma.job.findFirstOrThrow({ where: { queue: "stream" } }))
          .leaseOwner;
        const [first, second] = holder === runtimes[0]?.id ? runtimes : [runtimes[1], runtimes[0]];
        await first?.stop(); // hands the stream job back at once
        await until("the other runtime to watch", async () => {
          const job = await db.prisma.job.findFirst({ where: { queue: "stream" } });
          return job?.leaseOwner === second?.id && sim.control.connections().wire === 1;
        });
      } finally {
        await Promise.all(runtimes.map((r) => r.stop()));
      }
    },
  );
  it("a stop that lands during the source lookup never starts watching", async () => {
    await syncFrontier(db);
    const row = await db.prisma.job.findFirstOrThrow({ where: { queue: "stream", key: "wire/A" } });
    const job: ClaimedJob = {
      lease: { id: String(row.id), attempt: 1, token: "00000000-0000-0000-0000-000000000000" },
      queue: row.queue,
      key: row.key,
      payload: row.payload as Record<string, unknown>,
      sourceId: row.sourceId,
      priority: row.priority,
      maxAttempts: row.maxAttempts,
      waitMs: 0,
      reclaimed: false,
    };
    const stopping = new AbortController();
    // The queue's stop aborts the handler while it is still reading its source.
    const prisma = new Proxy(db.prisma, {
      get(target, prop) {
        if (prop === "source") {
          return {
            findUnique: (args: Parameters<typeof target.source.findUnique>[0]) => {
              stopping.abort();
              return target.source.findUnique(args);
            },
          };
        }
        const value = Reflect.get(target, prop, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const stage = streamStage({ ...db, prisma }, async () => [], { recheckMs: 60_000 });
    const ended = await Promise.race([
      stage.handler(job, { signal: stopping.signal }).then(() => "ended"),
      new Promise((r) => setTimeout(() => r("still watching after 3 s"), 3_000)),
    ]);
    expect(ended).toBe("ended");
    expect(sim.control.connections().wire ?? 0).toBe(0);
  });

  it("stop() returns only after the watcher's last status write: the disconnect is the last word", async () => {
    // Every collector_status write, in the order it finished; a keepalive write can be held.
    const log: string[] = [];
    let hold: { reached: () => void; release: Promise<void> } | null = null;
    const prisma = new Proxy(db.prisma, {
      get(target, prop) {
        const value = Reflect.get(target, prop, target);
        if (prop !== "$executeRaw") return typeof value === "function" ? value.bind(target) : value;
        return async (sql: TemplateStringsArray, ...values: unknown[]) => {
          const text = sql.join("?");
          const kind = !text.includes("collector_status")
            ? null
            : text.includes("connected = false")
              ? "disconnect"
              : values.includes("keepalive")
                ? "keepalive"
                : "other";
          const held = kind === "keepalive" ? hold : null;
          if (held) {
            hold = null;
            held.reached();
            await held.release;
          }
          const n = await target.$executeRaw(sql, ...values);
          if (kind) log.push(kind);
          return n;
        };
      },
    });
    const workers = await startWorkers({ ...db, prisma }, options);
    let stopped = false;
    try {
      await until("the stream to be watched", async () => {
        const row = await db.prisma.collectorStatus.findUnique({
          where: { sourceId_collector: { sourceId: "wire", collector: "A" } },
        });
        return sim.control.connections().wire === 1 && row?.connected === true;
      });
      // A keepalive arrives and its activity write is in flight when the stop begins; it is let
      // through 1 s later (a stop that does not wait returns in ~50 ms, long before that).
      let release: () => void = () => {};
      const reached = new Promise<void>((resolve) => {
        hold = { reached: resolve, release: new Promise<void>((r) => (release = r)) };
      });
      sim.control.advance(500);
      await reached;
      const stopping = workers.stop().then(() => {
        stopped = true;
        log.push("stopped");
      });
      setTimeout(release, 1_000);
      await stopping;
      expect(log.slice(-3)).toEqual(["keepalive", "disconnect", "stopped"]);
      const row = await db.prisma.collectorStatus.findUniqueOrThrow({
        where: { sourceId_collector: { sourceId: "wire", collector: "A" } },
      });
      expect(row.connected).toBe(false);
    } finally {
      if (!stopped) await workers.stop();
    }
  });
});
