import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedClaimStats } from "@/lib/testing/claimStats";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { queuesView } from "./queues";
import { minutesBefore } from "./testing";

let db: TestDatabase;
const now = new Date();

beforeAll(async () => {
  db = await createTestDatabase();
  const past = minutesBefore(now, 10);
  const future = new Date(now.getTime() + 600_000);
  await db.prisma.job.createMany({
    data: [
      { queue: "fetch", key: "a", runAt: past },
      { queue: "fetch", key: "b", runAt: future },
      { queue: "fetch", key: "c", state: "dead", deadAt: now },
      { queue: "fetch", key: "d", state: "archived" },
      { queue: "stream", key: "e", runAt: past },
    ],
  });
  await db.prisma.job.create({
    data: {
      queue: "stream",
      key: "f",
      state: "leased",
      leaseToken: randomUUID(),
      leaseOwner: "w1",
      leasedAt: new Date(now.getTime() - 20_000),
      leaseExpiresAt: new Date(now.getTime() + 40_000),
      attempts: 1,
    },
  });
  const ev = (
    kind: string,
    leaseAgeMs: number,
    minutesAgo: number,
    waitMs: number | null = null,
  ) => ({
    at: minutesBefore(now, minutesAgo),
    jobId: 1n,
    queue: "fetch",
    attempt: 1,
    kind,
    leaseAgeMs,
    waitMs,
  });
  await db.prisma.leaseEvent.createMany({
    data: [
      ev("expired", 45_000, 10),
      ev("reclaimed", 46_000, 10, 50),
      ev("released", 500, 3),
      ev("released", 400_000, 3),
    ],
  });
  // Claims as the claim statement rolls them up, the reclaim of 10 minutes ago among them.
  const claims = (minutesAgo: number, waitsMs: number[], reclaimed = 0) =>
    seedClaimStats(db, { queue: "fetch", at: minutesBefore(now, minutesAgo), waitsMs, reclaimed });
  await claims(50, [100, 300]);
  await claims(10, [50], 1);
  await claims(5, [2_000]);
  await claims(120, [9_999_999]); // outside the hour
  await db.prisma.queueWorker.create({
    data: { id: "w1", host: "h", pid: 1, queues: ["fetch", "stream"], claimed: 3n, inFlight: 1 },
  });
});

afterAll(async () => {
  await db?.drop();
});

describe("queuesView", () => {
  it("gives depth by state, lag per bucket, leases in flight, lease ages and workers", async () => {
    const q = await queuesView(db, { now, hours: 1 });
    expect(q.depth).toEqual([
      expect.objectContaining({ queue: "fetch", ready: 2, due: 1, leased: 0, dead: 1 }),
      expect.objectContaining({ queue: "stream", ready: 1, due: 1, leased: 1, dead: 0 }),
    ]);
    const fetchLag = q.lag.find((l) => l.queue === "fetch");
    expect(fetchLag?.points.reduce((n, p) => n + p.claims, 0)).toBe(4); // 3 claims + 1 reclaim
    expect(Math.max(...(fetchLag?.points.map((p) => p.p99Ms) ?? []))).toBeLessThan(9_999_999);
    expect(q.inFlight.total).toBe(1);
    expect(q.inFlight.leases[0]).toMatchObject({ key: "f", owner: "w1", attempt: 1 });
    expect(q.inFlight.leases[0]?.ageMs).toBeGreaterThanOrEqual(19_000);
    expect(q.leaseEvents.counts).toEqual({ expired: 1, reclaimed: 1, released: 2 });
    const hist = Object.fromEntries(q.leaseEvents.histogram.map((h) => [h.bucket, h.total]));
    expect(hist).toMatchObject({ "<1 s": 1, "30–60 s": 2, "≥5 min": 1 });
    expect(q.workers).toEqual([expect.objectContaining({ id: "w1", claimed: 3, inFlight: 1 })]);
  });

  it("puts the fetch → read model lag in the same buckets as the stages' waits", async () => {
    let q = await queuesView(db, { now, hours: 1 });
    expect(q.readModelLag.length).toBeGreaterThanOrEqual(30);
    expect(q.readModelLag.every((p) => p.lagP99Ms === null)).toBe(true);
    await db.prisma.$executeRaw`
      INSERT INTO read_model_builds (model_version, started_at, finished_at, build_ms, changed,
                                     lag_p50_ms, lag_p99_ms, trigger)
      VALUES (1, ${minutesBefore(now, 3)}, ${minutesBefore(now, 2.9)}, 300, 12, 1500, 7000,
              'changed')`;
    q = await queuesView(db, { now, hours: 1 });
    const drawn = q.readModelLag.filter((p) => p.lagP99Ms !== null);
    expect(drawn).toEqual([
      expect.objectContaining({ changed: 12, lagP50Ms: 1500, lagP99Ms: 7000 }),
    ]);
    expect(q.readModelLag.map((p) => p.t).every((t) => t % (q.bucketSeconds * 1000) === 0)).toBe(
      true,
    );
  });

  it("widens its buckets for longer windows", async () => {
    const q = await queuesView(db, { now, hours: 24 });
    expect(q.bucketSeconds).toBe(2880);
    const fetchLag = q.lag.find((l) => l.queue === "fetch");
    expect(fetchLag?.points.reduce((n, p) => n + p.claims, 0)).toBe(5);
  });

  it("shows a worker whose reports stopped 30 s ago (database clock) as lost, holding no job", async () => {
    await db.prisma.$executeRaw`
      INSERT INTO queue_workers (id, host, pid, queues, state, in_flight, seen_at)
      VALUES ('gone', 'h', 2, '{fetch}', 'running', 1, now() - interval '10 minutes'),
             ('late', 'h', 3, '{fetch}', 'draining', 0, now() - interval '31 seconds'),
             ('alive', 'h', 4, '{fetch}', 'running', 0, now() - interval '20 seconds'),
             ('done', 'h', 5, '{fetch}', 'stopped', 0, now() - interval '1 hour')`;
    try {
      const q = await queuesView(db, { now });
      const byId = Object.fromEntries(q.workers.map((w) => [w.id, w]));
      expect(byId.gone).toMatchObject({ state: "lost", inFlight: 0 });
      expect(byId.late).toMatchObject({ state: "lost" });
      expect(byId.alive).toMatchObject({ state: "running" });
      expect(byId.done).toMatchObject({ state: "stopped" });
      // w1 still holds its lease on 'f': a lost worker's in-flight count is the leases it holds.
      await db.prisma.$executeRaw`
        UPDATE queue_workers SET seen_at = now() - interval '1 minute' WHERE id = 'w1'`;
      const again = await queuesView(db, { now });
      expect(again.workers.find((w) => w.id === "w1")).toMatchObject({
        state: "lost",
        inFlight: 1,
      });
    } finally {
      await db.prisma.$executeRaw`DELETE FROM queue_workers WHERE id <> 'w1'`;
      await db.prisma.$executeRaw`UPDATE queue_workers SET seen_at = now() WHERE id = 'w1'`;
    }
  });
});
