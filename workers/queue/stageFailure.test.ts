import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { sleep } from "@/lib/sleep";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { AUDIT_ACTIONS, deadLetterStats, listDeadLetters, requeueDeadLetters } from "./deadLetters";
import { enqueue } from "./enqueue";
import { type QueueWorker, startQueueWorker } from "./queueWorker";

// Acceptance: a stage whose handler always throws. Its jobs retry with growing delays up to
// their attempts, park as dead letters with the full error and one shared fingerprint, come back
// with a requeue by that fingerprint (after a dry run), and succeed once the fault is gone; the
// admin trail records both actions.

let db: TestDatabase;
let worker: QueueWorker | undefined;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await worker?.stop(1_000);
  await db?.drop();
});
beforeEach(async () => {
  await db.prisma
    .$executeRaw`TRUNCATE jobs, job_failures, lease_events, queue_workers, admin_audit`;
});

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 30_000) {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await check()) return;
    await sleep(25);
  }
  throw new Error(`timed out waiting for ${what}`);
}

const JOBS = 6;
const MAX_ATTEMPTS = 5;
// Long enough that the policy's delays, not claim latency (a cold first round on PGlite can
// add ~100 ms), decide the gaps.
const BASE_DELAY_S = 0.2;

describe("a stage that always fails", () => {
  it("retries with growing delay, parks dead letters, and a requeue by fingerprint recovers them", async () => {
    let broken = true;
    const succeeded = new Map<string, number>();
    worker = await startQueueWorker(db, {
      pollMs: 10,
      queues: {
        extract: {
          concurrency: JOBS,
          retry: { baseDelaySeconds: BASE_DELAY_S, maxDelaySeconds: 10 },
          handler: async (job) => {
            if (broken) {
              // Every message differs (item number, a timing, an id), the cause is the same.
              const ms = 100 + Math.floor(Math.random() * 900);
              throw Object.assign(
                new Error(
                  `extractor crashed on item ${job.payload.item} after ${ms} ms (trace ${randomUUID()})`,
                ),
                { code: "E_EXTRACT" },
              );
            }
            succeeded.set(job.lease.id, (succeeded.get(job.lease.id) ?? 0) + 1);
          },
        },
      },
    });
    const ids = await enqueue(
      db,
      "extract",
      Array.from({ length: JOBS }, (_, i) => ({
        key: `item-${i}`,
        payload: { item: 1000 + i },
        maxAttempts: MAX_ATTEMPTS,
      })),
    );
    expect(ids).toHaveLength(JOBS);

    // Retries up to max attempts, then dead letters.
    await until(
      "every job to be a dead letter",
      async () => (await db.prisma.job.count({ where: { state: "dead" } })) === JOBS,
    );

    // The gaps between failed attempts grow (database clock): each is at least the retry
    // policy's jittered minimum, base · 2^(n-1) / 2, and on average they double.
    const failures = await db.prisma.$queryRaw<
      { job_id: string; attempt: number; gap_ms: number | null }[]
    >`
      SELECT job_id::text AS job_id, attempt,
             extract(epoch FROM failed_at - lag(failed_at) OVER (PARTITION BY job_id ORDER BY id))
               * 1000 AS gap_ms
      FROM job_failures ORDER BY job_id, id`;
    expect(failures).toHaveLength(JOBS * MAX_ATTEMPTS);
    const meanGap: number[] = [];
    for (let n = 2; n <= MAX_ATTEMPTS; n++) {
      const gaps = failures.filter((f) => f.attempt === n).map((f) => Number(f.gap_ms));
      expect(gaps).toHaveLength(JOBS);
      const minimum = (BASE_DELAY_S * 1000 * 2 ** (n - 2)) / 2;
      for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(minimum);
      meanGap.push(gaps.reduce((a, b) => a + b, 0) / gaps.length);
    }
    for (let i = 1; i < meanGap.length; i++) {
      expect(meanGap[i]).toBeGreaterThan(meanGap[i - 1] as number);
    }
    for (const id of ids) {
      const mine = failures.filter((f) => f.job_id === id);
      expect(mine.map((f) => f.attempt)).toEqual([1, 2, 3, 4, 5]);
      // Per job too: the last wait is longer than the first (≥ 4·base/2 against ≤ base + latency).
      expect(Number(mine[4]?.gap_ms)).toBeGreaterThan(Number(mine[1]?.gap_ms));
    }

    // Dead letters with the full error, all under one fingerprint though messages differ.
    const page = await listDeadLetters(db, { queue: "extract" });
    expect(page.items.map((d) => d.id).sort()).toEqual([...ids].sort());
    for (const d of page.items) {
      expect(d).toMatchObject({
        stage: "extract",
        attempts: MAX_ATTEMPTS,
        maxAttempts: MAX_ATTEMPTS,
        requeues: 0,
        lastError: { code: "E_EXTRACT" },
      });
      expect(d.lastError?.message).toMatch(/^extractor crashed on item \d+ after \d+ ms \(trace /);
      expect(d.lastError?.stack).toContain("stageFailure.test.ts");
      expect(d.payload).toHaveProperty("item");
    }
    expect(new Set(page.items.map((d) => d.lastError?.message)).size).toBe(JOBS);
    const fingerprints = new Set(page.items.map((d) => d.fingerprint));
    expect(fingerprints.size).toBe(1);
    const [fingerprint] = [...fingerprints] as string[];
    const stats = await deadLetterStats(db);
    expect(stats.depth).toBe(JOBS);
    expect(stats.groups).toEqual([
      expect.objectContaining({ fingerprint, stage: "extract", code: "E_EXTRACT", count: JOBS }),
    ]);

    // A dry run first: it counts every dead letter and changes nothing.
    const dry = await requeueDeadLetters(db, {
      actor: "oncall",
      filter: { fingerprint },
      dryRun: true,
    });
    expect(dry).toMatchObject({ dryRun: true, matched: JOBS, requeued: JOBS, refused: {} });
    expect((await deadLetterStats(db)).depth).toBe(JOBS);

    // The fault is fixed; the requeue brings them back and each succeeds once.
    broken = false;
    const done = await requeueDeadLetters(db, { actor: "oncall", filter: { fingerprint } });
    expect(done).toMatchObject({ dryRun: false, matched: JOBS, requeued: JOBS });
    await until("the requeued jobs to finish", async () => (await db.prisma.job.count()) === 0);
    await worker.stop();
    worker = undefined;
    expect([...succeeded.keys()].sort()).toEqual([...ids].sort());
    expect([...succeeded.values()]).toEqual(Array(JOBS).fill(1));
    // Their history outlives them.
    expect(await db.prisma.jobFailure.count()).toBe(JOBS * MAX_ATTEMPTS);

    const audit = await db.prisma.adminAudit.findMany({ orderBy: { id: "asc" } });
    expect(audit.map((a) => [a.actor, a.action, a.dryRun, a.affected])).toEqual([
      ["oncall", AUDIT_ACTIONS.requeue, true, JOBS],
      ["oncall", AUDIT_ACTIONS.requeue, false, JOBS],
    ]);
    for (const a of audit) expect(a.target).toMatchObject({ filter: { fingerprint } });
  });
});
