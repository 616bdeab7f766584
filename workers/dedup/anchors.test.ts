import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { parseMsrp } from "@/bench/msrp";
import {
  analyze,
  anchors as anchorsOf,
  DEFAULT_THRESHOLDS,
  type DedupThresholds,
  hamming,
  type ItemKeys,
  itemKeys,
  retrievable,
  toSigned64,
} from "@/lib/dedup";
import { Prisma } from "@/lib/generated/prisma/client";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { anchorCandidates, anchorQuery, writeAnchors } from "./anchors";
import { NEAR_CANDIDATES, nearCandidates, type Probe } from "./lookup";

let db: TestDatabase;
const T = DEFAULT_THRESHOLDS;
const t0 = new Date("2026-12-01T08:00:00Z");
const at = (hours: number) => new Date(t0.getTime() + hours * 3_600_000);
const NO_KEYS: ItemKeys = { urlKey: null, contentKey: null, simhash: null, bands: null };

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db?.drop());
beforeEach(async () => {
  await db.prisma.$executeRawUnsafe("TRUNCATE dedup_items, dedup_anchors, dedup_reviews");
});

/** A dedup_items row as the stage leaves it, with its anchors. */
async function item(
  entryKey: string,
  firstSeenAt: Date,
  anchors: number[],
  o: { live?: boolean; keys?: ItemKeys } = {},
) {
  const k = o.keys ?? NO_KEYS;
  const b = k.bands;
  await db.prisma.$executeRaw`
    INSERT INTO dedup_items (entry_key, version, source_id, first_seen_at, live, simhash,
                             band0, band1, band2, band3, outcome, decision_ms)
    VALUES (${entryKey}, 1, 'wire', ${firstSeenAt}, ${o.live ?? true},
            ${k.simhash === null ? null : toSigned64(k.simhash)}::bigint,
            ${b?.[0] ?? null}::int, ${b?.[1] ?? null}::int, ${b?.[2] ?? null}::int,
            ${b?.[3] ?? null}::int, 'unique', 1)`;
  await db.prisma.$transaction((tx) => writeAnchors(tx, entryKey, firstSeenAt, anchors));
}

const rowsOf = async (entryKey: string) =>
  (
    await db.prisma.$queryRaw<{ anchor: number; first_seen_at: Date }[]>`
      SELECT anchor, first_seen_at FROM dedup_anchors WHERE entry_key = ${entryKey} ORDER BY anchor`
  ).map((r) => ({ anchor: r.anchor, at: r.first_seen_at.toISOString() }));

const probe = (entryKey: string, firstSeenAt: Date, keys: ItemKeys = NO_KEYS): Probe => ({
  entryKey,
  firstSeenAt,
  keys,
});
const find = (p: Probe, anchors: number[], t: DedupThresholds = T) =>
  db.prisma.$transaction((tx) => anchorCandidates(tx, p, anchors, t));
const keysFound = async (p: Probe, anchors: number[], t: DedupThresholds = T) =>
  (await find(p, anchors, t)).map((c) => c.entryKey);
const withRetrieval = (r: Partial<DedupThresholds["retrieval"]>): DedupThresholds => ({
  ...T,
  retrieval: { ...T.retrieval, ...r },
});

