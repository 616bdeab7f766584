// The Dedup page's admin actions end to end at the function level: undo, review confirm and
// reject, thresholds, and the re-run (dry run diff, apply of exactly that diff, progress).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { listAudit } from "@/lib/dashboard/audit";
import { DEFAULT_THRESHOLDS, itemKeys, judge, toSigned64 } from "@/lib/dedup";
import { createTestDatabase, requireRealPostgres, type TestDatabase } from "@/lib/testing/db";
import { linkItem } from "@/workers/dedup/clusters";
import { observe } from "@/workers/store";
import {
  confirmReview,
  DedupConflictError,
  DedupInvalidError,
  DedupNotFoundError,
  listReviews,
  pairOf,
  readThresholds,
  rejectReview,
  undoLink,
  updateThresholds,
} from "./dedup";
import { DedupRunBusyError, getDedupRun, listDedupRuns, startDedupRun } from "./dedupRerun";

let db: TestDatabase;
let n = 0;

beforeAll(async () => {
  db = await createTestDatabase();
  for (const id of ["s1", "s2", "s3", "s4"]) {
    await db.prisma.source.create({ data: { id, name: id, kind: "stream" } });
  }
});
afterAll(async () => {
  await new Promise((r) => setTimeout(r, 100));
  await db?.drop();
});

const RATES = "Central bank raises interest rates by half a point to fight inflation";
const RATES_NEAR =
  "Central bank raises interest rates by half a point to fight stubborn inflation, governor says";
const CYCLONE = "Cyclone warning issued for the coastal districts as storm nears";

/** An item as the stage leaves it: the news row and its keyed dedup_items row. */
async function item(source: string, title: string, minutesAgo: number): Promise<string> {
  n++;
  const out = await observe(db, {
    sourceId: source,
    collector: "A",
    origin: "primary",
    guid: `g-${n}`,
    title,
  });
  const key = out.entryKey as string;
  const at = new Date(Date.now() - minutesAgo * 60_000);
  await db.prisma.$executeRaw`UPDATE news SET first_seen_at = ${at} WHERE entry_key = ${key}`;
  await keyItem(key);
  return key;
}

async function keyItem(key: string): Promise<void> {
  const [row] = await db.prisma.$queryRaw<
    {
      title: string | null;
      summary: string | null;
      link: string | null;
      version: number;
      source_id: string;
      first_seen_at: Date;
    }[]
  >`SELECT title, summary, link, version, source_id, first_seen_at FROM news WHERE entry_key = ${key}`;
  if (!row) throw new Error(`no news ${key}`);
  const k = itemKeys(row);
  const [b0, b1, b2, b3] = k.bands ?? [null, null, null, null];
  await db.prisma.$executeRaw`
    INSERT INTO dedup_items (entry_key, version, source_id, first_seen_at, url_key, content_key,
                             simhash, band0, band1, band2, band3, outcome)
    VALUES (${key}, ${row.version}, ${row.source_id}, ${row.first_seen_at}, ${k.urlKey},
            ${k.contentKey}, ${k.simhash === null ? null : toSigned64(k.simhash)}, ${b0}, ${b1},
            ${b2}, ${b3}, 'unique')
    ON CONFLICT (entry_key) DO UPDATE SET version = excluded.version, url_key = excluded.url_key,
      content_key = excluded.content_key, simhash = excluded.simhash, band0 = excluded.band0,
      band1 = excluded.band1, band2 = excluded.band2, band3 = excluded.band3`;
}

const decision = (entryKey: string, matchedKey: string, stage = "near", score = 0.9) => ({
  entryKey,
  matchedKey,
  stage,
  score,
  threshold: 0.54,
  settingsRevision: 1,
  itemVersion: 1,
  evidence: { shared: ["x"] },
});
const link = (entryKey: string, matchedKey: string, stage = "near", score = 0.9) =>
  db.prisma.$transaction((tx) => linkItem(tx, decision(entryKey, matchedKey, stage, score)));

const liveLink = async (key: string) =>
  (
    await db.prisma.$queryRaw<
      { id: bigint; matched_key: string; stage: string; decided_by: string }[]
    >`
      SELECT id, matched_key, stage, decided_by FROM dedup_links
      WHERE entry_key = ${key} AND ended_at IS NULL`
  )[0] ?? null;
const duplicateOf = async (key: string) =>
  (
    await db.prisma.$queryRaw<{ d: string | null }[]>`
      SELECT duplicate_of AS d FROM news WHERE entry_key = ${key}`
  )[0]?.d ?? null;

