import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { canonicalId, entryKey } from "@/lib/canonical";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { type Simulator, startSimulator, type TruthItem } from "@/simulator/server";
import { linkedShare, pairScores } from "@/simulator/truth";
import { type SourceRef, toSourceRef } from "@/workers/collectors/sourceRef";
import { createLine, type Line } from "@/workers/line/line";
import { type QueueWorker, startQueueWorker } from "@/workers/queue/queueWorker";
import { refreshFeed } from "@/workers/refreshFeed";
import { sourceSchema } from "@/workers/sources/sourcesFile";
import { syncSources } from "@/workers/sources/syncSources";
import { watchStream } from "@/workers/watchStream";
import { dedupStage } from "./stage";

// The cascade measured live (issue 13's acceptance): the simulator's outlets publish, copy,
// rewrite and re-list news in simulated time; the collectors read it through the writer, whose
// NOTIFY feeds the line's dedup stage; once the line is drained, the clusters are graded against
// the simulator's truth. The one-line JSON it prints is the figure the closing note quotes.

const SEED = 2026;
// 8 original stories a minute for 30 simulated minutes, and their copies: about 600 rows.
const MINUTES = 30;
// Copies trail their original by up to 90 s, aggregator listings by up to 2 min.
const SETTLE_MINUTES = 3;

let sim: Simulator;
let db: TestDatabase;
let line: Line;
let worker: QueueWorker;
const stop = new AbortController();
let watcher: Promise<void> = Promise.resolve();

