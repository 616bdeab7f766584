import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "@/lib/db";
import { createTestDatabase, requireRealPostgres, type TestDatabase } from "@/lib/testing/db";
import { observe } from "@/workers/store";
import {
  DedupItemMissingError,
  elect,
  type LinkDecision,
  linkItem,
  removeItem,
  unlinkItem,
} from "./clusters";

let db: TestDatabase;
let n = 0;
const BASE = Date.parse("2026-12-01T00:00:00Z");

beforeAll(async () => {
  db = await createTestDatabase();
  for (const id of ["s1", "s2", "s3"]) {
    await db.prisma.source.create({ data: { id, name: id, kind: "stream" } });
  }
});
afterAll(() => db?.drop());

/** An item of `source` first seen `minute` minutes after BASE. */
async function item(source: string, minute: number): Promise<string> {
  n++;
  const out = await observe(db, {
    sourceId: source,
    collector: "A",
    origin: "primary",
    guid: `g-${n}`,
    title: `Story ${n}`,
  });
  const key = out.entryKey as string;
  await db.prisma.$executeRaw`
    UPDATE news SET first_seen_at = ${new Date(BASE + minute * 60_000)} WHERE entry_key = ${key}`;
  return key;
}

const decision = (entryKey: string, matchedKey: string, extra: Partial<LinkDecision> = {}) => ({
  entryKey,
  matchedKey,
  stage: "near",
  score: 0.91,
  threshold: 0.85,
  settingsRevision: 1,
  itemVersion: 1,
  evidence: { shared: ["a b c"], onlyA: [], onlyB: ["x"] },
  ...extra,
});

const link = (d: LinkDecision, on: Database = db) =>
  on.prisma.$transaction((tx) => linkItem(tx, d));

async function newsOf(key: string) {
  const [row] = await db.prisma.$queryRaw<
    {
      duplicate_of: string | null;
      dedup_stage: string | null;
      dedup_score: number | null;
      dedup_threshold: number | null;
      dedup_at: Date | null;
    }[]
  >`SELECT duplicate_of, dedup_stage, dedup_score, dedup_threshold, dedup_at FROM news
    WHERE entry_key = ${key}`;
  return row;
}
const liveLinks = (key: string) =>
  db.prisma.$queryRaw<{ id: bigint; duplicate_of: string; matched_key: string; stage: string }[]>`
    SELECT id, duplicate_of, matched_key, stage FROM dedup_links
    WHERE entry_key = ${key} AND ended_at IS NULL`;
const clusterOf = async (id: string) => {
  const [row] = await db.prisma.$queryRaw<
    { canonical_key: string; members: number; outlets: number; dissolved_at: Date | null }[]
  >`SELECT canonical_key, members, outlets, dissolved_at FROM dedup_clusters WHERE id = ${BigInt(id)}`;
  return row;
};
const events = (id: string) =>
  db.prisma.$queryRaw<
    { kind: string; entry_key: string | null; detail: Record<string, unknown> }[]
  >`
    SELECT kind, entry_key, detail FROM dedup_cluster_events WHERE cluster_id = ${BigInt(id)}
    ORDER BY id`;
const itemRow = async (key: string) => {
  const [row] = await db.prisma.$queryRaw<
    { cluster_id: bigint | null; outcome: string; stage: string | null; live: boolean }[]
  >`SELECT cluster_id, outcome, stage, live FROM dedup_items WHERE entry_key = ${key}`;
  return row;
};

