import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { claim } from "./claim";
import { complete } from "./complete";
import { enqueue } from "./enqueue";
import { fail } from "./fail";
import { heartbeat } from "./heartbeat";
import { fingerprint, maskMessage, toJobError } from "./jobError";
import { release } from "./release";
import { reschedule } from "./reschedule";
import { sweep } from "./sweep";
import type { Lease } from "./types";

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db?.drop());
beforeEach(async () => {
  await db.prisma.$executeRaw`TRUNCATE jobs, job_failures, lease_events, queue_claim_stats`;
});

/** Moves a job's lease into the past, as if its worker had died long ago. */
async function backdateLease(id: string, seconds = 3600) {
  await db.prisma.$executeRaw`
    UPDATE jobs SET leased_at = leased_at - make_interval(secs => ${seconds}::float8),
                    lease_expires_at = now() - interval '1 second'
    WHERE id = ${id}::bigint`;
}

function first<T>(items: T[]): T {
  const item = items[0];
  if (item === undefined) throw new Error("expected at least one");
  return item;
}

const job = (id: string) => db.prisma.job.findUniqueOrThrow({ where: { id: BigInt(id) } });
const noRetryDelay = { baseDelaySeconds: 0, maxDelaySeconds: 0 };

describe("enqueue", () => {
  it("keys and sources with quotes, backslashes, braces or the word NULL arrive as written", async () => {
    const odd = ['a"b', "c\\d", "{e,f}", "NULL", 'ঢাকা, "x"'];
    await enqueue(
      db,
      "q",
      odd.map((key, i) => ({ key, sourceId: i % 2 ? key : null, priority: i, delaySeconds: 0 })),
    );
    const rows = await db.prisma.job.findMany({ where: { queue: "q" }, orderBy: { id: "asc" } });
    expect(rows.map((r) => r.key)).toEqual(odd);
    expect(rows.map((r) => r.sourceId)).toEqual(odd.map((k, i) => (i % 2 ? k : null)));
    expect(rows.map((r) => r.priority)).toEqual([0, 1, 2, 3, 4]);
    await expect(enqueue(db, "q", [{ delaySeconds: Number.NaN }])).rejects.toThrow(/finite/);
  });

  it("is idempotent by key while the job is live, and adds it again once finished", async () => {
    const first = await enqueue(db, "q", [{ key: "a" }, { key: "b" }, {}]);
    expect(first).toHaveLength(3);
    expect(await enqueue(db, "q", [{ key: "a" }, { key: "c" }])).toHaveLength(1);
    expect(await enqueue(db, "other", [{ key: "a" }])).toHaveLength(1);
    const claimed = await claim(db, "q", "w", 10, 30);
    expect(await enqueue(db, "q", [{ key: "a" }])).toHaveLength(0); // leased is live too
    await complete(
      db,
      claimed.map((c) => c.lease),
    );
    expect(await enqueue(db, "q", [{ key: "a" }])).toHaveLength(1);
  });

  it("adds a batch without keys with each job's own fields, ids in input order", async () => {
    const ids = await enqueue(db, "q", [
      { payload: { n: 1 }, priority: 2, maxAttempts: 3, sourceId: "s1" },
      { payload: { n: 2 }, delaySeconds: 60 },
      {},
    ]);
    expect(ids).toHaveLength(3);
    expect([...ids].sort((a, b) => Number(a) - Number(b))).toEqual(ids);
    const [a, b, c] = await Promise.all(ids.map(job));
    expect(a).toMatchObject({ payload: { n: 1 }, priority: 2, maxAttempts: 3, sourceId: "s1" });
    expect(b?.payload).toEqual({ n: 2 });
    expect((b?.runAt.getTime() ?? 0) - (a?.runAt.getTime() ?? 0)).toBeGreaterThan(59_000);
    expect(c).toMatchObject({ payload: {}, priority: 0, maxAttempts: 5, key: null });
  });

  it("wakes listening workers", async () => {
    const heard: string[] = [];
    const unlisten = await db.listen("wirewatch_jobs", (p) => heard.push(p));
    await enqueue(db, "wake", [{}, {}, {}]);
    await new Promise((r) => setTimeout(r, 200));
    await unlisten();
    expect(heard).toContain("wake");
  });
});

