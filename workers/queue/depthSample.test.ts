import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { sleep } from "@/lib/sleep";
import {
  createTestDatabase,
  requireRealPostgres,
  type TestDatabase,
  testServerUrl,
} from "@/lib/testing/db";
import { sampleQueueDepth } from "./depthSample";
import { DEPTH_SAMPLES_KEEP_DAYS, housekeeping } from "./housekeeping";
import { startQueueWorker } from "./queueWorker";

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db?.drop());
beforeEach(async () => {
  await db.prisma.$executeRaw`TRUNCATE jobs, queue_depth_samples`;
});

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

/**
 * The tests compare what two samples of one minute wrote: started in a minute's last seconds,
 * the second would fall in the next minute. Waits for the next minute then (at most 12 s).
 */
async function awayFromMinuteEnd(): Promise<void> {
  const [row] = await db.prisma.$queryRaw<{ s: number }[]>`
    SELECT extract(second FROM now())::float8 AS s`;
  const second = row?.s ?? 0;
  if (second > 48) await sleep((61 - second) * 1000);
}

async function samples() {
  return db.prisma.queueDepthSample.findMany({ orderBy: [{ queue: "asc" }, { minute: "asc" }] });
}

const soon = () => new Date(Date.now() + 3_600_000);
const past = () => new Date(Date.now() - 60_000);

/** fetch: 2 due, 1 failed and due again, 1 scheduled, 2 retrying, 2 leased, 1 dead, 1 archived. */
async function seedFetch(): Promise<void> {
  const job = (data: Record<string, unknown>) =>
    db.prisma.job.create({ data: { queue: "fetch", ...data } });
  await job({ runAt: past() });
  await job({ runAt: past() });
  await job({ runAt: past(), attempts: 1, lastFailedAt: past() });
  await job({ runAt: soon() });
  await job({ runAt: soon(), attempts: 1, lastFailedAt: past() });
  await job({ runAt: soon(), attempts: 2, lastFailedAt: past() });
  for (const token of [
    "7f0b3c1e-4a52-4e7c-9a61-3b2d1c0e9f88",
    "1c9d3b2e-5f6a-4b7c-8d9e-0f1a2b3c4d5e",
  ]) {
    await job({ state: "leased", attempts: 1, leaseToken: token, leaseExpiresAt: soon() });
  }
  await job({ state: "dead", attempts: 5, deadAt: past() });
  await job({ state: "archived", attempts: 5, deadAt: past(), archivedAt: past() });
}

describe("sampleQueueDepth", () => {
  it("writes each queue's depth for the minute, zeros for an empty queue, none for others", async () => {
    await seedFetch();
    await db.prisma.job.create({ data: { queue: "unserved", runAt: past() } });
    await awayFromMinuteEnd();
    expect(await sampleQueueDepth(db, ["fetch", "extract"])).toEqual(["extract", "fetch"]);
    const rows = await samples();
    expect(
      rows.map(({ queue, due, running, retrying, dead }) => ({
        queue,
        due,
        running,
        retrying,
        dead,
      })),
    ).toEqual([
      { queue: "extract", due: 0, running: 0, retrying: 0, dead: 0 },
      { queue: "fetch", due: 3, running: 2, retrying: 2, dead: 1 },
    ]);
    // The minute is the database's, truncated: both rows carry the same one.
    const [now] = await db.prisma.$queryRaw<{ m: Date }[]>`SELECT date_trunc('minute', now()) AS m`;
    expect(rows.map((r) => r.minute.getTime())).toEqual([now?.m.getTime(), now?.m.getTime()]);
  });

  it("keeps the first sample of a minute: a second one in it writes and counts nothing", async () => {
    await seedFetch();
    await awayFromMinuteEnd();
    expect(await sampleQueueDepth(db, ["fetch"])).toEqual(["fetch"]);
    await db.prisma.job.create({ data: { queue: "fetch", runAt: past() } });
    expect(await sampleQueueDepth(db, ["fetch"])).toEqual([]);
    // A queue new to this caller still gets its row in the same minute.
    expect(await sampleQueueDepth(db, ["fetch", "dedup"])).toEqual(["dedup"]);
    const rows = await samples();
    expect(rows.map((r) => [r.queue, r.due])).toEqual([
      ["dedup", 0],
      ["fetch", 3],
    ]);
  });

  it("asks nothing of the database for no queues", async () => {
    expect(await sampleQueueDepth(db, [])).toEqual([]);
    expect(await samples()).toEqual([]);
  });
});