/** Every item from earlier tests leaves the window's way: the re-run tests count their own. */
async function clearDedup(): Promise<void> {
  await db.prisma
    .$executeRaw`UPDATE news SET duplicate_of = NULL, dedup_stage = NULL, dedup_score = NULL`;
  for (const t of [
    "dedup_links",
    "dedup_clusters",
    "dedup_cluster_events",
    "dedup_reviews",
    "dedup_items",
    "dedup_settings",
  ]) {
    await db.prisma.$executeRawUnsafe(`DELETE FROM ${t}`);
  }
}

describe("thresholds", () => {
  beforeEach(clearDedup);

  it("reads the defaults without a row; a partial update is laid over them, revision 2, audited", async () => {
    expect(await readThresholds(db)).toMatchObject({
      thresholds: DEFAULT_THRESHOLDS,
      revision: 1,
      origin: "default",
    });
    const got = await updateThresholds(db, { thresholds: { near: { duplicate: 0.7 } } }, "admin");
    expect(got).toMatchObject({
      revision: 2,
      origin: "settings",
      updatedBy: "admin",
      thresholds: { ...DEFAULT_THRESHOLDS, near: { ...DEFAULT_THRESHOLDS.near, duplicate: 0.7 } },
    });
    const [row] = (await listAudit(db, { action: "dedup.thresholds" })).entries;
    expect(row).toMatchObject({
      actor: "admin",
      target: { revision: 2 },
      detail: { before: DEFAULT_THRESHOLDS, after: got.thresholds, fromRevision: 1 },
    });
    const again = await updateThresholds(
      db,
      { thresholds: { windowHours: 24 }, expectedRevision: 2 },
      "admin",
    );
    expect(again).toMatchObject({
      revision: 3,
      thresholds: { windowHours: 24, near: { duplicate: 0.7 } },
    });
  });

  it("refuses bad values naming the field, and a stale revision; nothing is written", async () => {
    const cases: [unknown, string][] = [
      [{ near: { review: 0.99 } }, "thresholds.near.review"],
      [{ windowHours: "72" }, "thresholds.windowHours"],
      [{ retrieval: { radius: 3 } }, "thresholds.retrieval.radius"],
      [{ near: { duplicate: -1 } }, "thresholds.near.duplicate"],
    ];
    for (const [thresholds, field] of cases) {
      const err = await updateThresholds(db, { thresholds }, "admin").catch((e) => e);
      expect(err).toBeInstanceOf(DedupInvalidError);
      expect((err as DedupInvalidError).field).toBe(field);
    }
    await expect(
      updateThresholds(db, { thresholds: {}, expectedRevision: 5 }, "admin"),
    ).rejects.toMatchObject({ code: "stale_revision" });
    expect(await readThresholds(db)).toMatchObject({ origin: "default", revision: 1 });
  });
});

describe("undo", () => {
  beforeEach(clearDedup);

  it("unlinks, audits before/after, and rejects the pair for that stage", async () => {
    const a = await item("s1", RATES, 30);
    const b = await item("s2", RATES_NEAR, 20);
    const linked = await link(b, a);
    const got = await undoLink(db, { linkId: linked.linkId }, "admin");
    expect(got).toMatchObject({ linkId: linked.linkId, entryKey: b, dissolved: true });
    expect(await liveLink(b)).toBeNull();
    expect(await duplicateOf(b)).toBeNull();
    const [pa, pb] = pairOf(a, b);
    const reviews = await db.prisma.$queryRaw<
      { state: string; stage: string; decided_by: string }[]
    >`
      SELECT state, stage, decided_by FROM dedup_reviews WHERE pair_a = ${pa} AND pair_b = ${pb}`;
    expect(reviews).toEqual([{ state: "rejected", stage: "near", decided_by: "admin" }]);
    const [row] = (await listAudit(db, { action: "dedup.undo" })).entries;
    expect(row).toMatchObject({
      actor: "admin",
      affected: 1,
      target: { linkId: linked.linkId, entryKey: b },
      detail: {
        before: { duplicateOf: a, matchedKey: a, stage: "near", score: 0.9 },
        after: { clusterId: null, dissolved: true },
      },
    });
  });

  it("by item; a second undo is a 409, an unknown link a 404, and neither audits", async () => {
    const a = await item("s1", RATES, 30);
    const b = await item("s2", RATES_NEAR, 20);
    const linked = await link(b, a);
    await undoLink(db, { entryKey: b }, "admin");
    const audits = (await listAudit(db, { action: "dedup.undo" })).entries.length;
    await expect(undoLink(db, { linkId: linked.linkId }, "admin")).rejects.toMatchObject({
      code: "link_ended",
    });
    await expect(undoLink(db, { entryKey: b }, "admin")).rejects.toBeInstanceOf(DedupNotFoundError);
    await expect(undoLink(db, { linkId: "999999" }, "admin")).rejects.toBeInstanceOf(
      DedupNotFoundError,
    );
    expect((await listAudit(db, { action: "dedup.undo" })).entries).toHaveLength(audits);
  });

  it("an undone pair is not merged again by a later re-run, though the thresholds still say so", async () => {
    const a = await item("s1", RATES, 30);
    const b = await item("s2", RATES_NEAR, 20);
    expect(judge({ title: RATES_NEAR }, { title: RATES }, DEFAULT_THRESHOLDS).stage).toBe("near");
    const linked = await link(b, a);
    await undoLink(db, { linkId: linked.linkId }, "admin");
    const { runId } = await startDedupRun(db, { dryRun: false, actor: "admin" });
    const done = await finished(runId);
    expect(done.run).toMatchObject({ state: "finished", appear: 0, applied: 0 });
    expect(await liveLink(b)).toBeNull();
  });
});