describe("claim", () => {
  it("takes due jobs by priority, then longest due, and not jobs due later", async () => {
    await enqueue(db, "q", [{ key: "low" }]);
    await enqueue(db, "q", [
      { key: "high", priority: 5 },
      { key: "later", delaySeconds: 60 },
    ]);
    await enqueue(db, "q", [{ key: "low2" }]);
    const claimed = await claim(db, "q", "w", 10, 30);
    expect(claimed.map((c) => c.key)).toEqual(["high", "low", "low2"]);
    expect(claimed.every((c) => c.lease.attempt === 1 && !c.reclaimed)).toBe(true);
    // One token per claim statement (fencing is id + attempt + token together); a fresh one for
    // the next claim.
    expect(new Set(claimed.map((c) => c.lease.token)).size).toBe(1);
    expect(await claim(db, "q", "w", 10, 30)).toEqual([]);
    // Claims are counted per queue and minute, not recorded one row each.
    expect(await db.prisma.leaseEvent.count()).toBe(0);
    const stats = await db.prisma.queueClaimStat.findMany();
    expect(stats).toHaveLength(1);
    expect(stats[0]).toMatchObject({ queue: "q", claims: 3n, reclaimed: 0n });
    expect(stats[0]?.waitBuckets.reduce((a, b) => a + b, 0n)).toBe(3n);
  });

  it("draws a fresh token for each claim, shared by the jobs it took", async () => {
    await enqueue(db, "q", [{ key: "a" }, { key: "b" }]);
    const first = await claim(db, "q", "w", 1, 30);
    const second = await claim(db, "q", "w", 1, 30);
    expect(first[0]?.lease.token).toMatch(/^[0-9a-f-]{36}$/);
    expect(second[0]?.lease.token).not.toBe(first[0]?.lease.token);
    // A's token does not finish B: the id must match too.
    const forged = { ...(second[0]?.lease as Lease), token: first[0]?.lease.token as string };
    expect(await complete(db, [forged])).toEqual([]);
    expect(await complete(db, [second[0]?.lease as Lease])).toEqual([second[0]?.lease.id]);
  });

  it("completes the held leases of a batch and names them when another was not held", async () => {
    await enqueue(db, "q", [{ key: "held" }, { key: "stale" }]);
    const [held, stale] = await claim(db, "q", "w", 2, 30);
    const leases = [held?.lease as Lease, { ...(stale?.lease as Lease), attempt: 9 }];
    expect(await complete(db, leases)).toEqual([held?.lease.id]);
    expect(await complete(db, [stale?.lease as Lease])).toEqual([stale?.lease.id]);
  });

  it("a lease whose fields are not an id, attempt or uuid finishes nothing and says so", async () => {
    await enqueue(db, "q", [{ key: "x" }]);
    const [held] = await claim(db, "q", "w", 1, 30);
    const lease = held?.lease as Lease;
    // Quoted as array elements: a token with quotes and braces is a bad uuid, not SQL.
    await expect(complete(db, [{ ...lease, token: '0"},{"1' }])).rejects.toThrow(/uuid/);
    await expect(complete(db, [{ ...lease, attempt: Number.NaN }])).rejects.toThrow(/finite/);
    expect(await complete(db, [lease])).toEqual([lease.id]);
  });
});