describe.skipIf(!requireRealPostgres("two processes sampling one minute at once"))(
  "two worker processes",
  () => {
    it("write one row per queue and minute however their samples interleave", async () => {
      await seedFetch();
      const other = await db.connectAnother(4);
      await awayFromMinuteEnd();
      // Both processes serve fetch and dedup; each sends its samples in parallel on its own pool.
      const queues = ["dedup", "fetch"];
      const written = await Promise.all(
        Array.from({ length: 16 }, (_, i) => sampleQueueDepth(i % 2 ? other : db, queues)),
      );
      expect(written.flat().sort()).toEqual(queues);
      expect((await samples()).map((r) => [r.queue, r.due, r.running])).toEqual([
        ["dedup", 0, 0],
        ["fetch", 3, 2],
      ]);
    });

    it("the later of two that both found no row writes nothing and fails nothing", async () => {
      await seedFetch();
      const other = await db.connectAnother(2);
      await other.prisma.$queryRaw`SELECT 1`; // its first query loads Prisma's engine: ~1 s
      await awayFromMinuteEnd();
      // The first process's sample is written and not committed yet: the second finds no row,
      // counts, and its insert waits on the first's key until it commits.
      let second: Promise<string[]> | undefined;
      let secondWaited = false;
      const first = await db.prisma.$transaction(
        async (tx) => {
          const written = await sampleQueueDepth({ ...db, prisma: tx } as typeof db, ["fetch"]);
          second = sampleQueueDepth(other, ["fetch"]);
          const deadline = Date.now() + 10_000;
          while (!secondWaited && Date.now() < deadline) {
            const [waiting] = await tx.$queryRaw<{ n: number }[]>`
              SELECT count(*)::int AS n FROM pg_stat_activity
              WHERE datname = current_database() AND wait_event_type = 'Lock'`;
            secondWaited = (waiting?.n ?? 0) > 0;
            if (!secondWaited) await sleep(10);
          }
          return written;
        },
        { timeout: 15_000 },
      );
      expect(secondWaited).toBe(true);
      expect(first).toEqual(["fetch"]);
      expect(await second).toEqual([]);
      expect(await samples()).toHaveLength(1);
    });
  },
);

describe("the workers' sweeper samples their queues", () => {
  it("one row per queue and minute from two workers serving overlapping queues", async () => {
    await seedFetch();
    await awayFromMinuteEnd();
    // On PGlite both share the one database; on PostgreSQL each worker has its own pool, as two
    // processes would.
    const other = testServerUrl() ? await db.connectAnother(4) : db;
    const idle = { handler: async () => undefined, concurrency: 1 };
    const workers = await Promise.all([
      startQueueWorker(db, { queues: { dedup: idle, story: idle }, sweepMs: 20, pollMs: 50 }),
      startQueueWorker(other, { queues: { story: idle, embed: idle }, sweepMs: 20, pollMs: 50 }),
    ]);
    try {
      const deadline = Date.now() + 20_000;
      while ((await samples()).length < 3 && Date.now() < deadline) await sleep(25);
      // Several more sweeps of both: still one row each for the minute.
      await sleep(200);
    } finally {
      await Promise.all(workers.map((w) => w.stop()));
    }
    const rows = await samples();
    const minutes = new Set(rows.map((r) => r.minute.getTime()));
    expect(minutes.size).toBe(1);
    expect(rows.map((r) => r.queue)).toEqual(["dedup", "embed", "story"]);
  });
});

describe("housekeeping", () => {
  it(`prunes depth samples older than ${DEPTH_SAMPLES_KEEP_DAYS} days and keeps the rest`, async () => {
    const now = Date.now();
    const minute = (ms: number) => new Date(Math.floor(ms / MINUTE_MS) * MINUTE_MS);
    const row = (at: Date) => ({
      queue: "fetch",
      minute: at,
      due: 1,
      running: 0,
      retrying: 0,
      dead: 0,
    });
    await db.prisma.queueDepthSample.createMany({
      data: [
        row(minute(now - (DEPTH_SAMPLES_KEEP_DAYS + 1) * DAY_MS)),
        row(minute(now - DEPTH_SAMPLES_KEEP_DAYS * DAY_MS - 10 * MINUTE_MS)),
        row(minute(now - (DEPTH_SAMPLES_KEEP_DAYS - 1) * DAY_MS)),
        row(minute(now - MINUTE_MS)),
      ],
    });
    expect((await housekeeping(db)).depthSamples).toBe(2);
    expect((await samples()).map((r) => r.minute.getTime())).toEqual([
      minute(now - (DEPTH_SAMPLES_KEEP_DAYS - 1) * DAY_MS).getTime(),
      minute(now - MINUTE_MS).getTime(),
    ]);
    // Run again (another process's housekeeping): nothing more to do.
    expect((await housekeeping(db)).depthSamples).toBe(0);
  });
});
