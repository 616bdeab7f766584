import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, requireRealPostgres, type TestDatabase } from "@/lib/testing/db";
import { type Simulator, startSimulator } from "@/simulator/server";
import { sourceSchema } from "@/workers/sources/sourcesFile";
import { syncSources } from "@/workers/sources/syncSources";
import { startWorkers, type Workers } from "../index";

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
});