describe("reviews", () => {
  beforeEach(clearDedup);

  async function pending(entry: string, candidate: string, version = 1): Promise<string> {
    const [pa, pb] = pairOf(entry, candidate);
    const [row] = await db.prisma.$queryRaw<{ id: bigint }[]>`
      INSERT INTO dedup_reviews (entry_key, candidate_key, pair_a, pair_b, stage, score, threshold,
                                 item_version, evidence)
      VALUES (${entry}, ${candidate}, ${pa}, ${pb}, 'near', 0.45, 0.54, ${version},
              '{"shared":["rates"]}'::jsonb)
      RETURNING id`;
    return String(row?.id);
  }

  it("lists pending with both sides; confirm links with stage review by the actor, audited", async () => {
    const a = await item("s1", RATES, 30);
    const b = await item("s2", RATES_NEAR, 20);
    const id = await pending(b, a);
    const page = await listReviews(db);
    expect(page).toMatchObject({ pending: 1, nextBefore: null });
    expect(page.reviews[0]).toMatchObject({
      id,
      state: "pending",
      entry: { entryKey: b, title: RATES_NEAR, sourceId: "s2", deleted: false },
      candidate: { entryKey: a, title: RATES },
      evidence: { shared: ["rates"] },
    });
    const got = await confirmReview(db, id, "admin");
    expect(got.review).toMatchObject({ state: "confirmed", decidedBy: "admin" });
    expect(got.link?.canonicalKey).toBe(a);
    expect(await liveLink(b)).toMatchObject({
      matched_key: a,
      stage: "review",
      decided_by: "admin",
    });
    expect(await duplicateOf(b)).toBe(a);
    const [row] = (await listAudit(db, { action: "dedup.review_confirm" })).entries;
    expect(row).toMatchObject({
      actor: "admin",
      target: { reviewId: id, entryKey: b, candidateKey: a },
      detail: { before: { state: "pending" }, after: { state: "confirmed" } },
    });
    await expect(confirmReview(db, id, "admin")).rejects.toMatchObject({ code: "review_decided" });
    await expect(rejectReview(db, id, "admin")).rejects.toMatchObject({ code: "review_decided" });
    expect((await listReviews(db)).pending).toBe(0);
  });

  it("undoing a confirmed review's link rejects that review too", async () => {
    const a = await item("s1", RATES, 30);
    const b = await item("s2", RATES_NEAR, 20);
    const id = await pending(b, a);
    const { link: made } = await confirmReview(db, id, "admin");
    const undone = await undoLink(db, { linkId: made?.linkId as string }, "admin");
    expect(undone.rejectedReviewIds).toContain(id);
    const [pa, pb] = pairOf(a, b);
    const rows = await db.prisma.$queryRaw<{ stage: string; state: string }[]>`
      SELECT stage, state FROM dedup_reviews WHERE pair_a = ${pa} AND pair_b = ${pb} ORDER BY stage`;
    expect(rows).toEqual([
      { stage: "near", state: "rejected" },
      { stage: "review", state: "rejected" },
    ]);
  });

  it("a thresholds patch cannot reach the prototype", async () => {
    const got = await updateThresholds(
      db,
      { thresholds: JSON.parse('{"__proto__": {"windowHours": 5}, "windowHours": 48}') },
      "admin",
    );
    expect(got.thresholds.windowHours).toBe(48);
    expect(Object.getPrototypeOf(got.thresholds)).toBe(Object.prototype);
  });

  it("reject: the pair stays apart, audited; an unknown review is a 404", async () => {
    const a = await item("s1", RATES, 30);
    const b = await item("s2", RATES_NEAR, 20);
    const id = await pending(b, a);
    const got = await rejectReview(db, id, "admin");
    expect(got.review).toMatchObject({ state: "rejected", decidedBy: "admin" });
    expect(await liveLink(b)).toBeNull();
    const [row] = (await listAudit(db, { action: "dedup.review_reject" })).entries;
    expect(row).toMatchObject({ actor: "admin", target: { reviewId: id } });
    await expect(rejectReview(db, "424242", "admin")).rejects.toBeInstanceOf(DedupNotFoundError);
    expect((await listReviews(db, { state: "rejected" })).reviews.map((r) => r.id)).toEqual([id]);
  });

  it("an item edited since, or a candidate retracted, supersedes the review: 409, no link", async () => {
    const a = await item("s1", RATES, 30);
    const b = await item("s2", RATES_NEAR, 20);
    const c = await item("s3", RATES_NEAR, 10);
    const edited = await pending(b, a);
    const gone = await pending(c, a, 1);
    // What the review sees of an edit is the version the writer bumped; of a retraction, the tombstone.
    await db.prisma.$executeRaw`UPDATE news SET version = version + 1 WHERE entry_key = ${b}`;
    await db.prisma.$executeRaw`UPDATE news SET deleted_at = now() WHERE entry_key = ${a}`;
    const confirms = (await listAudit(db, { action: "dedup.review_confirm" })).entries.length;
    const err = await confirmReview(db, edited, "admin").catch((e) => e);
    expect(err).toBeInstanceOf(DedupConflictError);
    expect(err.code).toBe("review_superseded");
    await expect(confirmReview(db, gone, "admin")).rejects.toMatchObject({
      code: "review_superseded",
    });
    expect(await liveLink(b)).toBeNull();
    expect(await liveLink(c)).toBeNull();
    expect((await listReviews(db, { state: "superseded" })).reviews).toHaveLength(2);
    expect((await listAudit(db, { action: "dedup.review_confirm" })).entries).toHaveLength(
      confirms,
    );
  });
});

