import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedClaimStats } from "@/lib/testing/claimStats";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { queueFlow, retryingJobs } from "./queueFlow";
import { minutesBefore } from "./testing";

let db: TestDatabase;
// On a bucket boundary, so which bucket a minute falls in is known.
const now = new Date(Math.floor(Date.now() / 600_000) * 600_000 + 590_000);
const from = minutesBefore(now, 60);

beforeAll(async () => {
  db = await createTestDatabase();
  // fetch: 5 claims 5 minutes ago, of which 2 failed; one of those went dead. 3 claims 40
  // minutes ago, none failed. stream: one failure only, 20 minutes ago.
  await seedClaimStats(db, { queue: "fetch", at: minutesBefore(now, 5), waitsMs: [1, 2, 3, 4, 5] });
  await seedClaimStats(db, { queue: "fetch", at: minutesBefore(now, 40), waitsMs: [1, 2, 3] });
  const failure = (queue: string, minutesAgo: number, jobId: bigint) => ({
    jobId,
    queue,
    attempt: 1,
    kind: "error",
    error: { code: "http_5xx", message: "503" },
    failedAt: minutesBefore(now, minutesAgo),
  });
  await db.prisma.jobFailure.createMany({
    data: [failure("fetch", 5, 1n), failure("fetch", 5, 2n), failure("stream", 20, 3n)],
  });
  await db.prisma.job.createMany({
    data: [
      { queue: "fetch", key: "dead", state: "dead", deadAt: minutesBefore(now, 5), attempts: 5 },
      // Dead long before the window: not counted.
      { queue: "fetch", key: "old", state: "archived", deadAt: minutesBefore(now, 600) },
      // Waiting to retry: failed, due again later.
      {
        queue: "fetch",
        key: "retry-2",
        attempts: 2,
        runAt: new Date(now.getTime() + 120_000),
        lastFailedAt: minutesBefore(now, 1),
        lastError: { code: "timeout", message: "no answer in 30 s" },
      },
      {
        queue: "stream",
        key: "retry-1",
        attempts: 1,
        runAt: new Date(now.getTime() + 30_000),
        lastFailedAt: minutesBefore(now, 2),
      },
      // Ready but never failed (a recurring poll): not a retry.
      { queue: "fetch", key: "poll", runAt: new Date(now.getTime() + 60_000) },
    ],
  });
});

afterAll(async () => {
  await db?.drop();
});

describe("queueFlow", () => {
  it("counts claimed, processed (claimed less failed), failed and dead-lettered per bucket", async () => {
    const flows = await queueFlow(db, { from, now, bucketSeconds: 600 });
    expect(flows.map((f) => f.queue)).toEqual(["fetch", "stream"]);
    const fetch = flows[0];
    expect(fetch?.totals).toEqual({ claimed: 8, processed: 6, failed: 2, deadLettered: 1 });
    // Empty buckets are zeros, so the chart's time axis is the window's.
    expect(fetch?.points.length).toBeGreaterThanOrEqual(6);
    const recent = fetch?.points.find((p) => p.claimed === 5);
    expect(recent).toMatchObject({ processed: 3, failed: 2, deadLettered: 1 });
    expect(flows[1]?.totals).toEqual({ claimed: 0, processed: 0, failed: 1, deadLettered: 0 });
  });
});

describe("retryingJobs", () => {
  it("lists jobs waiting for another attempt, soonest first, with their last error", async () => {
    const { total, jobs } = await retryingJobs(db);
    expect(total).toBe(2);
    expect(jobs.map((j) => j.key)).toEqual(["retry-1", "retry-2"]);
    expect(jobs[1]).toMatchObject({
      queue: "fetch",
      attempts: 2,
      maxAttempts: 5,
      error: "timeout: no answer in 30 s",
    });
    expect(jobs[0]?.error).toBeNull();
  });
});
