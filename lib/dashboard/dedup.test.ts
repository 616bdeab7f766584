import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { Database } from "@/lib/db";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { DEDUP_SEED, dedupKey, seedDedupRows } from "@/lib/testing/dedupSeed";
import {
  BadDedupCursorError,
  DECISION_KINDS,
  dedupOverview,
  getCluster,
  itemDedup,
  itemTitles,
  listClusters,
  readEvidence,
  WINDOW_TTL_MS,
} from "./dedup";

let db: TestDatabase;
let clusters: string[];
const now = new Date();
const k = DEDUP_SEED.keys;

beforeAll(async () => {
  db = await createTestDatabase();
  ({ clusters } = await seedDedupRows(db, now));
});

afterAll(async () => {
  await db?.drop();
});

describe("dedupOverview", () => {
  it("counts the window's decisions by kind, leaving out removed items and older decisions", async () => {
    const v = await dedupOverview(db, { now, hours: 24 });
    expect(v.decisions.totals).toEqual(DEDUP_SEED.day);
    expect(v.decisions.decided).toBe(
      Object.values(DEDUP_SEED.day).reduce((a: number, b) => a + b, 0),
    );
    // The buckets add up to the totals, one bar per 20 minutes over 24 hours, oldest first.
    expect(v.bucketSeconds).toBe(1200);
    expect(v.decisions.buckets).toHaveLength(72);
    const ts = v.decisions.buckets.map((b) => b.t);
    expect([...ts].sort((a, b) => a - b)).toEqual(ts);
    expect(ts.at(-1)).toBeLessThanOrEqual(now.getTime());
    expect(now.getTime() - (ts.at(-1) as number)).toBeLessThan(1200_000);
    for (const kind of DECISION_KINDS) {
      expect(
        v.decisions.buckets.reduce((a, b) => a + b[kind], 0),
        kind,
      ).toBe(DEDUP_SEED.day[kind]);
    }
  });

  it("narrows to a 6-hour window with 5-minute buckets; a window with nothing is all zeros", async () => {
    const six = await dedupOverview(db, { now, hours: 6 });
    expect(six.bucketSeconds).toBe(300);
    expect(six.decisions.buckets).toHaveLength(72);
    expect(six.decisions.totals).toEqual(DEDUP_SEED.day);
    const later = await dedupOverview(db, {
      now: new Date(now.getTime() + 7 * 3_600_000),
      hours: 6,
    });
    expect(later.decisions.decided).toBe(0);
    expect(later.latency.p50).toBeNull();
    expect(later.latency.buckets.every((b) => b.n === 0 && b.p95 === null)).toBe(true);
  });

  it("gives decision latency percentiles over the window and per bucket", async () => {
    const v = await dedupOverview(db, { now, hours: 24 });
    // 12 decisions with a duration in the day: 0.2 … 3.0 ms; median of the 12 is 1.05.
    expect(v.latency.p50).toBeCloseTo(1.05, 5);
    expect(v.latency.p99).toBeGreaterThan(2.8);
    expect(v.latency.p99).toBeLessThanOrEqual(3.0);
    expect(v.latency.buckets.reduce((a, b) => a + b.n, 0)).toBe(12);
  });

  it("gives the duplicate rate per source, all time and for the last day", async () => {
    const v = await dedupOverview(db, { now, hours: 24 });
    expect(v.sources.map((s) => s.sourceId)).toEqual(["daily", "tribune", "wire"]);
    for (const s of v.sources) {
      expect(s).toMatchObject(
        DEDUP_SEED.perSource[s.sourceId as keyof typeof DEDUP_SEED.perSource],
      );
    }
    expect(v.sources[0]?.sourceName).toBe("The Daily");
  });

  it("counts live clusters and pending reviews; lists the largest and the newest clusters", async () => {
    const v = await dedupOverview(db, { now, hours: 24 });
    expect(v.clusters.live).toBe(DEDUP_SEED.liveClusters);
    const largest = await listClusters(db, { order: "largest" });
    expect(largest.clusters.map((c) => c.members)).toEqual([3, 2]);
    expect(largest.clusters[0]?.canonicalTitle).toBe(DEDUP_SEED.titles.canonical);
    const newest = await listClusters(db, { order: "newest" });
    expect(newest.clusters.map((c) => c.id)).toEqual([clusters[1], clusters[0]]);
    expect(v.reviews.pending).toBe(DEDUP_SEED.pendingReviews);
    expect(v.reviews.oldestPendingAt).toBe(new Date(now.getTime() - 10 * 60_000).toISOString());
    expect(v.lastDecisionAt).toBe(new Date(now.getTime() - 5 * 60_000).toISOString());
  });

  it("reuses a window's plots for a while but keeps the counts fresh; `now` reads afresh", async () => {
    const other = await createTestDatabase();
    // The clock stands still between the requests (Date only: the read's cost is still timed).
    const t0 = Date.now();
    vi.useFakeTimers({ now: t0, toFake: ["Date"] });
    try {
      await seedDedupRows(other);
      const first = await dedupOverview(other, { hours: 6 });
      expect(first.decisions.decided).toBe(12);
      // A decision and a pending review arrive after the first answer.
      await other.prisma.$executeRaw`
        UPDATE dedup_items SET outcome = 'duplicate', stage = 'near',
                               decided_at = ${new Date(t0 - 1000)}
        WHERE entry_key = ${k.old}`;
      await other.prisma.$executeRaw`
        UPDATE dedup_reviews SET state = 'pending' WHERE state = 'rejected'`;
      const cached = await dedupOverview(other, { hours: 6 });
      expect(cached.decisions).toEqual(first.decisions);
      expect(cached.reviews.pending).toBe(DEDUP_SEED.pendingReviews + 1);
      // Another window is its own entry; an explicit instant never reads the cache.
      expect((await dedupOverview(other, { hours: 24 })).decisions.decided).toBe(13);
      expect((await dedupOverview(other, { hours: 6, now: new Date() })).decisions.decided).toBe(
        13,
      );
      // Past the longest reuse the window is read again.
      vi.setSystemTime(t0 + WINDOW_TTL_MS[6] + 1000);
      expect((await dedupOverview(other, { hours: 6 })).decisions.totals.near).toBe(2);
    } finally {
      vi.useRealTimers();
      await other.drop();
    }
  });

  it("shares one window read between requests made at once, and keeps no failed read", async () => {
    const other = await createTestDatabase();
    try {
      await seedDedupRows(other);
      const [a, b] = await Promise.all([
        dedupOverview(other, { hours: 72 }),
        dedupOverview(other, { hours: 72 }),
      ]);
      expect(a.decisions).toBe(b.decisions);
      // A connection that fails once: the failure reaches the caller and is not reused.
      let fail = true;
      const prisma = new Proxy(other.prisma, {
        get(target, key) {
          if (key === "$queryRaw" && fail)
            return () => Promise.reject(new Error("connection lost"));
          const v = Reflect.get(target, key);
          return typeof v === "function" ? v.bind(target) : v;
        },
      });
      const flaky = { ...other, prisma } as Database;
      await expect(dedupOverview(flaky, { hours: 6 })).rejects.toThrow("connection lost");
      fail = false;
      expect((await dedupOverview(flaky, { hours: 6 })).decisions.decided).toBe(12);
    } finally {
      await other.drop();
    }
  });

  it("answers an empty database with zeros", async () => {
    const other = await createTestDatabase();
    try {
      const v = await dedupOverview(other, { now, hours: 72 });
      expect(v.decisions.decided).toBe(0);
      expect(v.decisions.buckets).toHaveLength(72);
      expect(v.sources).toEqual([]);
      expect(v.clusters).toEqual({ live: 0 });
      expect(v.reviews).toEqual({ pending: 0, oldestPendingAt: null });
      expect(v.lastDecisionAt).toBeNull();
    } finally {
      await other.drop();
    }
  });
});

