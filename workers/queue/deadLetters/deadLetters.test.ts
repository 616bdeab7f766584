import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createTestDatabase, requireRealPostgres, type TestDatabase } from "@/lib/testing/db";
import { createSources } from "@/workers/fetcher/testing/servers";
import { claim } from "../claim";
import { complete } from "../complete";
import { enqueue } from "../enqueue";
import {
  AUDIT_ACTIONS,
  deadLetterStats,
  discardDeadLetters,
  getDeadLetter,
  InvalidDeadLetterFilterError,
  listDeadLetterAudit,
  listDeadLetters,
  parseDeadLetterFilter,
  REFUSALS,
  requeueDeadLetter,
  requeueDeadLetters,
  SelectionError,
} from "./index";
import { makeDeadLetters } from "./testing";

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
  await createSources(db, ["src-open", "src-closed", "src-a", "src-b"]);
});
afterAll(() => db?.drop());
beforeEach(async () => {
  await db.prisma.$executeRaw`TRUNCATE jobs, job_failures, lease_events, admin_audit, source_state`;
  await db.prisma.$executeRaw`
    INSERT INTO source_state (source_id, breaker_state)
    VALUES ('src-open', 'open'), ('src-closed', 'closed')`;
});

const actor = "test:admin";
const job = (id: string) => db.prisma.job.findUniqueOrThrow({ where: { id: BigInt(id) } });
const jobsSnapshot = () => db.prisma.job.findMany({ orderBy: { id: "asc" } });
const audits = () => db.prisma.adminAudit.findMany({ orderBy: { id: "asc" } });

function coded(message: string, code = "E_UPSTREAM") {
  return Object.assign(new Error(message), { code });
}

describe("filters", () => {
  it("reject bad input with a message naming each field", () => {
    const bad = (input: unknown) => {
      try {
        parseDeadLetterFilter(input);
      } catch (err) {
        expect(err).toBeInstanceOf(InvalidDeadLetterFilterError);
        return (err as Error).message;
      }
      throw new Error("accepted");
    };
    expect(bad({ fingerprint: "xyz" })).toMatch(/fingerprint: must be 16 hex digits/);
    expect(bad({ ids: ["12", "abc"] })).toMatch(/ids\.1: must be a job id/);
    expect(bad({ ids: [] })).toMatch(/ids: must list at least one id/);
    expect(bad({ from: "yesterday-ish" })).toMatch(/from: not a date/);
    expect(bad({ from: "2026-02-01", to: "2026-01-01" })).toMatch(/from: from must be before to/);
    expect(bad({ stage: "parse" })).toMatch(/unrecognized key.*stage/i);
    expect(bad({ queue: "" })).toMatch(/queue:/);
    expect(bad({ fingerprint: "zz", queue: 3 })).toMatch(/queue: .*; fingerprint: /);
  });

  it("accept ids as numbers or text and dates as text", () => {
    const f = parseDeadLetterFilter({
      ids: [7, "8"],
      fingerprint: "ABCDEF0123456789",
      from: "2026-01-01T00:00:00Z",
    });
    expect(f).toEqual({
      ids: ["7", "8"],
      fingerprint: "abcdef0123456789",
      from: new Date("2026-01-01T00:00:00Z"),
    });
  });

  it("are validated by every operation", async () => {
    await expect(listDeadLetters(db, { fingerprint: "nope" })).rejects.toThrow(
      InvalidDeadLetterFilterError,
    );
    await expect(deadLetterStats(db, { ids: ["-1"] })).rejects.toThrow(/ids\.0/);
    await expect(requeueDeadLetters(db, { actor, filter: { code: "" } })).rejects.toThrow(/code/);
    expect(await audits()).toEqual([]);
  });
});