describe("linkItem", () => {
  it("makes a cluster around a lone matched item, mirrors news, records created and joined", async () => {
    const a = await item("s1", 0);
    const b = await item("s2", 5);
    const got = await link(decision(b, a));
    expect(got).toMatchObject({ canonicalKey: a, changed: true });
    expect(await newsOf(b)).toMatchObject({
      duplicate_of: a,
      dedup_stage: "near",
      dedup_score: 0.91,
      dedup_threshold: 0.85,
      dedup_at: expect.any(Date),
    });
    expect((await newsOf(a))?.duplicate_of).toBeNull();
    expect(await clusterOf(got.clusterId)).toMatchObject({
      canonical_key: a,
      members: 2,
      outlets: 2,
      dissolved_at: null,
    });
    expect((await events(got.clusterId)).map((e) => [e.kind, e.entry_key])).toEqual([
      ["created", a],
      ["joined", b],
    ]);
    expect(await itemRow(b)).toMatchObject({ outcome: "duplicate", stage: "near" });
  });

  it("is idempotent: the same decision twice writes one link and one joined event", async () => {
    const a = await item("s1", 0);
    const b = await item("s2", 5);
    const first = await link(decision(b, a));
    const again = await link(decision(b, a));
    expect(again).toEqual({ ...first, changed: false });
    expect(await liveLinks(b)).toHaveLength(1);
    const all = await db.prisma.$queryRaw<{ c: number }[]>`
      SELECT count(*)::int AS c FROM dedup_links WHERE entry_key = ${b}`;
    expect(all[0]?.c).toBe(1);
    expect((await events(first.clusterId)).filter((e) => e.kind === "joined")).toHaveLength(1);
  });

  it("joins through a member: duplicate_of is the canonical, matched_key the member", async () => {
    const a = await item("s1", 0);
    const b = await item("s2", 5);
    const c = await item("s2", 9);
    const { clusterId } = await link(decision(b, a));
    const got = await link(decision(c, b, { stage: "exact", score: 1, threshold: 1 }));
    expect(got).toMatchObject({ clusterId, canonicalKey: a });
    expect(await liveLinks(c)).toMatchObject([{ duplicate_of: a, matched_key: b, stage: "exact" }]);
    expect(await clusterOf(clusterId)).toMatchObject({ members: 3, outlets: 2 });
  });

  it("a new decision in the same cluster ends the old row (relinked) and keeps the members", async () => {
    const a = await item("s1", 0);
    const b = await item("s2", 5);
    const c = await item("s3", 9);
    const { clusterId } = await link(decision(b, a));
    await link(decision(c, a));
    const moved = await link(decision(c, b, { itemVersion: 2, score: 0.95 }));
    expect(moved.changed).toBe(true);
    expect(await liveLinks(c)).toMatchObject([{ matched_key: b }]);
    const ended = await db.prisma.$queryRaw<{ ended_reason: string }[]>`
      SELECT ended_reason FROM dedup_links WHERE entry_key = ${c} AND ended_at IS NOT NULL`;
    expect(ended).toEqual([{ ended_reason: "relinked" }]);
    expect(await clusterOf(clusterId)).toMatchObject({ members: 3 });
  });

  it("an entry in another cluster leaves it first; that cluster, down to one, dissolves", async () => {
    const a = await item("s1", 0);
    const b = await item("s2", 5);
    const c = await item("s1", 10);
    const d = await item("s3", 12);
    const one = await link(decision(b, a));
    const two = await link(decision(d, c));
    const moved = await link(decision(b, c));
    expect(moved).toMatchObject({ clusterId: two.clusterId, canonicalKey: c });
    expect(await clusterOf(one.clusterId)).toMatchObject({ dissolved_at: expect.any(Date) });
    expect(await itemRow(a)).toMatchObject({ cluster_id: null, outcome: "unique" });
    expect(await clusterOf(two.clusterId)).toMatchObject({ members: 3, outlets: 3 });
    expect((await events(one.clusterId)).map((e) => e.kind)).toEqual([
      "created",
      "joined",
      "left",
      "dissolved",
    ]);
    expect(await liveLinks(b)).toMatchObject([{ duplicate_of: c }]);
  });

  it("an entry already the canonical of the matched item's cluster stays as it is", async () => {
    const a = await item("s1", 0);
    const b = await item("s2", 5);
    const { clusterId } = await link(decision(b, a));
    const got = await link(decision(a, b));
    expect(got).toMatchObject({ clusterId, canonicalKey: a, changed: false });
    expect(await liveLinks(a)).toEqual([]);
  });

  it("refuses an item linked to itself and a key with no news row, changing nothing", async () => {
    const a = await item("s1", 0);
    await expect(link(decision(a, a))).rejects.toThrow(/cannot duplicate itself/);
    await expect(link(decision(a, "no-such-key"))).rejects.toBeInstanceOf(DedupItemMissingError);
    expect(await itemRow(a)).toBeUndefined();
    expect(await liveLinks(a)).toEqual([]);
  });
});