describe("listClusters", () => {
  it("pages the largest clusters by members then id, and skips dissolved ones", async () => {
    const first = await listClusters(db, { order: "largest", limit: 1 });
    expect(first.clusters.map((c) => c.id)).toEqual([clusters[0]]);
    expect(first.nextCursor).toBe(`3:${clusters[0]}`);
    const second = await listClusters(db, {
      order: "largest",
      limit: 1,
      cursor: first.nextCursor as string,
    });
    expect(second.clusters.map((c) => c.id)).toEqual([clusters[1]]);
    expect(second.nextCursor).toBeNull();
    const all = await listClusters(db, { order: "newest" });
    expect(all.clusters.map((c) => c.id)).not.toContain(clusters[2]);
  });

  it("refuses a cursor it did not make", async () => {
    for (const cursor of ["", "x", "3", "1:2:3", "-1:2", "9999999999:1", "1;DROP TABLE news"]) {
      await expect(listClusters(db, { order: "largest", cursor }), cursor).rejects.toBeInstanceOf(
        BadDedupCursorError,
      );
    }
    await expect(listClusters(db, { order: "newest", cursor: "3:1" })).rejects.toBeInstanceOf(
      BadDedupCursorError,
    );
  });
});

describe("getCluster", () => {
  it("shows the members side by side, canonical first, with what linked each and the evidence", async () => {
    const c = await getCluster(db, clusters[0] as string);
    expect(c?.cluster).toMatchObject({ members: 3, outlets: 3, canonicalKey: k.canonical });
    expect(c?.members.map((m) => m.entryKey)).toEqual([k.canonical, k.exact, k.near]);
    expect(c?.members[0]).toMatchObject({ canonical: true, linkedBy: null, sourceId: "wire" });
    expect(c?.members[1]?.linkedBy).toMatchObject({
      stage: "exact",
      score: 1,
      matchedKey: k.canonical,
    });
    const near = c?.members[2]?.linkedBy;
    expect(near).toMatchObject({
      stage: "near",
      score: 0.72,
      threshold: 0.5,
      matchedKey: k.exact,
      matchedTitle: DEDUP_SEED.titles.exact,
    });
    expect(near?.evidence).toMatchObject({
      shared: DEDUP_SEED.evidence.shared,
      phrases: DEDUP_SEED.evidence.sharedPhrases,
      onlyHere: ["interest"],
      onlyThere: [],
      distance: 4,
    });
    // The undone link is history, with who ended it and why; the item is no longer a member.
    expect(c?.endedLinks).toEqual([
      expect.objectContaining({ entryKey: k.undone, endedReason: "undone", endedBy: "admin" }),
    ]);
    expect(c?.events.map((e) => e.kind)).toEqual(["left", "joined", "joined", "joined", "created"]);
  });

  it("answers null for a cluster that does not exist", async () => {
    expect(await getCluster(db, "999999")).toBeNull();
  });
});