async function finished(runId: string) {
  for (let i = 0; i < 800; i++) {
    const got = await getDedupRun(db, runId);
    if (got && got.run.state !== "running" && !got.run.active) return got;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`run ${runId} did not finish`);
}

describe("re-run with new thresholds", () => {
  let a: string;
  let b: string;
  let c: string;
  let d: string;
  let e: string;

  beforeAll(async () => {
    await clearDedup();
    a = await item("s1", RATES, 60);
    b = await item("s2", RATES, 50); // byte-identical wire copy: exact
    c = await item("s3", RATES_NEAR, 40); // a rewrite: near at the defaults, unlinked now
    d = await item("s4", CYCLONE, 30); // unrelated, wrongly linked by a too-loose setting
    e = await item("s4", `${CYCLONE}!`, 20); // exact copy of d (punctuation folds)
    await link(b, a, "exact", 1);
    await link(d, a, "near", 0.31);
  });

  it("dry run: lists what would appear and go, changes nothing, audited", async () => {
    const before = await readThresholds(db);
    const { runId, auditId } = await startDedupRun(db, { dryRun: true, actor: "admin" });
    const done = await finished(runId);
    expect(done.run).toMatchObject({ dryRun: true, state: "finished", total: 5, scanned: 5 });
    const byKey = Object.fromEntries(done.changes.map((x) => [x.entryKey, x]));
    expect(byKey[c]).toMatchObject({
      change: "appear",
      before: null,
      after: { matchedKey: a, stage: "near" },
    });
    expect(byKey[d]).toMatchObject({
      change: "go",
      before: { matchedKey: a, stage: "near" },
      after: null,
    });
    expect(byKey[e]).toMatchObject({ change: "appear", after: { matchedKey: d, stage: "exact" } });
    expect(done.changes).toHaveLength(3);
    expect(done.run).toMatchObject({ appear: 2, go: 1, change: 0, applied: 0 });
    expect(await liveLink(c)).toBeNull();
    expect(await liveLink(d)).toMatchObject({ matched_key: a });
    expect(await readThresholds(db)).toEqual(before);
    await new Promise((r) => setTimeout(r, 100));
    const [row] = (await listAudit(db, { action: "dedup.rerun_dry_run" })).entries;
    expect(row).toMatchObject({ id: auditId, dryRun: true, affected: 3, target: { runId } });
  });

  it("apply of that dry run: exactly its diff, progress while it runs, one run at a time, settings updated", async () => {
    const dry = (await listDedupRuns(db)).runs.find((r) => r.dryRun) as { id: string };
    const dryDiff = (await getDedupRun(db, dry.id))?.changes.map((x) => [x.entryKey, x.change]);
    let release: () => void = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    let seen: { applied: number; state: string } | null = null;
    const revision = (await readThresholds(db)).revision;
    const { runId } = await startDedupRun(db, {
      dryRun: false,
      fromRun: dry.id,
      actor: "admin",
      batchSize: 1,
      hooks: {
        afterBatch: async (phase) => {
          if (phase === "apply" && seen === null) {
            const got = await getDedupRun(db, runId);
            seen = { applied: got?.run.applied ?? -1, state: got?.run.state ?? "" };
            await held;
          }
        },
      },
    });
    for (let i = 0; i < 400 && seen === null; i++) await new Promise((r) => setTimeout(r, 10));
    expect(seen).toEqual({ applied: 1, state: "running" });
    await expect(startDedupRun(db, { dryRun: true, actor: "admin" })).rejects.toBeInstanceOf(
      DedupRunBusyError,
    );
    release();
    const done = await finished(runId);
    expect(done.run).toMatchObject({ dryRun: false, state: "finished", applied: 3 });
    expect(done.changes.map((x) => [x.entryKey, x.change])).toEqual(dryDiff);
    expect(done.changes.every((x) => (x.after as { applied?: boolean }).applied === true)).toBe(
      true,
    );
    expect(await liveLink(c)).toMatchObject({ matched_key: a, stage: "near", decided_by: "dedup" });
    expect(await liveLink(d)).toBeNull();
    expect(await liveLink(e)).toMatchObject({ matched_key: d, stage: "exact" });
    expect(await liveLink(b)).toMatchObject({ matched_key: a, stage: "exact" });
    expect(await duplicateOf(c)).toBe(a);
    expect(await duplicateOf(e)).toBe(d);
    expect(await readThresholds(db)).toMatchObject({ revision: revision + 1, updatedBy: "admin" });
    // Nothing was woken: no jobs for the old items.
    expect(await db.prisma.job.count({ where: { key: { contains: c } } })).toBe(0);
    await new Promise((r) => setTimeout(r, 100));
    const [row] = (await listAudit(db, { action: "dedup.rerun_apply" })).entries;
    expect(row).toMatchObject({ dryRun: false, affected: 3, target: { runId, fromRun: dry.id } });
    // Run again with the same thresholds: there is nothing left to change.
    const again = await finished((await startDedupRun(db, { dryRun: true, actor: "admin" })).runId);
    expect(again.changes).toEqual([]);
  });

  it("applying an apply run, a running or unknown run, or bad thresholds is refused", async () => {
    const apply = (await listDedupRuns(db)).runs.find((r) => !r.dryRun) as { id: string };
    await expect(
      startDedupRun(db, { dryRun: false, fromRun: apply.id, actor: "admin" }),
    ).rejects.toMatchObject({ code: "not_a_finished_dry_run" });
    await expect(
      startDedupRun(db, { dryRun: false, fromRun: "987654", actor: "admin" }),
    ).rejects.toBeInstanceOf(DedupNotFoundError);
    await expect(
      startDedupRun(db, { dryRun: true, thresholds: { near: { duplicate: 2 } }, actor: "admin" }),
    ).rejects.toMatchObject({ field: "thresholds.near.duplicate" });
    // A refused start leaves the slot free.
    const ok = await startDedupRun(db, { dryRun: true, actor: "admin" });
    await finished(ok.runId);
  });

  it("a change the stage made meanwhile is skipped on apply, and says so", async () => {
    const strict = { near: { duplicate: 0.99, review: 0.4 } };
    const { runId } = await startDedupRun(db, { dryRun: true, thresholds: strict, actor: "admin" });
    const dry = await finished(runId);
    expect(dry.changes).toMatchObject([
      { entryKey: c, change: "go", after: { stage: "review", matchedKey: a } },
    ]);
    // Meanwhile c is relinked by someone else.
    await db.prisma.$transaction((tx) =>
      linkItem(tx, { ...decision(c, b, "near", 0.95), itemVersion: 1 }),
    );
    const applied = await finished(
      (await startDedupRun(db, { dryRun: false, fromRun: runId, actor: "admin" })).runId,
    );
    expect(applied.run.applied).toBe(0);
    expect(applied.changes[0]?.after).toMatchObject({
      applied: false,
      skipped: expect.any(String),
    });
    expect(await liveLink(c)).toMatchObject({ matched_key: b });
  });

  it("apply: a link that falls into the grey band goes to review, as the stage would send it", async () => {
    await link(c, a, "near", 0.9);
    const strict = { near: { duplicate: 0.99, review: 0.4 } };
    const { runId } = await startDedupRun(db, {
      dryRun: false,
      thresholds: strict,
      actor: "admin",
    });
    const done = await finished(runId);
    expect(done.changes).toMatchObject([{ entryKey: c, change: "go", after: { applied: true } }]);
    expect(await liveLink(c)).toBeNull();
    const [pa, pb] = pairOf(a, c);
    const reviews = await db.prisma.$queryRaw<{ state: string; stage: string }[]>`
      SELECT state, stage FROM dedup_reviews WHERE pair_a = ${pa} AND pair_b = ${pb}`;
    expect(reviews).toEqual([{ state: "pending", stage: "near" }]);
    expect((await readThresholds(db)).thresholds.near).toEqual(strict.near);
  });

  it("an item sighted before the run but decided while it scans is scanned and counted in its total", async () => {
    let added = false;
    const { runId } = await startDedupRun(db, {
      dryRun: true,
      actor: "admin",
      batchSize: 1,
      hooks: {
        afterBatch: async (phase) => {
          // The line's backlog: seen 30 minutes ago, keyed by the stage only now.
          if (phase === "scan" && !added) {
            added = true;
            await item("s3", "A ferry service resumes on the river route after repairs", 30);
          }
        },
      },
    });
    const done = await finished(runId);
    expect(added).toBe(true);
    expect(done.run.scanned).toBe(done.run.total);
  });
});

