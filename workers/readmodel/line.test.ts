import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_PAGE_LIMIT, pageKey, storyKey } from "@/lib/readmodel/keys";
import { MemoryStore } from "@/lib/readmodel/store/memory";
import type { ListPage, PublicStory } from "@/lib/readmodel/types";
import { sleep } from "@/lib/sleep";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { unlinkItem } from "@/workers/dedup/clusters";
import { dedupStage } from "@/workers/dedup/stage";
import { createOutlets, put, TEXTS, tombstone } from "@/workers/dedup/testing/items";
import { createLine, type Line } from "@/workers/line/line";
import { type QueueWorker, startQueueWorker } from "@/workers/queue/queueWorker";
import { createReadModelBuilder, type ReadModelBuilder } from "./builder";
import { INDEX_STAGE, indexStage } from "./indexStage";

// End to end: items written through the real writer go down the real line (dedup → index, as
// queues with a worker) and the builder turns read_stories into payloads in a store, on its own
// timer, as in a running process. "Edits, retractions and new duplicates reach the read model
// within one build interval" is measured from the moment dedup decided to the build holding it.

const INTERVAL_MS = 500;
/** A build, a queue turn and a loaded 2-core machine's scheduling on top of one interval. */
const SLACK_MS = 1_500;

let db: TestDatabase;
let line: Line;
let worker: QueueWorker;
let builder: ReadModelBuilder;
const store = new MemoryStore();

beforeAll(async () => {
  db = await createTestDatabase();
  await createOutlets(db);
  line = createLine(
    db,
    [dedupStage(db, { handsOn: [INDEX_STAGE] }), indexStage(db, { after: "dedup" })],
    // The sweep is slow on purpose: what reaches the model must not wait for it.
    { sweepMs: 60_000 },
  );
  worker = await startQueueWorker(db, {
    queues: line.queues,
    pollMs: 50,
    sweepMs: 100,
    reportMs: 60_000,
  });
  await line.start();
  builder = createReadModelBuilder(db, { store, intervalMs: INTERVAL_MS });
  builder.start();
});
afterEach(() => line?.flush());
afterAll(async () => {
  await builder?.stop();
  await line?.stop();
  await worker?.stop(5_000);
  await db?.drop();
});

async function home(): Promise<PublicStory[]> {
  const p = await store.get(pageKey("home", DEFAULT_PAGE_LIMIT, 0));
  return p ? (JSON.parse(p.body.toString("utf8")) as ListPage).items : [];
}

/** Waits until `ok` holds for the home page; returns when it did. */
async function until(ok: (items: PublicStory[]) => boolean, ms = 20_000): Promise<number> {
  const deadline = Date.now() + ms;
  for (;;) {
    await line.flush();
    if (ok(await home())) return Date.now();
    if (Date.now() > deadline) throw new Error(`not reached: ${JSON.stringify(await home())}`);
    await sleep(20);
  }
}

async function decidedAt(entryKey: string): Promise<number> {
  for (let i = 0; i < 500; i++) {
    const [r] = await db.prisma.$queryRaw<{ decided_at: Date }[]>`
      SELECT decided_at FROM dedup_items WHERE entry_key = ${entryKey} AND decision_ms IS NOT NULL`;
    if (r) return r.decided_at.getTime();
    await sleep(20);
  }
  throw new Error(`dedup never decided ${entryKey}`);
}

describe("the read model on the running line", () => {
  it("new stories, a new duplicate, an undo and a retraction each reach the model within one build interval", async () => {
    const strike = await put(db, "wire", "strike-w", TEXTS.strike);
    const rate = await put(db, "daily", "rate-d", TEXTS.rate);
    await until((items) => items.length === 2);

    // A new duplicate: an outlet more on its story, and no story of its own.
    const copy = await put(db, "star", "strike-s", {
      ...TEXTS.strike,
      link: "https://star.example/strike",
    });
    const linked = await decidedAt(copy.entryKey);
    const seen = await until((items) =>
      items.some((s) => s.id === strike.entryKey && s.outlets.length === 2),
    );
    expect(seen - linked).toBeLessThan(INTERVAL_MS + SLACK_MS);
    const story = (await home()).find((s) => s.id === strike.entryKey);
    expect(story?.outlets.map((o) => o.source.id)).toEqual(["wire", "star"]);
    expect(story?.outlets[1]?.link).toBe("https://star.example/strike");
    expect((await home()).map((s) => s.id)).not.toContain(copy.entryKey);

    // An operator undoes the link (outside the line): the outlet leaves, the copy is a story.
    const undone = Date.now();
    await db.prisma.$transaction((tx) => unlinkItem(tx, copy.entryKey, "undone", "admin"));
    const apart = await until(
      (items) =>
        items.some((s) => s.id === strike.entryKey && s.outlets.length === 1) &&
        items.some((s) => s.id === copy.entryKey),
    );
    expect(apart - undone).toBeLessThan(INTERVAL_MS + SLACK_MS);

    // A retraction: the story leaves the home list and its own payload goes.
    await tombstone(db, "daily", "rate-d");
    const retracted = await decidedAt(rate.entryKey).then(async () => {
      // decided_at of the tombstone's version (the first version's decision came before).
      for (;;) {
        const [r] = await db.prisma.$queryRaw<{ decided_at: Date; outcome: string }[]>`
          SELECT decided_at, outcome FROM dedup_items WHERE entry_key = ${rate.entryKey}`;
        if (r?.outcome === "removed") return r.decided_at.getTime();
        await sleep(20);
      }
    });
    const gone = await until((items) => !items.some((s) => s.id === rate.entryKey));
    expect(gone - retracted).toBeLessThan(INTERVAL_MS + SLACK_MS);
    expect(await store.get(storyKey(rate.entryKey))).toBeNull();

    // And nothing more is built while nothing changes: once the line has nothing due or in
    // hand (a loaded machine can leave an index job of the retraction's after the build that
    // took the story off home), and the build that follows its last change is made.
    for (;;) {
      const [busy] = await db.prisma.$queryRaw<{ n: number }[]>`
        SELECT count(*)::int AS n FROM jobs
        WHERE state = 'leased' OR (state = 'ready' AND run_at <= now())`;
      if (busy?.n === 0) break;
      await sleep(50);
    }
    await sleep(INTERVAL_MS + SLACK_MS);
    const [before] = await db.prisma.$queryRaw<{ n: number }[]>`
      SELECT count(*)::int AS n FROM read_model_builds`;
    await sleep(INTERVAL_MS * 3);
    const [after] = await db.prisma.$queryRaw<{ n: number }[]>`
      SELECT count(*)::int AS n FROM read_model_builds`;
    expect(after?.n).toBe(before?.n);
    const lags = await db.prisma.$queryRaw<{ lag_p99_ms: number | null; error: string | null }[]>`
      SELECT lag_p99_ms, error FROM read_model_builds ORDER BY id`;
    expect(lags.every((b) => b.error === null)).toBe(true);
    expect(lags.some((b) => b.lag_p99_ms !== null && b.lag_p99_ms < 30_000)).toBe(true);
  });
});
