import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { requeueDeadLetters } from "@/workers/queue/deadLetters";
import { makeDeadLetters } from "@/workers/queue/deadLetters/testing";
import { enqueue } from "@/workers/queue/enqueue";
import { FETCH_QUEUE, frontierFingerprint, spreadFirstPolls, syncFrontier } from "./frontier";

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db?.drop());

describe("syncFrontier", () => {
  it("deletes waiting jobs of collectors it no longer wants, but never a requeued dead letter", async () => {
    const [dead] = await makeDeadLetters(db, FETCH_QUEUE, [
      { key: "gone-src/probe", sourceId: "gone-src", payload: { sourceId: "gone-src" } },
    ]);
    await enqueue(db, FETCH_QUEUE, [{ key: "gone-src/A", sourceId: "gone-src" }]);
    const requeued = await requeueDeadLetters(db, {
      actor: "admin",
      filter: { ids: [dead as string] },
    });
    expect(requeued.requeued).toBe(1);
    await syncFrontier(db);
    const left = await db.prisma.job.findMany({ where: { queue: FETCH_QUEUE } });
    // The admin asked for that run: it happens (the fetch stage ends it, its source not wanted),
    // rather than the requeue vanishing unrun.
    expect(left.map((j) => [j.key, j.state])).toEqual([["gone-src/probe", "ready"]]);
  });
});

describe("spreadFirstPolls", () => {
  const jobs = (n: number, host = (i: number) => `h${Math.floor(i / 100)}`) =>
    Array.from({ length: n }, (_, i) => ({
      key: `src-${i}/A`,
      sourceId: `src-${i}`,
      payload: { host: host(i) },
    }));
  const every = (n: number, seconds: number) =>
    new Map(Array.from({ length: n }, (_, i) => [`src-${i}`, seconds]));

  it("spreads 100,000 new sources evenly over their interval, one host's feeds apart", () => {
    const spread = spreadFirstPolls(jobs(100_000), new Set(), every(100_000, 300));
    const delays = spread.map((j) => j.delaySeconds as number);
    expect(Math.min(...delays)).toBe(0);
    expect(Math.max(...delays)).toBeLessThan(300);
    // Every 10 s of the interval gets its thirtieth, give or take a poll.
    const perTen = new Array(30).fill(0);
    for (const d of delays) perTen[Math.floor(d / 10)] += 1;
    for (const n of perTen) expect(Math.abs(n - 100_000 / 30)).toBeLessThanOrEqual(1);
    // A host's 100 feeds land all over the interval, not in one clump.
    const host0 = delays.slice(0, 100);
    expect(Math.max(...host0) - Math.min(...host0)).toBeGreaterThan(250);
  });

  it("polls a handful at once, and leaves live jobs' due times alone", () => {
    const spread = spreadFirstPolls(jobs(12), new Set(["src-3/A"]), every(12, 300));
    expect(spread.find((j) => j.key === "src-3/A")?.delaySeconds).toBeUndefined();
    const fresh = spread.filter((j) => j.key !== "src-3/A");
    for (const j of fresh) expect(j.delaySeconds).toBeLessThan(1);
    // 1,000 come due at 20 a second (50 s), under their 300 s interval.
    const thousand = spreadFirstPolls(jobs(1_000), new Set(), every(1_000, 300));
    expect(Math.max(...thousand.map((j) => j.delaySeconds as number))).toBeCloseTo(49.95, 1);
  });
});

describe("syncFrontier's first polls", () => {
  it("gives 400 sources added at once due times over 20 s, not one herd at second 0", async () => {
    await db.prisma.source.createMany({
      data: Array.from({ length: 400 }, (_, i) => ({
        id: `herd-${i}`,
        name: `herd ${i}`,
        kind: "feed",
        url: `https://herd${i % 4}.example/${i}.xml`,
      })),
    });
    await syncFrontier(db);
    // Measured from the first due time (enqueued_at carries the delay too).
    const [due] = await db.prisma.$queryRaw<{ last: number; early: number }[]>`
      WITH d AS (SELECT extract(epoch FROM run_at - min(run_at) OVER ())::float AS s
                 FROM jobs WHERE key LIKE 'herd-%')
      SELECT max(s) AS last, count(*) FILTER (WHERE s < 1)::int AS early FROM d`;
    expect(due?.last).toBeGreaterThan(19);
    expect(due?.last).toBeLessThan(20);
    expect(due?.early).toBeLessThanOrEqual(21);
    await db.prisma.source.deleteMany({ where: { id: { startsWith: "herd-" } } });
    await syncFrontier(db);
  });
});

describe("frontierFingerprint", () => {
  it("changes when a source is added, switched off by state, or a frontier job goes", async () => {
    const before = await frontierFingerprint(db);
    expect(await frontierFingerprint(db)).toBe(before);
    await db.prisma.source.create({
      data: { id: "fp-src", name: "fp", kind: "feed", url: "https://fp.example/feed.xml" },
    });
    const added = await frontierFingerprint(db);
    expect(added).not.toBe(before);
    await syncFrontier(db);
    const synced = await frontierFingerprint(db);
    expect(synced).not.toBe(added);
    await db.prisma.sourceState.create({
      data: { sourceId: "fp-src", disabledReason: "paused", disabledAt: new Date() },
    });
    const paused = await frontierFingerprint(db);
    expect(paused).not.toBe(synced);
    // An edit that leaves updated_at alone (SQL by hand) shows too.
    await db.prisma
      .$executeRaw`UPDATE sources SET collectors = ARRAY['A', 'B'] WHERE id = 'fp-src'`;
    expect(await frontierFingerprint(db)).not.toBe(paused);
    await db.prisma.$executeRaw`UPDATE sources SET collectors = ARRAY['A'] WHERE id = 'fp-src'`;
    expect(await frontierFingerprint(db)).toBe(paused);
    await db.prisma.job.deleteMany({ where: { key: "fp-src/A" } });
    expect(await frontierFingerprint(db)).not.toBe(paused);
  });
});
