import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { Prisma } from "@/lib/generated/prisma/client";
import { sleep } from "@/lib/sleep";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { DEDUP_STAGE, dedupStage } from "@/workers/dedup/stage";
import { createOutlets, put, TEXTS, tombstone } from "@/workers/dedup/testing/items";
import { requeueDeadLetters } from "@/workers/queue/deadLetters";
import { enqueue } from "@/workers/queue/enqueue";
import { type QueueWorker, startQueueWorker } from "@/workers/queue/queueWorker";
import { parseNotice } from "./feeder";
import { createLine, type Line, type LineOptions } from "./line";
import type { Stage } from "./stage";
import { stageCursor } from "./sweep";

// The line on the real queue: a worker claiming the stages' queues, the feeder listening to the
// writer's NOTIFY, the sweep. Each test writes items through the real writer and waits (with a
// timeout, not a fixed sleep) for what the line must make of them.

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
  await createOutlets(db);
  await db.prisma.$executeRawUnsafe(
    "CREATE TABLE probe_seen (entry_key text, version int, PRIMARY KEY (entry_key, version))",
  );
});
afterAll(() => db?.drop());

const running: { line: Line; worker: QueueWorker }[] = [];
beforeEach(async () => {
  await db.prisma.$executeRawUnsafe(
    `TRUNCATE news, news_events, dedup_items, dedup_clusters, dedup_cluster_events, dedup_links,
              dedup_reviews, dedup_settings, jobs, job_failures, lease_events, queue_claim_stats,
              queue_workers, line_cursors, admin_audit, probe_seen RESTART IDENTITY`,
  );
});
afterEach(async () => {
  for (const r of running.splice(0)) await stopLine(r);
});

async function startLine(stages: Stage[], options: LineOptions = {}) {
  const line = createLine(db, stages, { sweepMs: 3_600_000, ...options });
  const worker = await startQueueWorker(db, {
    queues: line.queues,
    pollMs: 50,
    sweepMs: 100,
    reportMs: 60_000,
  });
  await line.start();
  const r = { line, worker };
  running.push(r);
  return r;
}
async function stopLine(r: { line: Line; worker: QueueWorker }) {
  await r.line.stop();
  await r.worker.stop(2_000);
  const i = running.indexOf(r);
  if (i >= 0) running.splice(i, 1);
}

const count = async (sql: string) =>
  (
    (await db.prisma.$queryRawUnsafe<{ n: number }[]>(`SELECT (${sql})::int AS n`))[0] as {
      n: number;
    }
  ).n;
async function until(what: string, check: () => Promise<boolean>, timeoutMs = 20_000) {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await check()) return;
    await sleep(25);
  }
  throw new Error(`timed out waiting for ${what}`);
}
const decidedAtVersion = () =>
  count(
    "SELECT count(*) FROM news n JOIN dedup_items d USING (entry_key) WHERE d.version = n.version AND d.decision_ms IS NOT NULL",
  );

/** A stage after dedup, as embed will be: it records what reached it. */
function probeStage(): Stage {
  return {
    name: "probe",
    handsOn: [],
    handle: async (job, { db }) => {
      await db.prisma.$executeRaw`
        INSERT INTO probe_seen VALUES (${job.entryKey}, ${job.version}) ON CONFLICT DO NOTHING`;
      return "survived";
    },
    // Survivors of dedup at their version that this stage has not seen: found again by the
    // sweep when a hand-on was lost.
    pending: (since) => Prisma.sql`
      SELECT d.entry_key, d.version, d.source_id, d.decided_at AS at
      FROM dedup_items d
      WHERE d.decided_at > ${since} AND d.outcome IN ('unique', 'review')
        AND NOT EXISTS (SELECT 1 FROM probe_seen p
                        WHERE p.entry_key = d.entry_key AND p.version = d.version)`,
    horizon: () => Prisma.sql`SELECT max(decided_at) FROM dedup_items`,
  };
}

