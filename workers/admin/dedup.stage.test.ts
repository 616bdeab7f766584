// The admin actions against the live stage (workers/dedup/stage.ts): what an operator undoes or
// rejects, the stage does not merge again, whatever version of the item comes next; what an
// operator confirms from the stage's review queue, the stage's next decision keeps.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_THRESHOLDS, judge } from "@/lib/dedup";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { dedupStage } from "@/workers/dedup/stage";
import {
  change,
  createOutlets,
  put,
  stateOf,
  TEXTS,
  variantOf,
  versionOf,
  type Written,
} from "@/workers/dedup/testing/items";
import type { Stage } from "@/workers/line/stage";
import { confirmReview, listReviews, rejectReview, undoLink } from "./dedup";
import { getDedupRun, startDedupRun } from "./dedupRerun";

let db: TestDatabase;
let stage: Stage;

beforeAll(async () => {
  db = await createTestDatabase();
  await createOutlets(db);
});
afterAll(async () => {
  await new Promise((r) => setTimeout(r, 100));
  await db?.drop();
});
beforeEach(async () => {
  await db.prisma.$executeRawUnsafe(
    `TRUNCATE news, news_events, dedup_items, dedup_clusters, dedup_cluster_events, dedup_links,
              dedup_reviews, dedup_settings, dedup_runs, dedup_run_changes, dedup_anchors, jobs
              RESTART IDENTITY`,
  );
  stage = dedupStage(db);
});

const ctx = () => ({ db, signal: new AbortController().signal, attempt: 1 });
async function decide(w: Written): Promise<void> {
  await stage.handle({ entryKey: w.entryKey, version: await versionOf(db, w.entryKey) }, ctx());
}
async function finished(runId: string) {
  for (let i = 0; i < 400; i++) {
    const got = await getDedupRun(db, runId);
    if (got && got.run.state !== "running" && !got.run.active) return got;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`run ${runId} did not finish`);
}

describe("undo against the stage", () => {
  it("an undone wire copy stays apart through an edit the stage decides again, and a re-run", async () => {
    const a = await put(db, "wire", "a", TEXTS.strike);
    const b = await put(db, "daily", "b", TEXTS.strike);
    await decide(a);
    await decide(b);
    expect(await stateOf(db, b.entryKey)).toMatchObject({
      duplicateOf: a.entryKey,
      stage: "exact",
    });
    await undoLink(db, { entryKey: b.entryKey }, "admin");
    expect(await stateOf(db, b.entryKey)).toMatchObject({ duplicateOf: null, clusterId: null });
    // The same job again (at-least-once) and the next version: the stage keeps them apart,
    // though the edited text would still be a near duplicate of a.
    await decide(b);
    const edited = { ...TEXTS.strike, summary: `${TEXTS.strike.summary} Ships resumed loading.` };
    expect(judge(edited, TEXTS.strike, DEFAULT_THRESHOLDS).duplicate).toBe(true);
    const b2 = await change(db, "daily", "b", edited);
    await decide(b2);
    expect(await stateOf(db, b.entryKey)).toMatchObject({
      version: b2.version,
      duplicateOf: null,
      clusterId: null,
    });
    const dry = await finished((await startDedupRun(db, { dryRun: true, actor: "admin" })).runId);
    expect(dry.changes).toEqual([]);
  });

  it("a third copy still joins the canonical: only the undone pair is kept apart", async () => {
    const a = await put(db, "wire", "a", TEXTS.strike);
    const b = await put(db, "daily", "b", TEXTS.strike);
    await decide(a);
    await decide(b);
    await undoLink(db, { entryKey: b.entryKey }, "admin");
    const c = await put(db, "star", "c", TEXTS.strike);
    await decide(c);
    expect(await stateOf(db, c.entryKey)).toMatchObject({ duplicateOf: a.entryKey });
    expect(await stateOf(db, b.entryKey)).toMatchObject({ duplicateOf: null });
  });
});

describe("re-run against the stage", () => {
  it("with the thresholds in force, a link only the anchors found stays: the diff is empty", async () => {
    const rewrite = variantOf(TEXTS.strike, "near", 3, DEFAULT_THRESHOLDS, "anchors");
    const a = await put(db, "wire", "a", TEXTS.strike);
    const b = await put(db, "daily", "b", rewrite);
    await decide(a);
    await decide(b);
    expect(await stateOf(db, b.entryKey)).toMatchObject({ duplicateOf: a.entryKey, stage: "near" });
    const dry = await finished((await startDedupRun(db, { dryRun: true, actor: "admin" })).runId);
    expect(dry.changes).toEqual([]);
  });
});

describe("reviews from the stage", () => {
  const rateGrey = variantOf(TEXTS.rate, "review");
  const rateGrey2 = variantOf(TEXTS.rate, "review", 2);
  async function greyPair(): Promise<{ a: Written; g: Written; id: string }> {
    expect(judge(rateGrey, TEXTS.rate, DEFAULT_THRESHOLDS).stage).toBe("review");
    const a = await put(db, "wire", "a", TEXTS.rate);
    const g = await put(db, "star", "g", rateGrey);
    await decide(a);
    await decide(g);
    const { reviews } = await listReviews(db);
    expect(reviews).toMatchObject([{ entryKey: g.entryKey, candidateKey: a.entryKey }]);
    return { a, g, id: (reviews[0] as { id: string }).id };
  }

  it("confirmed: linked as 'review'; the same job again changes nothing", async () => {
    const { a, g, id } = await greyPair();
    await confirmReview(db, id, "admin");
    expect(await stateOf(db, g.entryKey)).toMatchObject({
      duplicateOf: a.entryKey,
      newsStage: "review",
    });
    await decide(g);
    expect(await stateOf(db, g.entryKey)).toMatchObject({ duplicateOf: a.entryKey });
  });

  it("rejected: the stage does not put the pair in review or merge it again", async () => {
    const { g, id } = await greyPair();
    await rejectReview(db, id, "admin");
    const g2 = await change(db, "star", "g", rateGrey2);
    await decide(g2);
    expect(await stateOf(db, g.entryKey)).toMatchObject({ duplicateOf: null });
    expect((await listReviews(db)).pending).toBe(0);
  });

  it("an item edited after its review was opened: confirm is refused as superseded", async () => {
    const { g, id } = await greyPair();
    await change(db, "star", "g", { ...rateGrey, summary: "something else entirely" });
    await expect(confirmReview(db, id, "admin")).rejects.toMatchObject({
      code: "review_superseded",
    });
    expect(await stateOf(db, g.entryKey)).toMatchObject({ duplicateOf: null });
  });
});