describe("list and show", () => {
  it("lists by each criterion, newest first, with the full last error, paged by id", async () => {
    const a = await makeDeadLetters(db, "fetch", [
      { key: "a1", sourceId: "src-a", error: coded("503 for item 1"), host: "a.example" },
      { key: "a2", sourceId: "src-a", error: coded("503 for item 2"), host: "a.example" },
    ]);
    const b = await makeDeadLetters(db, "parse", [
      { key: "b1", sourceId: "src-b", payload: { url: "http://b/1" }, error: new TypeError("bad") },
    ]);
    const all = await listDeadLetters(db);
    expect(all.items.map((d) => d.id)).toEqual([b[0], a[1], a[0]]);
    expect(all.nextCursor).toBeNull();
    const parse = all.items[0];
    expect(parse).toMatchObject({
      stage: "parse",
      key: "b1",
      sourceId: "src-b",
      payload: { url: "http://b/1" },
      attempts: 1,
      maxAttempts: 1,
      requeues: 0,
      state: "dead",
      lastError: { code: "TypeError", message: "bad" },
    });
    expect(parse?.lastError?.stack).toContain("deadLetters.test.ts");
    expect(parse?.fingerprint).toMatch(/^[0-9a-f]{16}$/);
    expect(parse?.deadAt).toBeInstanceOf(Date);
    expect(parse?.firstFailedAt).toBeInstanceOf(Date);
    expect(parse?.deadForSeconds).toBeGreaterThanOrEqual(0);

    const ids = async (f: Parameters<typeof listDeadLetters>[1]) =>
      (await listDeadLetters(db, f)).items.map((d) => d.id);
    expect(await ids({ queue: "fetch" })).toEqual([a[1], a[0]]);
    expect(await ids({ sourceId: "src-b" })).toEqual(b);
    expect(await ids({ code: "E_UPSTREAM" })).toEqual([a[1], a[0]]);
    const fp = (await job(a[0] as string)).fingerprint ?? "";
    expect(await ids({ fingerprint: fp })).toEqual([a[1], a[0]]); // numbers masked: one cause
    expect(await ids({ ids: [a[0] as string, b[0] as string] })).toEqual([b[0], a[0]]);
    expect(await ids({ from: new Date(Date.now() + 60_000) })).toEqual([]);
    expect(await ids({ to: new Date(Date.now() + 60_000), queue: "parse" })).toEqual(b);

    const page1 = await listDeadLetters(db, {}, { limit: 2 });
    expect(page1.items.map((d) => d.id)).toEqual([b[0], a[1]]);
    const page2 = await listDeadLetters(db, {}, { limit: 2, cursor: page1.nextCursor });
    expect(page2.items.map((d) => d.id)).toEqual([a[0]]);
    expect(page2.nextCursor).toBeNull();
    await expect(listDeadLetters(db, {}, { limit: 0 })).rejects.toThrow(/limit/);
  });

  it("shows one with its whole history, and nothing for a live job", async () => {
    const [id] = await enqueue(db, "fetch", [{ key: "h", maxAttempts: 2 }]);
    for (let attempt = 1; attempt <= 2; attempt++) {
      await db.prisma.$executeRaw`UPDATE jobs SET run_at = now() WHERE id = ${id}::bigint`;
      const [c] = await claim(db, "fetch", "w1", 1, 30);
      if (!c) throw new Error("not claimed");
      const { fail } = await import("../fail");
      const { toJobError } = await import("../jobError");
      await fail(db, "w1", c, toJobError(coded(`attempt ${attempt} failed`)));
    }
    const detail = await getDeadLetter(db, id as string);
    expect(detail?.state).toBe("dead");
    expect(detail?.failures.map((f) => [f.attempt, f.kind, f.workerId])).toEqual([
      [1, "error", "w1"],
      [2, "error", "w1"],
    ]);
    expect(detail?.failures[1]?.error).toMatchObject({ message: "attempt 2 failed" });
    // Plain claims are counted per minute (queue_claim_stats), not kept per job: the attempts
    // are the failures above; lease events are for expiries, reclaims and releases.
    expect(detail?.leaseEvents).toEqual([]);
    const [live] = await enqueue(db, "fetch", [{ key: "live" }]);
    expect(await getDeadLetter(db, live as string)).toBeNull();
    expect(await getDeadLetter(db, "999999")).toBeNull();
    await expect(getDeadLetter(db, "x")).rejects.toThrow(/bad id/);
  });
});