describe("fencing: a worker whose lease was taken over changes nothing", () => {
  async function takenOver() {
    const id = first(await enqueue(db, "q", [{ key: "x" }]));
    const stale = first(await claim(db, "q", "old", 1, 30));
    await backdateLease(id);
    expect(await sweep(db, noRetryDelay)).toMatchObject({ returned: 1, parked: 0 });
    const fresh = first(await claim(db, "q", "new", 1, 30));
    expect(fresh.lease.attempt).toBe(2);
    expect(fresh.reclaimed).toBe(true);
    return { id, stale, fresh };
  }

  /** Everything a worker write could touch: the job row and its two history tables. */
  async function snapshot(id: string) {
    const [row] = await db.prisma.$queryRaw<{ row: string }[]>`
      SELECT row_to_json(j)::text AS row FROM jobs j WHERE id = ${id}::bigint`;
    return {
      row: row?.row,
      failures: await db.prisma.jobFailure.count(),
      leaseEvents: await db.prisma.leaseEvent.count(),
    };
  }

  // Each worker-owned write, run through its production statement, with its answer when the
  // lease is not held. Every one must match id AND attempt AND token: the stale leases below
  // get one of the three right at a time, so dropping any part of a fence fails here.
  const writes: [string, (lease: Lease) => Promise<unknown>, unknown][] = [
    ["complete", (l) => complete(db, [l]), []],
    [
      "fail",
      (l) => fail(db, "old", { lease: l, queue: "q" }, toJobError(new Error("late"))),
      "not_held",
    ],
    [
      "dead-letter",
      (l) => fail(db, "old", { lease: l, queue: "q" }, toJobError(new Error("x")), { park: true }),
      "not_held",
    ],
    ["heartbeat", (l) => heartbeat(db, [l], 600), new Set()],
    ["release", (l) => release(db, "old", [l]), []],
    ["reschedule", (l) => reschedule(db, l, { delaySeconds: 60, payload: { late: true } }), false],
  ];
  const staleLeases: [string, (s: Lease, f: Lease) => Lease][] = [
    ["the old attempt and token", (s) => s],
    ["the current attempt with the old token", (s, f) => ({ ...f, token: s.token })],
    ["the old attempt with the current token", (s, f) => ({ ...f, attempt: s.attempt })],
  ];

  for (const [name, write, notHeld] of writes) {
    for (const [which, lease] of staleLeases) {
      it(`${name} with ${which} affects 0 rows`, async () => {
        const { id, stale, fresh } = await takenOver();
        const before = await snapshot(id);
        expect(await write(lease(stale.lease, fresh.lease))).toEqual(notHeld);
        expect(await snapshot(id)).toEqual(before);
        // The fence is the only thing that stopped it: the holder's own write goes through.
        expect(await write(fresh.lease)).not.toEqual(notHeld);
      });
    }
  }
});

describe("fail", () => {
  it("retries with growing delay, then parks a dead letter with the full error", async () => {
    const id = first(await enqueue(db, "parse", [{ key: "p", maxAttempts: 4 }]));
    const delays: number[] = [];
    for (let attempt = 1; attempt <= 4; attempt++) {
      await db.prisma.$executeRaw`UPDATE jobs SET run_at = now() WHERE id = ${id}::bigint`;
      const c = first(await claim(db, "parse", "w", 1, 30));
      expect(c.lease.attempt).toBe(attempt);
      const err = Object.assign(new Error(`upstream said 503 for item ${attempt}234`), {
        code: "E_UPSTREAM",
      });
      const outcome = await fail(db, "w", c, toJobError(err, "news.example"), {
        retry: { baseDelaySeconds: 10, maxDelaySeconds: 3600 },
      });
      const row = await job(id);
      if (attempt < 4) {
        expect(outcome).toBe("retrying");
        delays.push((row.runAt.getTime() - (row.lastFailedAt?.getTime() ?? 0)) / 1000);
      } else {
        expect(outcome).toBe("dead");
        expect(row.state).toBe("dead");
        expect(row.deadAt).not.toBeNull();
        expect(row.lastError).toMatchObject({ code: "E_UPSTREAM", host: "news.example" });
        expect((row.lastError as { stack: string }).stack).toContain("queue.test.ts");
        expect(row.fingerprint).toBe(
          fingerprint("parse", {
            code: "E_UPSTREAM",
            message: "upstream said 503 for item 1234",
            host: "news.example",
          }),
        );
        expect(row.firstFailedAt?.getTime()).toBeLessThan(row.lastFailedAt?.getTime() ?? 0);
      }
    }
    // base · 2^(n-1): 10, 20, 40 s (the database's timestamps are microseconds).
    expect(delays.map((d) => Math.round(d * 100) / 100)).toEqual([10, 20, 40]);
    const history = await db.prisma.jobFailure.findMany({ where: { jobId: BigInt(id) } });
    expect(history.map((h) => h.attempt)).toEqual([1, 2, 3, 4]);
  });

  it("parks at once when told to", async () => {
    await enqueue(db, "q", [{ key: "bad" }]);
    const c = first(await claim(db, "q", "w", 1, 30));
    expect(await fail(db, "w", c, toJobError(new TypeError("bad payload")), { park: true })).toBe(
      "dead",
    );
  });
});