describe("writeAnchors", () => {
  it("replaces the item's rows on a rewrite, keeps the ones both versions have", async () => {
    await item("a", t0, [1, 2, 3]);
    await item("other", t0, [1, 2, 3]);
    const r = await db.prisma.$transaction((tx) => writeAnchors(tx, "a", t0, [3, 4, 5]));
    expect(r).toEqual({ removed: 2, added: 2 });
    expect((await rowsOf("a")).map((x) => x.anchor)).toEqual([3, 4, 5]);
    expect((await rowsOf("a"))[0]?.at).toBe(t0.toISOString());
    // Another item's rows are its own.
    expect((await rowsOf("other")).map((x) => x.anchor)).toEqual([1, 2, 3]);
    // The same call again (a job run twice) changes nothing.
    expect(await db.prisma.$transaction((tx) => writeAnchors(tx, "a", t0, [3, 4, 5]))).toEqual({
      removed: 0,
      added: 0,
    });
  });

  it("null or empty clears them (a tombstone, an item left without text)", async () => {
    await item("a", t0, [1, 2]);
    await db.prisma.$transaction((tx) => writeAnchors(tx, "a", t0, null));
    expect(await rowsOf("a")).toEqual([]);
    await db.prisma.$transaction((tx) => writeAnchors(tx, "a", t0, [7]));
    await db.prisma.$transaction((tx) => writeAnchors(tx, "a", t0, []));
    expect(await rowsOf("a")).toEqual([]);
  });

  it("stores a repeated anchor once and the signed 32-bit extremes as they are", async () => {
    await item("a", t0, [5, 5, -(2 ** 31), 2 ** 31 - 1]);
    expect((await rowsOf("a")).map((x) => x.anchor)).toEqual([-(2 ** 31), 5, 2 ** 31 - 1]);
  });

  it("refuses what the column cannot hold, and writes nothing then", async () => {
    await item("a", t0, [1]);
    for (const bad of [2 ** 31, -(2 ** 31) - 1, 1.5, Number.NaN]) {
      await expect(
        db.prisma.$transaction((tx) => writeAnchors(tx, "a", t0, [2, bad])),
      ).rejects.toThrow(RangeError);
    }
    expect((await rowsOf("a")).map((x) => x.anchor)).toEqual([1]);
  });

  it("follows a first_seen_at that was written wrong (the item's own never changes)", async () => {
    await item("a", t0, [1]);
    await db.prisma.$transaction((tx) => writeAnchors(tx, "a", at(1), [1]));
    expect(await rowsOf("a")).toEqual([{ anchor: 1, at: at(1).toISOString() }]);
  });
});

describe("anchorCandidates", () => {
  it("finds items sharing minShared anchors, most shared first, then the earliest", async () => {
    await item("three", at(-3), [1, 2, 3, 9]);
    await item("two-late", at(-1), [1, 2, 8]);
    await item("two-early", at(-2), [2, 3]);
    await item("one", at(-1), [1, 7]);
    const got = await find(probe("me", t0), [1, 2, 3, 4]);
    expect(got.map((c) => [c.entryKey, c.shared])).toEqual([
      ["three", 3],
      ["two-early", 2],
      ["two-late", 2],
    ]);
    // minShared 1 lets the one-anchor item in; minShared 4 nobody.
    expect(await keysFound(probe("me", t0), [1, 2, 3, 4], withRetrieval({ minShared: 1 }))).toEqual(
      ["three", "two-early", "two-late", "one"],
    );
    expect(await keysFound(probe("me", t0), [1, 2, 3, 4], withRetrieval({ minShared: 4 }))).toEqual(
      [],
    );
  });

  it("never the item itself, never an item not live, never a rejected pair", async () => {
    await item("me", t0, [1, 2]);
    await item("gone", at(-1), [1, 2], { live: false });
    await item("rejected", at(-1), [1, 2]);
    await item("pending", at(-1), [1, 2]);
    const review = (other: string, state: string) => db.prisma.$executeRaw`
      INSERT INTO dedup_reviews (entry_key, candidate_key, pair_a, pair_b, stage, score,
                                 threshold, item_version, state)
      VALUES ('me', ${other}, least('me', ${other}), greatest('me', ${other}), 'near', 0.5, 0.55,
              1, ${state})`;
    await review("rejected", "rejected");
    await review("pending", "pending");
    expect(await keysFound(probe("me", t0), [1, 2])).toEqual(["pending"]);
  });

  it("keeps to the window, on both sides of the probe", async () => {
    const w = T.windowHours;
    await item("before-in", at(-w), [1, 2]);
    await item("before-out", at(-w - 1), [1, 2]);
    await item("after-in", at(w), [1, 2]);
    await item("after-out", at(w + 1), [1, 2]);
    expect((await keysFound(probe("me", t0), [1, 2])).sort()).toEqual(["after-in", "before-in"]);
    expect(await keysFound(probe("me", t0), [1, 2], { ...T, windowHours: 1 })).toEqual([]);
  });

  it("the cap bounds what is read: an anchor's older rows past it are not seen", async () => {
    // 40 newer items share anchors 1 and 2 with the probe; the oldest one is the duplicate.
    await item("original", at(-10), [1, 2, 3]);
    for (let i = 0; i < 40; i++) await item(`n${i}`, at(-5 + i / 100), [1, 2]);
    const me = probe("me", t0);
    // cap 64 sees all 41 rows of each anchor: the original shares 3, first.
    expect((await find(me, [1, 2, 3], withRetrieval({ postingCap: 64 })))[0]).toMatchObject({
      entryKey: "original",
      shared: 3,
    });
    // cap 32: anchors 1 and 2 show only the 32 newest; the original is seen by anchor 3 alone,
    // one anchor, below minShared. Never more than NEAR_CANDIDATES either way.
    const capped = await find(me, [1, 2, 3], withRetrieval({ postingCap: 32 }));
    expect(capped.map((c) => c.entryKey)).not.toContain("original");
    expect(capped).toHaveLength(NEAR_CANDIDATES);

    // And the statement reads no more than anchors × cap rows of dedup_anchors.
    const plan = await db.prisma.$queryRaw<{ "QUERY PLAN": unknown }[]>(
      Prisma.sql`EXPLAIN (ANALYZE, FORMAT JSON) ${anchorQuery(me, [1, 2, 3], withRetrieval({ postingCap: 5 }))}`,
    );
    const read = rowsReadFrom(plan[0]?.["QUERY PLAN"], "dedup_anchors");
    expect(read).toBeGreaterThan(0);
    expect(read).toBeLessThanOrEqual(3 * 5);
  });

  it("reads nothing when the lookup is off or the probe has too few anchors", async () => {
    await item("a", at(-1), [1, 2]);
    expect(await find(probe("me", t0), [1, 2], withRetrieval({ anchors: 0 }))).toEqual([]);
    expect(await find(probe("me", t0), [1])).toEqual([]);
    expect(await find(probe("me", t0), [])).toEqual([]);
    // Only the first retrieval.anchors of the probe's list count (what lib/dedup would keep).
    expect(await find(probe("me", t0), [7, 8, 1, 2], withRetrieval({ anchors: 2 }))).toEqual([]);
    await expect(find(probe("me", t0), [1, 2 ** 40])).rejects.toThrow(RangeError);
  });
});