describe("stats", () => {
  it("counts depth and oldest age overall and per stage, groups by fingerprint, not archived", async () => {
    await makeDeadLetters(db, "fetch", [
      { error: coded("timeout after 3012 ms") },
      { error: coded("timeout after 2987 ms") },
      { error: coded("timeout after 1 ms") },
    ]);
    const [parse] = await makeDeadLetters(db, "parse", [{ error: new TypeError("bad xml") }]);
    const [archived] = await makeDeadLetters(db, "parse", [{ error: new TypeError("bad xml") }]);
    await db.prisma.$executeRaw`
      UPDATE jobs SET dead_at = now() - interval '2 hours' WHERE id = ${parse}::bigint`;
    await db.prisma.$executeRaw`
      UPDATE jobs SET state = 'archived', archived_at = now(), dead_at = now() - interval '9 days'
      WHERE id = ${archived}::bigint`;
    const stats = await deadLetterStats(db);
    expect(stats.depth).toBe(4);
    expect(stats.oldestAgeSeconds).toBeGreaterThanOrEqual(7200);
    expect(stats.oldestAgeSeconds).toBeLessThan(7300);
    expect(stats.byStage.map((s) => [s.stage, s.depth])).toEqual([
      ["fetch", 3],
      ["parse", 1],
    ]);
    expect(stats.byStage.find((s) => s.stage === "fetch")?.oldestAgeSeconds).toBeLessThan(60);
    expect(stats.groups).toHaveLength(2);
    expect(stats.groups[0]).toMatchObject({
      stage: "fetch",
      code: "E_UPSTREAM",
      count: 3,
      sampleMessage: "timeout after 1 ms",
    });
    expect(stats.groups[0]?.firstSeen?.getTime()).toBeLessThanOrEqual(
      stats.groups[0]?.lastSeen?.getTime() ?? 0,
    );
    expect(stats.groups[1]).toMatchObject({ stage: "parse", code: "TypeError", count: 1 });
    expect((await deadLetterStats(db, { queue: "parse" })).depth).toBe(1);
    const empty = await deadLetterStats(db, { queue: "none" });
    expect(empty).toEqual({ depth: 0, oldestAgeSeconds: null, byStage: [], groups: [] });
  });
});

