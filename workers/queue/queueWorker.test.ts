import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Clock } from "@/lib/backoff";
import type { Database } from "@/lib/db";
import { type EventMap, on } from "@/lib/events";
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
  await db.prisma
    .$executeRaw`TRUNCATE jobs, job_failures, lease_events, queue_claim_stats, queue_workers`;
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
const claimCounts = async (queue: string) =>
  (
    await db.prisma.queueClaimStat.aggregate({
      where: { queue },
      _sum: { claims: true, reclaimed: true },
    })
  )._sum;

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
    // Claimed once, never expired or reclaimed: the heartbeats kept it through 3 leases while
    // the rival swept every 100 ms.
    expect(await db.prisma.leaseEvent.count()).toBe(0);
    expect(await claimCounts("slow")).toEqual({ claims: 1n, reclaimed: 0n });
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
    expect(kinds).toEqual(["expired", "reclaimed"]);
    expect(await claimCounts("silent")).toEqual({ claims: 2n, reclaimed: 1n });
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

  it("emits a job:claimed per claim statement that took jobs, and a job:completed per job", async () => {
    const claimed: EventMap["job:claimed"][] = [];
    const completed: EventMap["job:completed"][] = [];
    const offs = [
      on("job:claimed", (e) => {
        if (e.workerId === "emitter") claimed.push(e);
      }),
      on("job:completed", (e) => {
        if (e.queue === "events") completed.push(e);
      }),
    ];
    await enqueue(
      db,
      "events",
      Array.from({ length: 120 }, (_, i) => ({ key: `e${i}` })),
    );
    const worker = await startQueueWorker(db, {
      workerId: "emitter",
      queues: { events: { concurrency: 50, batchSize: 25, handler: async () => undefined } },
      pollMs: 20,
    });
    await until(async () => (await jobsLeft()) === 0);
    await sleep(200); // idle polls: claims that find nothing, and say nothing
    await worker.stop();
    for (const off of offs) off();
    expect(claimed.every((e) => e.count > 0 && e.count <= 25)).toBe(true);
    expect(claimed.every((e) => e.waitsMs.length === e.count && e.reclaimed === 0)).toBe(true);
    expect(claimed.reduce((a, e) => a + e.count, 0)).toBe(120);
    expect(completed).toHaveLength(120);
    expect(completed.every((e) => !e.rescheduled && e.durationMs >= 0)).toBe(true);
    expect(worker.counters()).toMatchObject({ claimed: 120, completed: 120, inFlight: 0 });
  });

  it("backs off a lost database by lib/backoff on the injected clock", async () => {
    const refused = () => Promise.reject(new Error("connect ECONNREFUSED"));
    const down = {
      kind: "postgres",
      location: "nowhere",
      prisma: { $queryRaw: refused, $executeRaw: refused },
      listen: async () => async () => undefined,
      close: async () => undefined,
    } as unknown as Database;
    const slept: number[] = [];
    const clock: Clock = {
      now: () => Date.now(),
      random: () => 1, // full jitter at its ceiling: the delays are the policy's ceilings
      sleep: (ms, signal) => {
        slept.push(ms);
        return sleep(1, signal);
      },
    };
    const worker = await startQueueWorker(down, {
      // Every other loop's interval is below the first back-off (250 ms), to tell them apart.
      queues: { q: { handler: async () => undefined, leaseSeconds: 0.3 } },
      clock,
      pollMs: 13,
      sweepMs: 17,
      reportMs: 19,
      housekeepingMs: 23,
    });
    await until(async () => slept.filter((ms) => ms >= 250).length >= 7);
    await worker.stop();
    expect(slept.filter((ms) => ms >= 250).slice(0, 7)).toEqual([
      250, 500, 1_000, 2_000, 4_000, 5_000, 5_000,
    ]);
    expect(worker.counters().lastError).toMatch(/ECONNREFUSED/);
  });

  it("retries a failing job and parks it after its attempts", async () => {
    const failed: EventMap["job:failed"][] = [];
    const dead: EventMap["job:dead"][] = [];
    const offs = [
      on("job:failed", (e) => {
        if (e.queue === "broken") failed.push(e);
      }),
      on("job:dead", (e) => {
        if (e.queue === "broken") dead.push(e);
      }),
    ];
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
    const parked = await db.prisma.job.findFirstOrThrow();
    const dead0Id = parked.id;
    expect(parked.attempts).toBe(3);
    expect(parked.lastError).toMatchObject({ code: "42703", message: "no such column 42" });
    expect(await db.prisma.jobFailure.count()).toBe(3);
    expect(worker.counters().failed).toBe(3);
    for (const off of offs) off();
    // 0.05 · 2^(attempt-1) s, then dead.
    expect(failed.map((e) => [e.attempt, e.retryInSeconds, e.error])).toEqual([
      [1, 0.05, "42703"],
      [2, 0.1, "42703"],
      [3, null, "42703"],
    ]);
    expect(dead).toEqual([
      {
        queue: "broken",
        attempt: 3,
        error: "42703",
        workerId: worker.id,
        jobId: String(dead0Id),
      },
    ]);
  });
  it("tells a queue how many processes serve it (onPeers), and one fewer once a peer stops", async () => {
    const heard = { a: [] as number[], b: [] as number[] };
    const serving = (seen: number[]) => ({
      shared: { handler: async () => undefined, onPeers: (n: number) => void seen.push(n) },
    });
    const a = await startQueueWorker(db, { queues: serving(heard.a), reportMs: 50, pollMs: 50 });
    const b = await startQueueWorker(db, { queues: serving(heard.b), reportMs: 50, pollMs: 50 });
    await until(async () => heard.a.at(-1) === 2 && heard.b.at(-1) === 2);
    await b.stop();
    const before = heard.a.length;
    await until(async () => heard.a.length > before && heard.a.at(-1) === 1);
    await a.stop();
  });
});
