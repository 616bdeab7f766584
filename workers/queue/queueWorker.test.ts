import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { sleep } from "@/lib/sleep";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { claim } from "./claim";
import { complete } from "./complete";
import { enqueue } from "./enqueue";
import { startQueueWorker } from "./queueWorker";

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db?.drop());
beforeEach(async () => {
  await db.prisma.$executeRaw`TRUNCATE jobs, job_failures, lease_events, queue_workers`;
});

async function until(check: () => Promise<boolean>, timeoutMs = 15_000) {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await check()) return;
    await sleep(25);
  }
  throw new Error("timed out waiting");
}

const jobsLeft = async () => db.prisma.job.count();

describe("queue worker", () => {
  it("runs every job once and reports its state", async () => {
    const ran: string[] = [];
    await enqueue(
      db,
      "work",
      Array.from({ length: 200 }, (_, i) => ({ key: `k${i}`, payload: { i } })),
    );
    const worker = await startQueueWorker(db, {
      queues: {
        work: {
          concurrency: 8,
          handler: async (job) => {
            ran.push(job.key ?? "");
          },
        },
      },
      reportMs: 50,
    });
    await until(async () => (await jobsLeft()) === 0);
    await worker.stop();
    expect(ran).toHaveLength(200);
    expect(new Set(ran).size).toBe(200);
    const state = await db.prisma.queueWorker.findUniqueOrThrow({ where: { id: worker.id } });
    expect(state).toMatchObject({ state: "stopped", claimed: 200n, completed: 200n, inFlight: 0 });
    expect(state.lastClaimAt).not.toBeNull();
  });

  it("keeps a job that runs 3× its lease while heartbeating: never re-claimed", async () => {
    await enqueue(db, "slow", [{ key: "long" }]);
    let runs = 0;
    const worker = await startQueueWorker(db, {
      queues: {
        slow: {
          leaseSeconds: 0.6,
          handler: async () => {
            runs++;
            await sleep(1_800);
          },
        },
      },
      sweepMs: 100,
      pollMs: 50,
    });
    // A second worker sweeping and claiming all the while.
    const rival = await startQueueWorker(db, {
      queues: { slow: { handler: async () => void runs++ } },
      sweepMs: 100,
      pollMs: 50,
    });
    await until(async () => (await jobsLeft()) === 0);
    await Promise.all([worker.stop(), rival.stop()]);
    expect(runs).toBe(1);
    const kinds = (await db.prisma.leaseEvent.findMany()).map((e) => e.kind);
    expect(kinds.filter((k) => k === "claimed")).toHaveLength(1);
    expect(kinds.filter((k) => k === "extended").length).toBeGreaterThanOrEqual(3);
    expect(kinds).not.toContain("expired");
  });

  it("re-claims a job whose holder stopped heartbeating, once, and fences the old holder", async () => {
    await enqueue(db, "silent", [{ key: "held" }]);
    // A worker that claimed and then went silent (frozen, partitioned): no heartbeats.
    const [stale] = await claim(db, "silent", "frozen", 1, 0.5);
    let runs = 0;
    const worker = await startQueueWorker(db, {
      queues: { silent: { handler: async () => void runs++ } },
      sweepMs: 100,
      pollMs: 50,
    });
    await until(async () => (await jobsLeft()) === 0);
    await sleep(500); // room for a second (wrong) reclaim
    await worker.stop();
    expect(runs).toBe(1);
    const kinds = (await db.prisma.leaseEvent.findMany({ orderBy: { id: "asc" } })).map(
      (e) => e.kind,
    );
    expect(kinds).toEqual(["claimed", "expired", "reclaimed"]);
    if (stale) expect(await complete(db, [stale.lease])).toEqual([]);
  });

  it("on stop, hands back what it could not finish before the deadline", async () => {
    await enqueue(db, "stuck", [{ key: "a" }, { key: "b" }]);
    let aborted = 0;
    const worker = await startQueueWorker(db, {
      queues: {
        stuck: {
          concurrency: 2,
          handler: async (_job, { signal }) => {
            await new Promise<void>((resolve) =>
              signal.addEventListener("abort", () => resolve(), { once: true }),
            );
            aborted++;
          },
        },
      },
    });
    await until(async () => (await db.prisma.job.count({ where: { state: "leased" } })) === 2);
    await worker.stop(300);
    expect(aborted).toBe(2);
    const left = await db.prisma.job.findMany();
    expect(left.map((j) => j.state)).toEqual(["ready", "ready"]);
    expect(left.every((j) => j.leaseOwner === null)).toBe(true);
    const released = await db.prisma.leaseEvent.count({ where: { kind: "released" } });
    expect(released).toBe(2);
  });

  it("retries a failing job and parks it after its attempts", async () => {
    await enqueue(db, "broken", [{ key: "x", maxAttempts: 3 }]);
    const worker = await startQueueWorker(db, {
      queues: {
        broken: {
          retry: { baseDelaySeconds: 0.05, maxDelaySeconds: 1 },
          handler: async () => {
            throw Object.assign(new Error("no such column 42"), { code: "42703" });
          },
        },
      },
      pollMs: 20,
    });
    await until(async () => (await db.prisma.job.count({ where: { state: "dead" } })) === 1);
    await worker.stop();
    const dead = await db.prisma.job.findFirstOrThrow();
    expect(dead.attempts).toBe(3);
    expect(dead.lastError).toMatchObject({ code: "42703", message: "no such column 42" });
    expect(await db.prisma.jobFailure.count()).toBe(3);
    expect(worker.counters().failed).toBe(3);
  });
});