describe("requeue", () => {
  it("a dry run counts, refuses with reasons, supersedes, changes nothing, and is audited", async () => {
    await makeDeadLetters(db, "fetch", [
      { key: "k1", sourceId: "src-closed" },
      { key: "k2", sourceId: "src-open" },
      { key: "k3" },
    ]);
    await enqueue(db, "fetch", [{ key: "k3" }]); // k3 is live again
    const before = await jobsSnapshot();
    const result = await requeueDeadLetters(db, {
      actor,
      filter: { queue: "fetch" },
      dryRun: true,
    });
    expect(result).toMatchObject({
      dryRun: true,
      matched: 3,
      requeued: 1,
      refused: { [REFUSALS.breakerOpen]: 1 },
      superseded: 1, // k3: the live job holds its key
      capped: 0,
      moreMatched: false,
    });
    expect(await jobsSnapshot()).toEqual(before);
    const [row] = await audits();
    expect(row).toMatchObject({
      actor,
      action: AUDIT_ACTIONS.requeue,
      dryRun: true,
      affected: 2,
      target: { filter: { queue: "fetch" }, all: false, cap: 10_000, force: false },
      detail: {
        matched: 3,
        refused: { "breaker open": 1 },
        cap: 10_000,
        capped: 0,
      },
    });
  });

  it("puts a dead letter back with its id and history, fresh attempts, and wakes workers", async () => {
    const [id] = await makeDeadLetters(db, "fetch", [
      { key: "k", sourceId: "src-closed", error: coded("boom 1") },
    ]);
    const dead = await job(id as string);
    const heard: string[] = [];
    const unlisten = await db.listen("wirewatch_jobs", (q) => heard.push(q));
    const result = await requeueDeadLetter(db, id as string, { actor });
    expect(result).toMatchObject({
      dryRun: false,
      matched: 1,
      requeued: 1,
      ids: [id],
      refused: {},
    });
    const row = await job(id as string);
    expect(row).toMatchObject({
      state: "ready",
      attempts: 0,
      requeues: 1,
      deadAt: null,
      lastError: dead.lastError, // kept: what it last died of
      fingerprint: dead.fingerprint,
      firstFailedAt: dead.firstFailedAt,
    });
    expect(await db.prisma.jobFailure.count({ where: { jobId: BigInt(id as string) } })).toBe(1);
    expect((await listDeadLetters(db)).items).toEqual([]);
    await new Promise((r) => setTimeout(r, 200));
    await unlisten();
    expect(heard).toContain("fetch");

    // It runs again from attempt 1; failing again adds to the same history.
    const [c] = await claim(db, "fetch", "w2", 1, 30);
    expect(c?.lease).toMatchObject({ id, attempt: 1 });
    const { fail } = await import("../fail");
    const { toJobError } = await import("../jobError");
    if (!c) throw new Error("not claimed");
    expect(await fail(db, "w2", c, toJobError(coded("boom 2")))).toBe("dead");
    const again = await getDeadLetter(db, id as string);
    expect(again?.requeues).toBe(1);
    expect(again?.failures.map((f) => [f.attempt, f.error.message])).toEqual([
      [1, "boom 1"],
      [1, "boom 2"],
    ]);
    const [audit] = await audits();
    expect(audit).toMatchObject({ dryRun: false, affected: 1, target: { filter: { ids: [id] } } });
  });

  it("refuses a source whose breaker is open unless forced", async () => {
    const [id] = await makeDeadLetters(db, "fetch", [{ sourceId: "src-open" }]);
    const refused = await requeueDeadLetter(db, id as string, { actor });
    expect(refused).toMatchObject({ requeued: 0, refused: { "breaker open": 1 } });
    expect((await job(id as string)).state).toBe("dead");
    const forced = await requeueDeadLetter(db, id as string, { actor, force: true });
    expect(forced).toMatchObject({ requeued: 1, refused: {} });
    expect((await job(id as string)).state).toBe("ready");
    const rows = await audits();
    expect(rows.map((r) => [r.affected, (r.target as { force: boolean }).force])).toEqual([
      [0, false],
      [1, true],
    ]);
  });

  it("skips a key that is live, and requeues only the newest of dead letters sharing a key", async () => {
    const [old, newer, other] = await makeDeadLetters(db, "fetch", [
      { key: "same" },
      { key: "same" },
      { key: "other" },
    ]);
    const result = await requeueDeadLetters(db, { actor, filter: { queue: "fetch" } });
    expect(result).toMatchObject({ requeued: 2, refused: { "already queued": 1 } });
    expect(result.ids.sort()).toEqual([newer, other].sort());
    expect((await job(old as string)).state).toBe("dead");
    // Once the live one is done, the older can go.
    const claimed = await claim(db, "fetch", "w", 10, 30);
    await complete(
      db,
      claimed.map((c) => c.lease),
    );
    expect(await requeueDeadLetter(db, old as string, { actor })).toMatchObject({ requeued: 1 });
  });

  it("a dead letter whose key a live job holds is resolved by it: archived, audited, counted no more", async () => {
    // The frontier's recurring fetch job died; the scheduler made a new one with the same key.
    const [dead, other] = await makeDeadLetters(db, "fetch", [
      { key: "fetch:src-a:A", sourceId: "src-open" },
      { key: "plain" },
    ]);
    const [live] = await enqueue(db, "fetch", [{ key: "fetch:src-a:A", sourceId: "src-open" }]);
    const dry = await requeueDeadLetters(db, { actor, filter: { queue: "fetch" }, dryRun: true });
    expect(dry).toMatchObject({
      matched: 2,
      requeued: 1,
      superseded: 1,
      supersededBy: { [dead as string]: live },
      refused: {},
    });
    expect((await job(dead as string)).state).toBe("dead");

    const result = await requeueDeadLetter(db, dead as string, { actor });
    expect(result).toMatchObject({
      matched: 1,
      requeued: 0,
      superseded: 1,
      supersededBy: { [dead as string]: live },
      refused: {},
    });
    expect(await job(dead as string)).toMatchObject({ state: "archived", requeues: 0 });
    expect(await job(live as string)).toMatchObject({ state: "ready" });
    expect((await deadLetterStats(db)).depth).toBe(1); // only `other` is left
    expect((await listDeadLetters(db)).items.map((d) => d.id)).toEqual([other]);
    const [, audit] = await audits();
    expect(audit).toMatchObject({
      action: AUDIT_ACTIONS.requeue,
      dryRun: false,
      affected: 1,
      detail: {
        superseded: [{ id: dead, by: live, reason: `superseded by job ${live}` }],
      },
    });
    // Asked again: nothing left to do, and nothing refused.
    expect(await requeueDeadLetter(db, dead as string, { actor })).toMatchObject({
      matched: 0,
      superseded: 0,
    });
  });

  it("spreads requeued jobs at the rate, caps a call and says more matched", async () => {
    const ids = await makeDeadLetters(
      db,
      "fetch",
      Array.from({ length: 25 }, (_, i) => ({ key: `r${i}` })),
    );
    const dry = await requeueDeadLetters(db, { actor, filter: { queue: "fetch" }, dryRun: true });
    expect(dry).toMatchObject({ matched: 25, requeued: 25, capped: 0 });
    const result = await requeueDeadLetters(db, {
      actor,
      filter: { queue: "fetch" },
      cap: 10,
      ratePerSecond: 5,
    });
    expect(result).toMatchObject({
      matched: 25,
      requeued: 10,
      capped: 15,
      moreMatched: true,
      spreadSeconds: 1.8,
    });
    expect(result.ids).toEqual(ids.slice(0, 10)); // oldest dead first
    const rows = await db.prisma.$queryRaw<{ id: string; offset_ms: number }[]>`
      SELECT id::text AS id,
             round(extract(epoch FROM run_at - min(run_at) OVER ()) * 1000)::int AS offset_ms
      FROM jobs WHERE state = 'ready' ORDER BY run_at, id`;
    expect(rows.map((r) => r.id)).toEqual(ids.slice(0, 10));
    expect(rows.map((r) => r.offset_ms)).toEqual(Array.from({ length: 10 }, (_, i) => i * 200));
    const enq = await db.prisma.$queryRaw<{ same: boolean }[]>`
      SELECT bool_and(enqueued_at = run_at) AS same FROM jobs WHERE state = 'ready'`;
    expect(enq[0]?.same).toBe(true);
    const audit = (await audits()).at(-1);
    expect(audit).toMatchObject({
      affected: 10,
      detail: { matched: 25, cap: 10, capped: 15, ratePerSecond: 5 },
    });
    expect((await deadLetterStats(db)).depth).toBe(15);
  });

  it("refuses to act on everything without all: true, without an actor, or with a bad rate", async () => {
    await makeDeadLetters(db, "fetch", [{}, {}]);
    await expect(requeueDeadLetters(db, { actor })).rejects.toThrow(SelectionError);
    await expect(requeueDeadLetters(db, { actor, filter: {} })).rejects.toThrow(
      /no filter or ids given; pass all: true/,
    );
    await expect(discardDeadLetters(db, { actor })).rejects.toThrow(/pass all: true/);
    await expect(requeueDeadLetters(db, { actor: " ", all: true })).rejects.toThrow(/actor/);
    await expect(requeueDeadLetters(db, { actor, all: true, ratePerSecond: 0 })).rejects.toThrow(
      /ratePerSecond/,
    );
    await expect(requeueDeadLetters(db, { actor, all: true, cap: 0 })).rejects.toThrow(/cap/);
    expect(await audits()).toEqual([]);
    expect(await requeueDeadLetters(db, { actor, all: true })).toMatchObject({ requeued: 2 });
    expect((await audits())[0]?.target).toMatchObject({ filter: {}, all: true });
  });
});