describe("itemTitles", () => {
  it("gives the headline and source of each known key, and nothing for unknown ones", async () => {
    const t = await itemTitles(db, [k.near, k.near, dedupKey(999), k.url]);
    expect(t).toEqual({
      [k.near]: { title: DEDUP_SEED.titles.near, sourceId: "tribune" },
      [k.url]: { title: "Floods close the northern highway", sourceId: "daily" },
    });
    expect(await itemTitles(db, [])).toEqual({});
  });
});

describe("readEvidence", () => {
  it("reads what it knows, keeps the rest raw, and survives anything jsonb can hold", () => {
    expect(readEvidence(null)).toBeNull();
    expect(readEvidence([1, 2])).toBeNull();
    expect(readEvidence("x")).toBeNull();
    const e = readEvidence({ shared: ["a", 3, null, "b"], onlyB: "not a list", hamming: "2" });
    expect(e).toMatchObject({
      shared: ["a", "b"],
      phrases: [],
      onlyHere: [],
      onlyThere: [],
      distance: null,
    });
    expect(readEvidence({ urlKey: "https://wire.example/x" })).toMatchObject({
      urlKey: "https://wire.example/x",
      contentKey: null,
      shared: [],
    });
    const many = readEvidence({ shared: Array.from({ length: 5000 }, (_, i) => `w${i}`) });
    expect(many?.shared).toHaveLength(200);
  });
});

describe("itemDedup", () => {
  it("gives a linked item its cluster, the other members and what linked it", async () => {
    const d = await itemDedup(db, k.near);
    expect(d).toMatchObject({ outcome: "duplicate", stage: "near", pendingReviews: 0 });
    expect(d?.cluster).toMatchObject({ id: clusters[0], canonicalKey: k.canonical, members: 3 });
    expect(d?.cluster?.others.map((o) => [o.entryKey, o.canonical])).toEqual([
      [k.canonical, true],
      [k.exact, false],
    ]);
    expect(d?.link).toMatchObject({
      stage: "near",
      matchedKey: k.exact,
      score: 0.72,
      threshold: 0.5,
    });
  });

  it("gives the canonical item its cluster and no link; a review item its pending pair", async () => {
    const c = await itemDedup(db, k.canonical);
    expect(c?.link).toBeNull();
    expect(c?.cluster?.others.map((o) => o.entryKey)).toEqual([k.exact, k.near]);
    const r = await itemDedup(db, k.reviewA);
    expect(r).toMatchObject({ outcome: "unique", cluster: null, link: null, pendingReviews: 1 });
  });

  it("answers null for an item the stage has not decided", async () => {
    expect(await itemDedup(db, dedupKey(4242))).toBeNull();
  });
});
