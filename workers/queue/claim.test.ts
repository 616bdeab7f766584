import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { CLAIM_WAIT_BUCKET_COUNT, claimWaitBucket } from "@/lib/claimWaits";
import { Prisma } from "@/lib/generated/prisma/client";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { claim, claimStatement } from "./claim";

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db?.drop());
beforeEach(async () => {
  await db.prisma.$executeRaw`TRUNCATE jobs, lease_events, queue_claim_stats`;
});

/** Plan nodes of an EXPLAIN (FORMAT JSON), flattened. */
function nodes(plan: Record<string, unknown>): Record<string, unknown>[] {
  const children = (plan.Plans as Record<string, unknown>[] | undefined) ?? [];
  return [plan, ...children.flatMap(nodes)];
}

describe("claim", () => {
  it("updates by ctid on a loaded, analyzed table: no seq scan, no hash join over jobs", async () => {
    // 20,000 due jobs (the bench's size, where a join by id turned into a hash join over a seq
    // scan of the whole table) and 20,000 in another queue.
    await db.prisma.$executeRaw`
      INSERT INTO jobs (queue, payload)
      SELECT CASE WHEN g % 2 = 0 THEN 'bench' ELSE 'other' END, jsonb_build_object('n', g)
      FROM generate_series(1, 40000) g`;
    await db.prisma.$executeRawUnsafe("ANALYZE jobs");
    const [row] = await db.prisma.$queryRaw<
      { "QUERY PLAN": [{ Plan: Record<string, unknown> }] }[]
    >(Prisma.sql`EXPLAIN (FORMAT JSON) ${claimStatement("bench", "w", 1000, 30)}`);
    const plan = nodes(row?.["QUERY PLAN"][0].Plan ?? {});
    const update = plan.find((n) => n["Node Type"] === "ModifyTable" && n.Operation === "Update");
    expect(update?.["Relation Name"]).toBe("jobs");
    const under = nodes(update ?? {}).filter((n) => n !== update);
    expect(under.map((n) => n["Node Type"])).toContain("Tid Scan");
    const onJobs = plan.filter((n) => n["Relation Name"] === "jobs");
    expect(onJobs.filter((n) => n["Node Type"] === "Seq Scan")).toEqual([]);
    // And it takes the jobs it should.
    expect(await claim(db, "bench", "w", 1000, 30)).toHaveLength(1000);
  });

  it("adds its jobs to the queue's minute: claims, wait sum and max, a wait histogram", async () => {
    // Due 0 s, 0.2 s, 3 s and 2 h ago: buckets ≤50 ms, ≤250 ms, ≤5 s and the last.
    const agesMs = [0, 200, 3_000, 7_200_000];
    await db.prisma.$executeRaw`
      INSERT INTO jobs (queue, run_at)
      SELECT 'q', now() - make_interval(secs => age / 1000.0) FROM unnest(${agesMs}::int[]) age`;
    const claimed = await claim(db, "q", "w", 10, 30);
    expect(claimed).toHaveLength(4);
    const [stats] = await db.prisma.queueClaimStat.findMany();
    const buckets = stats?.waitBuckets.map(Number) ?? [];
    expect(buckets).toHaveLength(CLAIM_WAIT_BUCKET_COUNT);
    const expected = new Array<number>(CLAIM_WAIT_BUCKET_COUNT).fill(0);
    for (const job of claimed) {
      const b = claimWaitBucket(job.waitMs);
      expected[b] = (expected[b] ?? 0) + 1;
    }
    expect(buckets).toEqual(expected);
    expect(buckets[claimWaitBucket(0)]).toBe(1);
    expect(buckets.at(-1)).toBe(1);
    expect(Number(stats?.claims)).toBe(4);
    expect(Number(stats?.waitMsSum)).toBe(claimed.reduce((a, j) => a + j.waitMs, 0));
    expect(stats?.waitMsMax).toBe(Math.max(...claimed.map((j) => j.waitMs)));

    // A second claim in the same minute adds to the same row (the histogram element-wise).
    await db.prisma.$executeRaw`INSERT INTO jobs (queue) VALUES ('q')`;
    await claim(db, "q", "w", 10, 30);
    const after = await db.prisma.queueClaimStat.findMany();
    const total = after.reduce((a, s) => a + Number(s.claims), 0);
    expect(total).toBe(5);
    const sum = after
      .flatMap((s) => s.waitBuckets.map((n, i) => [i, Number(n)] as const))
      .reduce((acc, [i, n]) => {
        acc[i] = (acc[i] ?? 0) + n;
        return acc;
      }, new Array<number>(CLAIM_WAIT_BUCKET_COUNT).fill(0));
    expect(sum.reduce((a, b) => a + b, 0)).toBe(5);
  });

  it("records a lease event only for a reclaimed job, and nothing when it finds none", async () => {
    await db.prisma
      .$executeRaw`INSERT INTO jobs (queue, lease_expired) VALUES ('q', true), ('q', false)`;
    const claimed = await claim(db, "q", "w", 10, 30);
    expect(claimed.map((c) => c.reclaimed).sort()).toEqual([false, true]);
    const events = await db.prisma.leaseEvent.findMany();
    expect(events.map((e) => [e.kind, e.workerId, e.attempt])).toEqual([["reclaimed", "w", 1]]);
    const [stats] = await db.prisma.queueClaimStat.findMany();
    expect([stats?.claims, stats?.reclaimed]).toEqual([2n, 1n]);

    await db.prisma.$executeRaw`TRUNCATE queue_claim_stats`;
    expect(await claim(db, "q", "w", 10, 30)).toEqual([]);
    expect(await db.prisma.queueClaimStat.count()).toBe(0);
  });
});