describe("unlinkItem", () => {
  it("ends the link with why and who, clears news, and a cluster left with one dissolves", async () => {
    const a = await item("s1", 0);
    const b = await item("s2", 5);
    const { clusterId, linkId } = await link(decision(b, a));
    const got = await db.prisma.$transaction((tx) => unlinkItem(tx, b, "undone", "admin"));
    expect(got).toMatchObject({
      clusterId,
      endedLinkId: linkId,
      wasCanonical: false,
      dissolved: true,
    });
    const [ended] = await db.prisma.$queryRaw<{ ended_reason: string; ended_by: string }[]>`
      SELECT ended_reason, ended_by FROM dedup_links WHERE id = ${BigInt(linkId)}`;
    expect(ended).toEqual({ ended_reason: "undone", ended_by: "admin" });
    expect(await newsOf(b)).toMatchObject({
      duplicate_of: null,
      dedup_stage: null,
      dedup_score: null,
    });
    expect(await itemRow(b)).toMatchObject({ cluster_id: null, outcome: "unique", live: true });
    expect(await itemRow(a)).toMatchObject({ cluster_id: null });
    expect((await events(clusterId)).map((e) => e.kind)).toEqual([
      "created",
      "joined",
      "left",
      "dissolved",
    ]);
  });

  it("keeps a cluster of three alive with two, and is a no-op (null) the second time", async () => {
    const a = await item("s1", 0);
    const b = await item("s2", 5);
    const c = await item("s3", 6);
    const { clusterId } = await link(decision(b, a));
    await link(decision(c, a));
    await db.prisma.$transaction((tx) => unlinkItem(tx, c, "rerun"));
    expect(await clusterOf(clusterId)).toMatchObject({
      members: 2,
      outlets: 2,
      dissolved_at: null,
    });
    expect(await db.prisma.$transaction((tx) => unlinkItem(tx, c, "rerun"))).toBeNull();
    expect((await events(clusterId)).filter((e) => e.kind === "left")).toHaveLength(1);
  });
});