describe("feeding the line", () => {
  it("the writer's NOTIFY wakes the dedup stage (no sweep after the first)", async () => {
    await startLine([dedupStage(db)]);
    const a = await put(db, "wire", "s-a", TEXTS.strike);
    const b = await put(db, "daily", "s-b", TEXTS.strike);
    const c = await put(db, "star", "flood", TEXTS.flood);
    await until("three decisions", async () => (await decidedAtVersion()) === 3);
    // Decided side by side (4 handlers): whichever locked first is the canonical.
    const linked = await db.prisma.$queryRaw<{ entry_key: string; duplicate_of: string }[]>`
      SELECT entry_key, duplicate_of FROM news WHERE duplicate_of IS NOT NULL`;
    expect(linked).toHaveLength(1);
    expect([linked[0]?.entry_key, linked[0]?.duplicate_of].sort()).toEqual(
      [a.entryKey, b.entryKey].sort(),
    );
    // The tombstone notifies too, and its job removes the item.
    await tombstone(db, "star", "flood");
    await until(
      "the tombstone decided",
      async () =>
        (await count(
          `SELECT count(*) FROM dedup_items WHERE entry_key = '${c.entryKey}' AND outcome = 'removed'`,
        )) === 1,
    );
  });

  it("items written while nobody listened (and backfill, which never notifies) are found by the sweep", async () => {
    const keys = [];
    for (let i = 0; i < 30; i++) {
      keys.push(
        await put(db, "wire", `quiet-${i}`, {
          title: `Quiet item number ${i} about ${["ports", "rates", "floods"][i % 3]}`,
          summary: `Summary ${i * 31}.`,
          origin: i % 2 === 0 ? "backfill" : "poll",
        }),
      );
    }
    const r = await startLine([dedupStage(db)], { listen: false, pageSize: 7 });
    await until("every item decided", async () => (await decidedAtVersion()) === 30);
    await r.line.stop();
    const cursor = await stageCursor(db, DEDUP_STAGE);
    const [latest] = await db.prisma.$queryRaw<
      { at: Date }[]
    >`SELECT max(updated_at) AS at FROM news`;
    expect(cursor.getTime()).toBe(latest?.at.getTime());
    // Everything decided: a sweep now has nothing to do.
    expect((await r.line.sweep())[DEDUP_STAGE]?.enqueued).toBe(0);
  });

  it("a sweep looks back over its margin for late commits, and no further", async () => {
    const line = createLine(db, [dedupStage(db)], { marginMs: 30_000 });
    const a = await put(db, "wire", "a", TEXTS.flood);
    const b = await put(db, "daily", "b", TEXTS.cricket);
    expect((await line.sweep())[DEDUP_STAGE]?.enqueued).toBe(2);
    await db.prisma.$executeRawUnsafe("DELETE FROM jobs");
    const cursor = await stageCursor(db, DEDUP_STAGE);
    // Two new versions whose transactions "started" before the cursor: one 10 s before, inside
    // the margin, one 5 minutes before, outside it.
    await db.prisma.$executeRaw`
      UPDATE news SET version = version + 1, updated_at = ${new Date(cursor.getTime() - 10_000)}
      WHERE entry_key = ${a.entryKey}`;
    await db.prisma.$executeRaw`
      UPDATE news SET version = version + 1, updated_at = ${new Date(cursor.getTime() - 300_000)}
      WHERE entry_key = ${b.entryKey}`;
    const swept = await line.sweep();
    expect(swept[DEDUP_STAGE]?.enqueued).toBe(2 - 1);
    const jobs = await db.prisma.$queryRaw<{ key: string }[]>`SELECT key FROM jobs`;
    expect(jobs).toEqual([{ key: `${a.entryKey}@${a.version + 1}` }]);
    // The cursor never moves back.
    expect((await stageCursor(db, DEDUP_STAGE)).getTime()).toBe(cursor.getTime());
  });

  it("a sweep page that comes back full moves the cursor only to its last row", async () => {
    const line = createLine(db, [dedupStage(db)], { pageSize: 4, maxJobs: 4, marginMs: 0 });
    for (let i = 0; i < 10; i++)
      await put(db, "wire", `p-${i}`, { title: `Page item ${i} zz${i}` });
    const first = await line.sweep();
    expect(first[DEDUP_STAGE]).toMatchObject({ enqueued: 4, more: true });
    const second = await line.sweep();
    expect(second[DEDUP_STAGE]).toMatchObject({ enqueued: 4, more: true });
    const third = await line.sweep();
    expect(third[DEDUP_STAGE]).toMatchObject({ enqueued: 2, more: false });
    expect(await count("SELECT count(DISTINCT key) FROM jobs WHERE queue = 'dedup'")).toBe(10);
  });
});