describe.skipIf(!requireRealPostgres("racing admin actions from two connections"))("races", () => {
  beforeEach(clearDedup);

  it("two operators confirming one review at once: one links, the other gets review_decided", async () => {
    const other = await db.connectAnother(2);
    const a = await item("s1", RATES, 30);
    const b = await item("s2", RATES_NEAR, 20);
    const [pa, pb] = pairOf(a, b);
    const [row] = await db.prisma.$queryRaw<{ id: bigint }[]>`
      INSERT INTO dedup_reviews (entry_key, candidate_key, pair_a, pair_b, stage, score, threshold,
                                 item_version)
      VALUES (${b}, ${a}, ${pa}, ${pb}, 'near', 0.45, 0.54, 1) RETURNING id`;
    const id = String(row?.id);
    const results = await Promise.allSettled([
      confirmReview(db, id, "admin"),
      rejectReview(other, id, "admin"),
    ]);
    const ok = results.filter((r) => r.status === "fulfilled");
    const refused = results.filter((r) => r.status === "rejected");
    expect(ok).toHaveLength(1);
    expect(refused.map((r) => (r as PromiseRejectedResult).reason.code)).toEqual([
      "review_decided",
    ]);
    const decided = await db.prisma.$queryRaw<{ state: string }[]>`
      SELECT state FROM dedup_reviews WHERE id = ${BigInt(id)}`;
    expect((await liveLink(b)) !== null).toBe(decided[0]?.state === "confirmed");
  });

  it("one link undone twice at once: one undo, one 409, one audit row", async () => {
    const other = await db.connectAnother(2);
    const a = await item("s1", RATES, 30);
    const b = await item("s2", RATES_NEAR, 20);
    const { linkId } = await link(b, a);
    const before = (await listAudit(db, { action: "dedup.undo", limit: 200 })).entries.length;
    const results = await Promise.allSettled([
      undoLink(db, { linkId }, "admin"),
      undoLink(other, { linkId }, "admin"),
    ]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    expect(
      results
        .filter((r) => r.status === "rejected")
        .map((r) => (r as PromiseRejectedResult).reason.code),
    ).toEqual(["link_ended"]);
    expect((await listAudit(db, { action: "dedup.undo", limit: 200 })).entries).toHaveLength(
      before + 1,
    );
  });
});