describe("removeItem and elect", () => {
  it("the canonical retracted: the earliest live member is elected, the others re-pointed", async () => {
    const a = await item("s1", 0);
    const b = await item("s2", 7);
    const c = await item("s3", 3);
    const d = await item("s1", 9);
    const { clusterId } = await link(decision(b, a));
    await link(decision(c, a, { stage: "exact", score: 1, threshold: 1 }));
    await link(decision(d, b, { evidence: { shared: ["d"] } }));
    const before = (await liveLinks(d))[0];
    const got = await db.prisma.$transaction((tx) => removeItem(tx, a, "retracted"));
    expect(got).toMatchObject({ wasCanonical: true, elected: c, dissolved: false });
    expect(await itemRow(a)).toMatchObject({ cluster_id: null, live: false, outcome: "removed" });
    expect(await clusterOf(clusterId)).toMatchObject({ canonical_key: c, members: 3 });
    // c is the canonical now: no live link, nothing in news.
    expect(await liveLinks(c)).toEqual([]);
    expect((await newsOf(c))?.duplicate_of).toBeNull();
    expect(await itemRow(c)).toMatchObject({ outcome: "unique", stage: null });
    // d's old row ended 'relinked'; the new one keeps stage, score, evidence, matched item.
    const rows = await db.prisma.$queryRaw<
      {
        id: bigint;
        duplicate_of: string;
        matched_key: string;
        stage: string;
        score: number;
        evidence: unknown;
        ended_reason: string | null;
        decided_at: Date;
      }[]
    >`SELECT id, duplicate_of, matched_key, stage, score, evidence, ended_reason, decided_at
      FROM dedup_links WHERE entry_key = ${d} ORDER BY id`;
    expect(rows).toMatchObject([
      { id: before?.id, duplicate_of: a, ended_reason: "relinked" },
      {
        duplicate_of: c,
        matched_key: b,
        stage: "near",
        score: 0.91,
        evidence: { shared: ["d"] },
        ended_reason: null,
      },
    ]);
    expect(rows[1]?.decided_at).toEqual(rows[0]?.decided_at);
    expect((await newsOf(d))?.duplicate_of).toBe(c);
    expect((await newsOf(b))?.duplicate_of).toBe(c);
    const elected = (await events(clusterId)).filter((e) => e.kind === "elected");
    expect(elected).toMatchObject([{ entry_key: c, detail: { from: a, to: c, why: "retracted" } }]);
  });

  it("removing a member of a pair dissolves the pair; removing a lone item only marks it", async () => {
    const a = await item("s1", 0);
    const b = await item("s2", 5);
    const lone = await item("s3", 1);
    const { clusterId } = await link(decision(b, a));
    const got = await db.prisma.$transaction((tx) => removeItem(tx, a, "empty"));
    expect(got).toMatchObject({ wasCanonical: true, dissolved: true, elected: null });
    expect(await clusterOf(clusterId)).toMatchObject({
      dissolved_at: expect.any(Date),
      members: 0,
    });
    expect(await liveLinks(b)).toEqual([]);
    expect(await itemRow(b)).toMatchObject({ cluster_id: null, outcome: "unique" });
    expect((await newsOf(b))?.duplicate_of).toBeNull();
    const [ended] = await db.prisma.$queryRaw<{ ended_reason: string }[]>`
      SELECT ended_reason FROM dedup_links WHERE entry_key = ${b}`;
    expect(ended?.ended_reason).toBe("dissolved");
    expect(await db.prisma.$transaction((tx) => removeItem(tx, lone, "retracted"))).toBeNull();
    expect(await itemRow(lone)).toMatchObject({ live: false, outcome: "removed" });
  });

  it("elect on a healthy cluster: an earlier member (a late delivery) takes over, the old canonical is linked to it", async () => {
    const a = await item("s1", 10);
    const b = await item("s2", 0);
    const { clusterId } = await link(decision(b, a));
    expect(await db.prisma.$transaction((tx) => elect(tx, clusterId, "earlier member"))).toBe(b);
    expect(await clusterOf(clusterId)).toMatchObject({ canonical_key: b, members: 2 });
    expect(await liveLinks(a)).toMatchObject([{ duplicate_of: b, matched_key: b, stage: "near" }]);
    expect(await liveLinks(b)).toEqual([]);
    expect((await newsOf(a))?.duplicate_of).toBe(b);
    // Electing again changes nothing.
    expect(await db.prisma.$transaction((tx) => elect(tx, clusterId, "again"))).toBe(b);
    expect((await events(clusterId)).filter((e) => e.kind === "elected")).toHaveLength(1);
  });
});

describe.skipIf(!requireRealPostgres("racing links from two connections"))("races", () => {
  it("two workers linking onto one lone item make one cluster with both", async () => {
    const other = await db.connectAnother(2);
    const m = await item("s1", 0);
    const e1 = await item("s2", 1);
    const e2 = await item("s3", 2);
    const [r1, r2] = await Promise.all([link(decision(e1, m)), link(decision(e2, m), other)]);
    expect(r1.clusterId).toBe(r2.clusterId);
    expect(await clusterOf(r1.clusterId)).toMatchObject({ members: 3, outlets: 3 });
    const made = await db.prisma.$queryRaw<{ c: number }[]>`
      SELECT count(*)::int AS c FROM dedup_clusters WHERE canonical_key = ${m}`;
    expect(made[0]?.c).toBe(1);
  });

  it("one item linked two ways at once ends with one live link", async () => {
    const other = await db.connectAnother(2);
    const m1 = await item("s1", 0);
    const m2 = await item("s2", 1);
    const e = await item("s3", 2);
    const results = await Promise.allSettled([link(decision(e, m1)), link(decision(e, m2), other)]);
    expect(results.some((r) => r.status === "fulfilled")).toBe(true);
    expect(await liveLinks(e)).toHaveLength(1);
    const [row] = await liveLinks(e);
    expect((await newsOf(e))?.duplicate_of).toBe(row?.duplicate_of);
  });
});