describe("discard", () => {
  it("archives (a dry run first), keeps the rows and their history, and audits both", async () => {
    const ids = await makeDeadLetters(db, "fetch", [{}, {}, {}]);
    const before = await jobsSnapshot();
    const dry = await discardDeadLetters(db, {
      actor,
      filter: { ids: ids.slice(0, 2) },
      dryRun: true,
    });
    expect(dry).toMatchObject({ dryRun: true, matched: 2, discarded: 2, ids: ids.slice(0, 2) });
    expect(await jobsSnapshot()).toEqual(before);
    const done = await discardDeadLetters(db, { actor, filter: { ids: ids.slice(0, 2) } });
    expect(done).toMatchObject({ dryRun: false, discarded: 2, changedMeanwhile: 0 });
    for (const id of ids.slice(0, 2)) {
      const row = await job(id);
      expect(row.state).toBe("archived");
      expect(row.archivedAt).toBeInstanceOf(Date);
      expect(row.lastError).not.toBeNull();
    }
    expect(await db.prisma.jobFailure.count()).toBe(3);
    expect((await listDeadLetters(db)).items.map((d) => d.id)).toEqual([ids[2]]);
    expect((await deadLetterStats(db)).depth).toBe(1);
    expect((await getDeadLetter(db, ids[0] as string))?.state).toBe("archived");
    // Archived ones are out of reach of requeue and discard.
    expect(await requeueDeadLetter(db, ids[0] as string, { actor })).toMatchObject({
      matched: 0,
      requeued: 0,
    });
    const rows = await listDeadLetterAudit(db);
    expect(rows.map((r) => [r.action, r.dryRun, r.affected])).toEqual([
      [AUDIT_ACTIONS.requeue, false, 0],
      [AUDIT_ACTIONS.discard, false, 2],
      [AUDIT_ACTIONS.discard, true, 2],
    ]);
  });

  it("caps a call", async () => {
    await makeDeadLetters(db, "fetch", [{}, {}, {}]);
    expect(await discardDeadLetters(db, { actor, all: true, cap: 2 })).toMatchObject({
      discarded: 2,
      capped: 1,
      moreMatched: true,
    });
    expect((await deadLetterStats(db)).depth).toBe(1);
  });
});