describe("sweep", () => {
  it("returns expired leases, the first at once, later ones after a growing delay", async () => {
    const id = first(await enqueue(db, "q", [{ key: "crashy", maxAttempts: 3 }]));
    const retry = { baseDelaySeconds: 10, maxDelaySeconds: 3600 };
    await claim(db, "q", "w1", 1, 30);
    await backdateLease(id);
    const swept = await sweep(db, retry);
    expect(swept).toMatchObject({ returned: 1, parked: 0 });
    expect(swept.leaseAgesMs).toHaveLength(1);
    expect(swept.leaseAgesMs[0]).toBeGreaterThanOrEqual(3600_000);
    let row = await job(id);
    expect(row.runAt.getTime()).toBeLessThanOrEqual(Date.now() + 1000);
    expect(row.leaseExpired).toBe(true);
    await claim(db, "q", "w2", 1, 30);
    await backdateLease(id);
    await sweep(db, retry);
    row = await job(id);
    const delay = (row.runAt.getTime() - (row.lastFailedAt?.getTime() ?? 0)) / 1000;
    // The retry schedule one step behind: base · 2^0 on the second expiry.
    expect(Math.round(delay * 100) / 100).toBe(10);
    await db.prisma.$executeRaw`UPDATE jobs SET run_at = now() WHERE id = ${id}::bigint`;
    await claim(db, "q", "w3", 1, 30);
    await backdateLease(id);
    expect(await sweep(db, retry)).toMatchObject({ returned: 0, parked: 1 });
    row = await job(id);
    expect(row.state).toBe("dead");
    expect(row.lastError).toMatchObject({ code: "lease_expired" });
    expect(row.fingerprint).toBe(
      fingerprint("q", { code: "lease_expired", message: "lease ran out" }),
    );
    const kinds = (await db.prisma.leaseEvent.findMany({ orderBy: { id: "asc" } })).map(
      (e) => e.kind,
    );
    expect(kinds).toEqual(["expired", "reclaimed", "expired", "reclaimed", "expired"]);
    const stats = await db.prisma.queueClaimStat.aggregate({
      _sum: { claims: true, reclaimed: true },
    });
    expect(stats._sum).toEqual({ claims: 3n, reclaimed: 2n }); // one row a minute: maybe two
    const expired = await db.prisma.leaseEvent.findFirstOrThrow({ where: { kind: "expired" } });
    expect(expired.leaseAgeMs).toBeGreaterThanOrEqual(3600_000);
  });

  it("leaves a lease a heartbeat extended", async () => {
    const id = first(await enqueue(db, "q", [{}]));
    const c = first(await claim(db, "q", "w", 1, 30));
    await backdateLease(id);
    await heartbeat(db, [c.lease], 30);
    expect(await sweep(db)).toEqual({ returned: 0, parked: 0, leaseAgesMs: [] });
    expect(await db.prisma.leaseEvent.count()).toBe(0); // an extension is not recorded
  });
});

describe("fingerprints", () => {
  it("mask numbers, ids and quoted values", () => {
    expect(maskMessage('timeout after 3012 ms for "a b" id 8f3a9c2e11')).toBe(
      "timeout after # ms for <str> id <hex>",
    );
    const a = fingerprint("fetch", { code: "ETIMEDOUT", message: "after 3012 ms", host: "h" });
    const b = fingerprint("fetch", { code: "ETIMEDOUT", message: "after 2987 ms", host: "h" });
    const c = fingerprint("fetch", { code: "ETIMEDOUT", message: "after 2987 ms", host: "x" });
    expect(a).toBe(b);
    expect(a).not.toBe(c);
  });
});