/** Rows the plan's scans of `table` returned in all, over every loop (EXPLAIN ANALYZE JSON). */
function rowsReadFrom(plan: unknown, table: string): number {
  const root = (typeof plan === "string" ? JSON.parse(plan) : plan) as { Plan: unknown }[];
  let n = 0;
  const walk = (node: Record<string, unknown>) => {
    if (node["Relation Name"] === table) {
      n += Number(node["Actual Rows"]) * Number(node["Actual Loops"]);
    }
    for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
  };
  for (const r of root) walk(r.Plan as Record<string, unknown>);
  return n;
}

describe("an MSRP rewrite", () => {
  const file = path.resolve(
    import.meta.dirname,
    "../../../shared/corpora/msrp/msr_paraphrase_train.txt",
  );
  // The corpus's first label-1 pair: one sentence retold ("Amrozi accused his brother, whom he
  // called 'the witness', of deliberately distorting his evidence.").
  const [pair] = parseMsrp(readFileSync(file, "utf8")).filter((p) => p.label);

  it("is found by the anchors where the SimHash bands miss it", async () => {
    if (!pair) throw new Error("no label-1 pair in MSRP");
    const A = analyze(pair.a);
    const B = analyze(pair.b);
    const ka = itemKeys({ title: pair.a }, A);
    const kb = itemKeys({ title: pair.b }, B);
    const sa = ka.simhash as bigint;
    const sb = kb.simhash as bigint;
    expect(retrievable(sa, sb, T) && hamming(sa, sb) <= T.retrieval.maxHamming).toBe(false);

    await item("original", at(-1), anchorsOf(B, T.retrieval.anchors), { keys: kb });
    await item("unrelated", at(-1), anchorsOf(analyze("Shares fell on Tuesday"), 6));
    const me = probe("rewrite", t0, ka);
    const [bands, byAnchors] = await db.prisma.$transaction(async (tx) => [
      await nearCandidates(tx, me, T),
      await anchorCandidates(tx, me, anchorsOf(A, T.retrieval.anchors), T),
    ]);
    expect(bands).toEqual([]);
    expect(byAnchors).toEqual([
      {
        entryKey: "original",
        shared: expect.any(Number),
        distance: hamming(sa, sb),
      },
    ]);
    expect(byAnchors[0]?.shared).toBeGreaterThanOrEqual(T.retrieval.minShared);
  });
});