describe("failures", () => {
  it("a failing stage retries, dead-letters on its queue, is not swept again, and the requeue puts it back", async () => {
    const real = dedupStage(db);
    let failing = true;
    const flaky: Stage = {
      ...real,
      maxAttempts: 3,
      retry: { baseDelaySeconds: 0.05, maxDelaySeconds: 0.1 },
      handle: async (job, ctx) => {
        if (failing) throw new Error(`lookup failed for ${job.entryKey}`);
        return real.handle(job, ctx);
      },
    };
    const r = await startLine([flaky], { listen: false, sweepMs: 100 });
    const a = await put(db, "wire", "doomed", TEXTS.rate);
    await until(
      "a dead letter",
      async () =>
        (await count("SELECT count(*) FROM jobs WHERE state = 'dead' AND queue = 'dedup'")) === 1,
    );
    expect(await count("SELECT count(*) FROM job_failures WHERE queue = 'dedup'")).toBe(3);
    const [dead] = await db.prisma.$queryRaw<{ key: string; last_error: { message: string } }[]>`
      SELECT key, last_error FROM jobs WHERE state = 'dead'`;
    expect(dead?.key).toBe(`${a.entryKey}@${a.version}`);
    expect(dead?.last_error.message).toMatch(/lookup failed/);
    // Several sweeps later: still one job, the dead one; nothing decided.
    await sleep(400);
    expect(await count("SELECT count(*) FROM jobs")).toBe(1);
    expect(await count("SELECT count(*) FROM dedup_items")).toBe(0);

    failing = false;
    const requeued = await requeueDeadLetters(db, { actor: "test", filter: { queue: "dedup" } });
    expect(requeued).toMatchObject({ requeued: 1 });
    await until("the requeued job decided", async () => (await decidedAtVersion()) === 1);
    await stopLine(r);
  });

  it("a job that is not an item@version is parked at once", async () => {
    await startLine([dedupStage(db)], { listen: false });
    await enqueue(db, DEDUP_STAGE, [{ key: "junk", payload: { entryKey: 5 } }]);
    await until(
      "a dead letter",
      async () => (await count("SELECT count(*) FROM jobs WHERE state = 'dead'")) === 1,
    );
    const [dead] = await db.prisma.$queryRaw<{ attempts: number; last_error: { code: string } }[]>`
      SELECT attempts, last_error FROM jobs WHERE state = 'dead'`;
    expect(dead).toMatchObject({ attempts: 1, last_error: { code: "bad_payload" } });
  });
});

describe("handing on", () => {
  it("hands only survivors on; the next stage's sweep finds one whose hand-on was lost", async () => {
    const r = await startLine([dedupStage(db, { handsOn: ["probe"] }), probeStage()]);
    const copies = [
      await put(db, "wire", "s-a", TEXTS.strike),
      await put(db, "daily", "s-b", TEXTS.strike),
      await put(db, "star", "s-c", TEXTS.strike),
    ];
    const f = await put(db, "ittefaq", "flood", TEXTS.flood);
    await until("four decisions", async () => (await decidedAtVersion()) === 4);
    await until(
      "two survivors at the probe",
      async () => (await count("SELECT count(*) FROM probe_seen")) === 2,
    );
    const seen = await db.prisma.$queryRaw<{ entry_key: string }[]>`
      SELECT entry_key FROM probe_seen ORDER BY entry_key`;
    // The story's canonical (whichever copy was decided first: four handlers run side by side)
    // and the unrelated item; never the two duplicates.
    const [canonical] = await db.prisma.$queryRaw<{ canonical_key: string }[]>`
      SELECT canonical_key FROM dedup_clusters WHERE dissolved_at IS NULL`;
    expect(copies.map((c) => c.entryKey)).toContain(canonical?.canonical_key);
    expect(seen.map((s) => s.entry_key)).toEqual([canonical?.canonical_key, f.entryKey].sort());
    await stopLine(r);

    // A survivor decided while its hand-on did not happen (the worker died between the two).
    const g = await put(db, "observer", "cricket", TEXTS.cricket);
    await dedupStage(db).handle(
      { entryKey: g.entryKey, version: g.version },
      { db, signal: new AbortController().signal, attempt: 1 },
    );
    const line = createLine(db, [dedupStage(db, { handsOn: ["probe"] }), probeStage()]);
    const swept = await line.sweep();
    expect(swept).toMatchObject({ dedup: { enqueued: 0 }, probe: { enqueued: 1 } });
  });

  it("refuses a hand-on to a stage that is not in the line, and two stages of one name", () => {
    expect(() => createLine(db, [dedupStage(db, { handsOn: ["embed"] })])).toThrow(/embed/);
    expect(() => createLine(db, [dedupStage(db), dedupStage(db)])).toThrow(/share a name/);
  });
});

describe("parseNotice", () => {
  it("reads the writer's notifications and ignores everything else", () => {
    const ok = { entryKey: "k", sourceId: "wire", result: "updated", version: 3 };
    expect(parseNotice(JSON.stringify(ok))).toEqual({
      entryKey: "k",
      sourceId: "wire",
      version: 3,
    });
    expect(parseNotice(JSON.stringify({ ...ok, result: "tombstoned" }))?.version).toBe(3);
    for (const bad of [
      "sentinel:1:2",
      "null",
      "[]",
      JSON.stringify({ ...ok, result: "unchanged" }),
      JSON.stringify({ ...ok, version: null }),
      JSON.stringify({ ...ok, version: 0 }),
      JSON.stringify({ ...ok, version: 1.5 }),
      JSON.stringify({ ...ok, entryKey: "" }),
      JSON.stringify({ ...ok, entryKey: 7 }),
    ]) {
      expect(parseNotice(bad)).toBeNull();
    }
  });
});