async function until<T>(what: string, probe: () => Promise<T | null | false>, ms = 60_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Rows the stage has not decided at their current version. */
async function undecided(): Promise<number> {
  const [row] = await db.prisma.$queryRaw<{ n: number }[]>`
    SELECT count(*)::int AS n FROM news n
    LEFT JOIN dedup_items d ON d.entry_key = n.entry_key
    WHERE d.entry_key IS NULL OR d.version < n.version OR d.decision_ms IS NULL`;
  return row?.n ?? 0;
}

interface Measured {
  items: TruthItem[];
  keys: string[];
  cluster: (string | null)[];
  missed: number;
  links: { entry_key: string; matched_key: string; stage: string }[];
  review: number;
  dead: number;
}

let measured: Measured;

beforeAll(async () => {
  sim = await startSimulator({
    seed: SEED,
    manual: true,
    // Host names of their own, so re-visits include amp., m. and bare hosts.
    outletHosts: true,
    backlogMs: 0,
    keepaliveMs: 60_000,
  });
  db = await createTestDatabase();
  const sources = sim
    .sources()
    .filter((s) => s.kind === "feed" || s.kind === "stream")
    .map((s) => sourceSchema.parse(s));
  await syncSources(db, sources);
  const refs = new Map(
    (await db.prisma.source.findMany()).map((s) => [s.id, toSourceRef(s) as SourceRef]),
  );

  line = createLine(db, [dedupStage(db)], { sweepMs: 1_000 });
  worker = await startQueueWorker(db, { queues: line.queues, pollMs: 100, sweepMs: 1_000 });
  await line.start();

  const wire = refs.get("wire") as SourceRef;
  watcher = watchStream(db, wire, "A", stop.signal, { reconnectBaseMs: 50 });
  await until("the stream collector to connect", async () => sim.control.connections().wire === 1);

  const feeds = sources.filter((s) => s.kind === "feed").map((s) => refs.get(s.id) as SourceRef);
  for (let minute = 0; minute < MINUTES + SETTLE_MINUTES; minute++) {
    if (minute === MINUTES) sim.control.setRate(0);
    sim.control.advance(60_000);
    // Each feed lists its newest 30; at a few stories a minute per outlet, a poll per simulated
    // minute reads every item while it is listed.
    for (const feed of feeds) {
      const out = await refreshFeed(db, feed, "A", null, { robots: false });
      if (out.code !== "ok" && out.code !== "not_modified") {
        throw new Error(`${feed.id}: ${out.code}`);
      }
    }
  }
  const truth = sim.control.truth();
  // The stream's last events, then the line: drained when every row is decided at its version.
  const wireItems = truth.items.filter((i) => i.sourceId === "wire").length;
  await until("the stream's items", async () => {
    const n = await db.prisma.news.count({ where: { sourceId: "wire" } });
    return n >= wireItems;
  });
  await until("the line to drain", async () => (await undecided()) === 0, 120_000);

  const rows = await db.prisma.$queryRaw<
    { entry_key: string; cluster_id: bigint | null; deleted: boolean }[]
  >`
    SELECT n.entry_key, d.cluster_id, n.deleted_at IS NOT NULL AS deleted
    FROM news n JOIN dedup_items d ON d.entry_key = n.entry_key`;
  const byKey = new Map(rows.map((r) => [r.entry_key, r]));
  const items: TruthItem[] = [];
  const keys: string[] = [];
  const cluster: (string | null)[] = [];
  let missed = 0;
  for (const item of truth.items) {
    if (item.retracted) continue;
    const key = entryKey(item.sourceId, canonicalId(item) as string);
    const row = byKey.get(key);
    if (!row) {
      missed++;
      continue;
    }
    if (row.deleted) continue;
    items.push(item);
    keys.push(key);
    cluster.push(row.cluster_id === null ? null : String(row.cluster_id));
  }
  const links = await db.prisma.$queryRaw<Measured["links"]>`
    SELECT entry_key, matched_key, stage FROM dedup_links WHERE ended_at IS NULL`;
  const [review] = await db.prisma.$queryRaw<{ n: number }[]>`
    SELECT count(*)::int AS n FROM dedup_items WHERE outcome = 'review' AND live`;
  const [dead] = await db.prisma.$queryRaw<{ n: number }[]>`
    SELECT count(*)::int AS n FROM jobs WHERE queue = 'dedup' AND state = 'dead'`;
  measured = { items, keys, cluster, missed, links, review: review?.n ?? 0, dead: dead?.n ?? 0 };
}, 600_000);

afterAll(async () => {
  stop.abort();
  await watcher.catch(() => undefined);
  await line?.stop();
  await worker?.stop(5_000);
  await sim?.stop();
  await db?.drop();
});

describe("the dedup cascade, live against the simulator", () => {
  it("clusters republished stories with the right members, every link explained by a stage", () => {
    const { items, keys, cluster, links, review, missed, dead } = measured;
    const storyOf = new Map(keys.map((k, i) => [k, items[i]?.storyId]));
    const pairs = pairScores(
      items.map((i) => i.storyId),
      cluster,
    );
    // Each link against the item it matched (its canonical may be another member's match), between
    // rows the truth knows (a retracted item's rows are not graded).
    const graded = links.filter((l) => storyOf.has(l.entry_key) && storyOf.has(l.matched_key));
    const right = graded.filter((l) => storyOf.get(l.entry_key) === storyOf.get(l.matched_key));
    const byStage: Record<string, number> = {};
    for (const l of links) byStage[l.stage] = (byStage[l.stage] ?? 0) + 1;
    const decisions = links.length + review;
    const share = Object.fromEntries(
      [...Object.entries(byStage), ["review", review] as const].map(([k, n]) => [
        k,
        Math.round((n / Math.max(1, decisions)) * 1000) / 1000,
      ]),
    );
    const perKind = linkedShare(items, cluster);
    const wrong = graded.filter((l) => storyOf.get(l.entry_key) !== storyOf.get(l.matched_key));
    const wrongByStage: Record<string, number> = {};
    for (const l of wrong) wrongByStage[l.stage] = (wrongByStage[l.stage] ?? 0) + 1;
    const round = (x: number) => Math.round(x * 1000) / 1000;
    console.log(
      JSON.stringify({
        dedupLive: {
          seed: SEED,
          minutes: MINUTES,
          items: items.length,
          missed,
          links: links.length,
          review,
          dead,
          linkPrecision: round(right.length / Math.max(1, graded.length)),
          wrongByStage,
          pairPrecision: round(pairs.precision),
          pairRecall: round(pairs.recall),
          truePairs: pairs.truePairs,
          share,
          linked: Object.fromEntries(
            Object.entries(perKind).map(([k, v]) => [k, `${v?.linked}/${v?.of}`]),
          ),
        },
      }),
    );

    // What went wrong, to read when a floor fails: a few wrong links and a few missed copies.
    const titleOf = new Map(keys.map((k, i) => [k, items[i]?.title]));
    for (const l of wrong.slice(0, 6)) {
      console.log(`wrong ${l.stage}: ${titleOf.get(l.entry_key)} ≠ ${titleOf.get(l.matched_key)}`);
    }

    expect(items.length).toBeGreaterThan(300);
    // The collectors read (nearly) everything published while it was listed.
    expect(missed / (items.length + missed)).toBeLessThan(0.02);
    expect(dead).toBe(0);
    expect(graded.length).toBeGreaterThan(100);
    expect(right.length / graded.length).toBeGreaterThanOrEqual(0.95);
    expect(pairs.precision).toBeGreaterThanOrEqual(0.9);
    // Rewrites may stay apart (a meaning stage is for them); everything else should not.
    expect(pairs.recall).toBeGreaterThan(0.6);
    for (const kind of ["tracking", "amp", "host"] as const) {
      const row = perKind[kind];
      expect(row?.of, kind).toBeGreaterThan(0);
      expect(row?.linked, kind).toBe(row?.of);
    }
    // Every wire copy of a wire story never edited since is linked; edited ones may leave.
    const rowsOf = (outlet: string, number: number) =>
      items.flatMap((o, i) => (o.outlet === outlet && o.number === number ? [i] : []));
    const unedited = items.flatMap((item, i) => {
      if (item.how !== "wire-copy" || !item.copyOf) return [];
      const source = rowsOf(item.copyOf.outlet, item.copyOf.number);
      return source.length > 0 && items[source[0] as number]?.revision === 1 ? [{ i, source }] : [];
    });
    expect(unedited.length).toBeGreaterThan(20);
    const apart = unedited.filter(
      ({ i, source }) => cluster[i] === null || !source.some((j) => cluster[j] === cluster[i]),
    );
    expect(apart.map(({ i }) => items[i]?.title)).toEqual([]);
    // Stages 1–2 settle most links (seed 002: about nine in ten; here the mix decides).
    expect(((byStage.url ?? 0) + (byStage.exact ?? 0)) / Math.max(1, links.length)).toBeGreaterThan(
      0.5,
    );
  });
});