describe.skipIf(!requireRealPostgres("concurrent requeues"))(
  "concurrency (real PostgreSQL)",
  () => {
    it("two concurrent requeues of the same dead letter make exactly one job", async () => {
      const other = await db.connectAnother();
      for (let round = 0; round < 15; round++) {
        const [id] = await makeDeadLetters(db, "race", [{ key: `race-${round}` }]);
        const [a, b] = await Promise.all([
          requeueDeadLetter(db, id as string, { actor: "a" }),
          requeueDeadLetter(other, id as string, { actor: "b" }),
        ]);
        expect((a?.requeued ?? 0) + (b?.requeued ?? 0)).toBe(1);
        const row = await job(id as string);
        expect(row).toMatchObject({ state: "ready", requeues: 1 });
        const live = await db.prisma.job.count({ where: { queue: "race", state: "ready" } });
        expect(live).toBe(1);
        const claimed = await claim(db, "race", "w", 10, 30);
        expect(claimed).toHaveLength(1);
        await complete(
          db,
          claimed.map((c) => c.lease),
        );
      }
      const rows = await audits();
      expect(rows).toHaveLength(30);
      expect(rows.reduce((n, r) => n + r.affected, 0)).toBe(15);
    });

    it("a key that becomes live while the requeue runs is superseded by that job, not an error", async () => {
      const [dead] = await makeDeadLetters(db, "race", [{ key: "contended" }]);
      const other = await db.connectAnother();
      let release: () => void = () => {};
      const held = new Promise<void>((r) => {
        release = r;
      });
      let inserted: () => void = () => {};
      const insertedP = new Promise<void>((r) => {
        inserted = r;
      });
      // Another client enqueues the same key in a transaction it has not committed yet: the
      // requeue's UPDATE waits on that index entry, then the unique index refuses it.
      const tx = other.prisma.$transaction(
        async (t) => {
          await t.$executeRaw`INSERT INTO jobs (queue, key) VALUES ('race', 'contended')`;
          inserted();
          await held;
        },
        { timeout: 30_000 },
      );
      await insertedP;
      const requeue = requeueDeadLetter(db, dead as string, { actor });
      await new Promise((r) => setTimeout(r, 300));
      release();
      await tx;
      const result = await requeue;
      expect(result).toMatchObject({ requeued: 0, superseded: 1, refused: {} });
      expect((await job(dead as string)).state).toBe("archived");
      expect(await audits()).toHaveLength(1);
    });
  },
);
