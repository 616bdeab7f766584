import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_THRESHOLDS, judge } from "@/lib/dedup";
import { on } from "@/lib/events";
import { createTestDatabase, requireRealPostgres, type TestDatabase } from "@/lib/testing/db";
import type { Stage, StageVerdict } from "@/workers/line/stage";
import { PermanentJobError } from "@/workers/queue/queueWorker";
import { linkItem } from "./clusters";
import { writeKeysAll } from "./decision";
import type { MeaningComparer } from "./meaning";
import { dedupStage } from "./stage";
import {
  change,
  createOutlets,
  madeUpWords,
  put,
  snapshot,
  stateOf,
  TEXTS,
  tombstone,
  variantOf,
  versionOf,
  type Written,
} from "./testing/items";

let db: TestDatabase;
let stage: Stage;
const rateNear = variantOf(TEXTS.rate, "near");
const rateGrey = variantOf(TEXTS.rate, "review");
const rateGrey2 = variantOf(TEXTS.rate, "review", 2);

beforeAll(async () => {
  db = await createTestDatabase();
  await createOutlets(db);
});
afterAll(() => db?.drop());
beforeEach(async () => {
  await db.prisma.$executeRawUnsafe(
    `TRUNCATE news, news_events, dedup_items, dedup_clusters, dedup_cluster_events, dedup_links,
              dedup_reviews, dedup_settings, dedup_anchors, jobs RESTART IDENTITY`,
  );
  stage = dedupStage(db);
});

const ctx = () => ({ db, signal: new AbortController().signal, attempt: 1 });
/** Runs the stage's job for the item's current version (or the one given). */
async function decide(w: Written | string, version?: number): Promise<StageVerdict> {
  const entryKey = typeof w === "string" ? w : w.entryKey;
  return stage.handle({ entryKey, version: version ?? (await versionOf(db, entryKey)) }, ctx());
}
const count = async (sql: string) =>
  (
    (await db.prisma.$queryRawUnsafe<{ n: number }[]>(`SELECT (${sql})::int AS n`))[0] as {
      n: number;
    }
  ).n;
const cluster = async (id: string | null) => {
  const [row] = await db.prisma.$queryRaw<
    { canonical_key: string; members: number; outlets: number; dissolved: boolean }[]
  >`SELECT canonical_key, members, outlets, dissolved_at IS NOT NULL AS dissolved
    FROM dedup_clusters WHERE id = ${id}::bigint`;
  return row;
};

describe("the cascade", () => {
  it("links a wire story copied by four outlets into one cluster, the first seen as canonical", async () => {
    const t0 = Date.parse("2026-12-01T08:00:00Z");
    const copies: Written[] = [];
    for (const [i, outlet] of ["wire", "daily", "star", "ittefaq"].entries()) {
      copies.push(
        await put(db, outlet, `strike-${outlet}`, {
          ...TEXTS.strike,
          link: `https://${outlet}.example/2026/12/01/port-strike-${i}`,
          observedAt: new Date(t0 + i * 60_000),
        }),
      );
    }
    // Decided out of order: the canonical is the earliest seen whatever the order of jobs.
    const verdicts = [];
    for (const c of copies) verdicts.push(await decide(c));
    expect(verdicts).toEqual(["survived", "dropped", "dropped", "dropped"]);
    const states = await Promise.all(copies.map((c) => stateOf(db, c.entryKey)));
    const ids = new Set(states.map((s) => s?.clusterId));
    expect(ids.size).toBe(1);
    const [first, ...rest] = states;
    expect(first).toMatchObject({ outcome: "unique", duplicateOf: null });
    for (const s of rest) {
      expect(s).toMatchObject({ outcome: "duplicate", stage: "exact", newsStage: "exact" });
      expect(s?.duplicateOf).toBe(copies[0]?.entryKey);
    }
    expect(await cluster(first?.clusterId ?? null)).toMatchObject({
      canonical_key: copies[0]?.entryKey,
      members: 4,
      outlets: 4,
      dissolved: false,
    });
    expect(await count("SELECT count(*) FROM dedup_links WHERE ended_at IS NULL")).toBe(3);
  });

  it("settles a re-visit with tracking parameters or on an AMP host by the URL", async () => {
    const a = await put(db, "daily", "rate-1", {
      ...TEXTS.rate,
      link: "https://www.daily.example/economy/rate-hold",
    });
    // Another entry (a different guid) for the same article, text trimmed by the feed.
    const b = await put(db, "daily", "rate-1-amp", {
      title: `${TEXTS.rate.title} (updated)`,
      summary: "Short teaser.",
      link: "https://amp.daily.example/economy/rate-hold/amp?utm_source=twitter&utm_medium=social",
    });
    const c = await put(db, "daily", "rate-1-tracked", {
      title: "Rate decision",
      link: "https://daily.example/economy/rate-hold?fbclid=abc123",
    });
    await decide(a);
    expect(await decide(b)).toBe("dropped");
    expect(await decide(c)).toBe("dropped");
    expect(await stateOf(db, b.entryKey)).toMatchObject({ stage: "url", duplicateOf: a.entryKey });
    expect(await stateOf(db, c.entryKey)).toMatchObject({ stage: "url", duplicateOf: a.entryKey });
    const [link] = await db.prisma.$queryRaw<
      { score: number; threshold: number; evidence: unknown }[]
    >`
      SELECT score, threshold, evidence FROM dedup_links WHERE entry_key = ${b.entryKey}`;
    expect(link).toMatchObject({ score: 1, threshold: 1 });
    expect(link?.evidence).toHaveProperty("urlKey");
  });

  it("links an edited headline by the near stage, with the score, threshold and evidence", async () => {
    const pre = judge(TEXTS.rate, rateNear, DEFAULT_THRESHOLDS);
    expect(pre.stage).toBe("near"); // the fixture still is what this test is about
    const a = await put(db, "wire", "rate-w", TEXTS.rate);
    const b = await put(db, "star", "rate-s", rateNear);
    await decide(a);
    expect(await decide(b)).toBe("dropped");
    expect(await stateOf(db, b.entryKey)).toMatchObject({
      outcome: "duplicate",
      stage: "near",
      duplicateOf: a.entryKey,
    });
    const [link] = await db.prisma.$queryRaw<
      { score: number; threshold: number; evidence: { shared: string[]; hamming: number } }[]
    >`SELECT score, threshold, evidence FROM dedup_links WHERE entry_key = ${b.entryKey}`;
    expect(link?.score).toBeCloseTo(pre.score, 6);
    expect(link?.threshold).toBe(DEFAULT_THRESHOLDS.near.duplicate);
    expect(link?.evidence.hamming).toBe(pre.hamming);
    expect(link?.evidence.shared.length).toBeGreaterThan(0);
    const [n] = await db.prisma.$queryRaw<{ dedup_threshold: number; dedup_at: Date | null }[]>`
      SELECT dedup_threshold, dedup_at FROM news WHERE entry_key = ${b.entryKey}`;
    expect(n?.dedup_threshold).toBe(DEFAULT_THRESHOLDS.near.duplicate);
    expect(n?.dedup_at).toBeInstanceOf(Date);
  });

  it("finds a rewrite out of the SimHash bands' reach by its anchors", async () => {
    const rewrite = variantOf(TEXTS.strike, "near", 3, DEFAULT_THRESHOLDS, "anchors");
    const a = await put(db, "wire", "strike-w", TEXTS.strike);
    const b = await put(db, "observer", "strike-rewrite", rewrite);
    await decide(a);
    expect(await count("SELECT count(*) FROM dedup_anchors")).toBeGreaterThan(0);
    expect(await decide(b)).toBe("dropped");
    expect(await stateOf(db, b.entryKey)).toMatchObject({ stage: "near", duplicateOf: a.entryKey });
    // A tombstone takes the item's anchors out of the lookup.
    const gone = await tombstone(db, "wire", "strike-w");
    await decide(gone);
    expect(
      await count(`SELECT count(*) FROM dedup_anchors WHERE entry_key = '${a.entryKey}'`),
    ).toBe(0);
  });

  it("leaves unrelated stories unique, and an item without text out of the lookups", async () => {
    const a = await put(db, "wire", "flood", TEXTS.flood);
    const b = await put(db, "star", "cricket", TEXTS.cricket);
    const empty = await put(db, "daily", "empty", { title: null, link: null });
    expect(await decide(a)).toBe("survived");
    expect(await decide(b)).toBe("survived");
    expect(await decide(empty)).toBe("dropped");
    expect(await stateOf(db, a.entryKey)).toMatchObject({ outcome: "unique", clusterId: null });
    expect(await stateOf(db, b.entryKey)).toMatchObject({ outcome: "unique", clusterId: null });
    expect(await stateOf(db, empty.entryKey)).toMatchObject({ outcome: "removed", live: false });
    expect(await count("SELECT count(*) FROM dedup_clusters")).toBe(0);
  });

  it("same-source duplicates are duplicates too (an outlet re-posting its story)", async () => {
    const a = await put(db, "daily", "strike-a", TEXTS.strike);
    const b = await put(db, "daily", "strike-b", TEXTS.strike);
    await decide(a);
    expect(await decide(b)).toBe("dropped");
    expect(await stateOf(db, b.entryKey)).toMatchObject({
      stage: "exact",
      duplicateOf: a.entryKey,
    });
  });

  it("only compares items first seen within the window", async () => {
    const a = await put(db, "wire", "strike-old", {
      ...TEXTS.strike,
      observedAt: new Date("2026-11-01T00:00:00Z"),
    });
    const b = await put(db, "star", "strike-new", {
      ...TEXTS.strike,
      observedAt: new Date("2026-11-05T00:00:00Z"), // 96 h later; the window is 72 h
    });
    await decide(a);
    expect(await decide(b)).toBe("survived");
    expect(await stateOf(db, b.entryKey)).toMatchObject({ outcome: "unique" });
  });
});

describe("the grey band", () => {
  it("sends the pair to review, unlinked, once; a rejected pair is never merged again", async () => {
    const pre = judge(TEXTS.rate, rateGrey, DEFAULT_THRESHOLDS);
    expect(pre.stage).toBe("review");
    const a = await put(db, "wire", "rate-w", TEXTS.rate);
    const b = await put(db, "star", "rate-grey", rateGrey);
    await decide(a);
    expect(await decide(b)).toBe("survived");
    expect(await stateOf(db, b.entryKey)).toMatchObject({
      outcome: "review",
      clusterId: null,
      duplicateOf: null,
    });
    const reviews = await db.prisma.$queryRaw<
      { state: string; entry_key: string; stage: string }[]
    >`
      SELECT state, entry_key, stage FROM dedup_reviews`;
    expect(reviews).toEqual([{ state: "pending", entry_key: b.entryKey, stage: "near" }]);

    // The operator rejects it; the item is then edited into an exact copy: still not merged.
    await db.prisma.$executeRaw`UPDATE dedup_reviews SET state = 'rejected'`;
    const b2 = await change(db, "star", "rate-grey", TEXTS.rate);
    expect(await decide(b2)).toBe("survived");
    expect(await stateOf(db, b.entryKey)).toMatchObject({ outcome: "unique", clusterId: null });
    expect(await count("SELECT count(*) FROM dedup_reviews WHERE state = 'rejected'")).toBe(1);
  });

  it("a pair an operator confirmed stays linked through an edit that keeps it grey", async () => {
    const a = await put(db, "wire", "rate-w", TEXTS.rate);
    const b = await put(db, "star", "rate-grey", rateGrey);
    await decide(a);
    await decide(b);
    // What the admin's confirm does: the review confirmed, the pair linked by stage 'review'.
    await db.prisma.$executeRaw`
      UPDATE dedup_reviews SET state = 'confirmed', decided_by = 'ops', decided_at = now()`;
    await db.prisma.$transaction((tx) =>
      linkItem(tx, {
        entryKey: b.entryKey,
        matchedKey: a.entryKey,
        stage: "review",
        score: 0.45,
        threshold: 0.5,
        settingsRevision: 1,
        itemVersion: b.version,
        evidence: null,
        decidedBy: "ops",
      }),
    );
    const b2 = await change(db, "star", "rate-grey", rateGrey2);
    expect(await decide(b2)).toBe("dropped");
    expect(await stateOf(db, b.entryKey)).toMatchObject({
      outcome: "duplicate",
      stage: "review",
      duplicateOf: a.entryKey,
    });
    expect(await count("SELECT count(*) FROM dedup_reviews WHERE state = 'pending'")).toBe(0);
  });

  it("asks the meaning hook when one is configured; a null answer still goes to review", async () => {
    const asked: string[] = [];
    const yes: MeaningComparer = {
      compare: async (item, candidate) => {
        asked.push(`${item.entryKey}~${candidate.entryKey}`);
        return { duplicate: true, score: 0.93, threshold: 0.9, evidence: { model: "test" } };
      },
    };
    const a = await put(db, "wire", "rate-w", TEXTS.rate);
    const b = await put(db, "star", "rate-grey", rateGrey);
    stage = dedupStage(db, { meaning: yes });
    await decide(a);
    expect(await decide(b)).toBe("dropped");
    expect(asked).toEqual([`${b.entryKey}~${a.entryKey}`]);
    expect(await stateOf(db, b.entryKey)).toMatchObject({
      stage: "meaning",
      duplicateOf: a.entryKey,
    });
    expect(await count("SELECT count(*) FROM dedup_reviews")).toBe(0);
  });

  it("a comparer that cannot tell (null) leaves the pair to review", async () => {
    const a = await put(db, "wire", "rate-w", TEXTS.rate);
    const b = await put(db, "star", "rate-grey", rateGrey);
    stage = dedupStage(db, { meaning: { compare: async () => null } });
    await decide(a);
    expect(await decide(b)).toBe("survived");
    expect(await stateOf(db, b.entryKey)).toMatchObject({ outcome: "review", clusterId: null });
    expect(await count("SELECT count(*) FROM dedup_reviews WHERE state = 'pending'")).toBe(1);
  });
});

describe("tombstones and edits", () => {
  async function threeCopies() {
    const t0 = Date.parse("2026-12-01T08:00:00Z");
    const out: Written[] = [];
    for (const [i, outlet] of ["wire", "daily", "star"].entries()) {
      out.push(
        await put(db, outlet, `strike-${outlet}`, {
          ...TEXTS.strike,
          observedAt: new Date(t0 + i * 60_000),
        }),
      );
    }
    for (const w of out) await decide(w);
    return out;
  }

  it("a retracted member leaves its cluster", async () => {
    const [a, b, c] = await threeCopies();
    const clusterId = (await stateOf(db, a?.entryKey as string))?.clusterId ?? null;
    const gone = await tombstone(db, "star", "strike-star");
    expect(await decide(gone)).toBe("dropped");
    expect(await stateOf(db, c?.entryKey as string)).toMatchObject({
      outcome: "removed",
      live: false,
      clusterId: null,
      duplicateOf: null,
    });
    expect(await cluster(clusterId)).toMatchObject({ canonical_key: a?.entryKey, members: 2 });
    expect(await stateOf(db, b?.entryKey as string)).toMatchObject({ duplicateOf: a?.entryKey });
    const [ended] = await db.prisma.$queryRaw<{ ended_reason: string }[]>`
      SELECT ended_reason FROM dedup_links WHERE entry_key = ${c?.entryKey}`;
    expect(ended?.ended_reason).toBe("retracted");
  });

  it("a retracted canonical hands the cluster to the earliest live member, recorded", async () => {
    const [a, b, c] = await threeCopies();
    const clusterId = (await stateOf(db, a?.entryKey as string))?.clusterId ?? null;
    const gone = await tombstone(db, "wire", "strike-wire");
    expect(await decide(gone)).toBe("dropped");
    expect(await cluster(clusterId)).toMatchObject({ canonical_key: b?.entryKey, members: 2 });
    expect(await stateOf(db, b?.entryKey as string)).toMatchObject({
      outcome: "unique",
      duplicateOf: null,
    });
    expect(await stateOf(db, c?.entryKey as string)).toMatchObject({ duplicateOf: b?.entryKey });
    const events = await db.prisma.$queryRaw<
      { kind: string; entry_key: string; detail: { from: string } }[]
    >`
      SELECT kind, entry_key, detail FROM dedup_cluster_events WHERE kind = 'elected'`;
    expect(events).toEqual([
      {
        kind: "elected",
        entry_key: b?.entryKey,
        detail: expect.objectContaining({ from: a?.entryKey }),
      },
    ]);
    // Anything new of the story now joins under the new canonical.
    const d = await put(db, "ittefaq", "strike-ittefaq", TEXTS.strike);
    await decide(d);
    expect(await stateOf(db, d.entryKey)).toMatchObject({ duplicateOf: b?.entryKey });
  });

  it("a member edited away is unlinked ('edited') and decided afresh", async () => {
    const [a, b] = await twoCopies();
    const edited = await change(db, "daily", "strike-daily", TEXTS.cricket);
    expect(await decide(edited)).toBe("survived");
    expect(await stateOf(db, b?.entryKey as string)).toMatchObject({
      outcome: "unique",
      clusterId: null,
      duplicateOf: null,
      version: edited.version,
    });
    const [ended] = await db.prisma.$queryRaw<{ ended_reason: string }[]>`
      SELECT ended_reason FROM dedup_links WHERE entry_key = ${b?.entryKey}`;
    expect(ended?.ended_reason).toBe("edited");
    // Two members were left with one: the cluster is gone, the other item alone again.
    expect(await stateOf(db, a?.entryKey as string)).toMatchObject({
      clusterId: null,
      outcome: "unique",
    });
  });

  it("a canonical edited away leaves; the others elect a new canonical", async () => {
    const [a, b, c] = await threeCopies();
    const clusterId = (await stateOf(db, a?.entryKey as string))?.clusterId ?? null;
    const edited = await change(db, "wire", "strike-wire", TEXTS.flood);
    expect(await decide(edited)).toBe("survived");
    expect(await stateOf(db, a?.entryKey as string)).toMatchObject({
      clusterId: null,
      outcome: "unique",
    });
    expect(await cluster(clusterId)).toMatchObject({ canonical_key: b?.entryKey, members: 2 });
    expect(await stateOf(db, c?.entryKey as string)).toMatchObject({ duplicateOf: b?.entryKey });
  });

  it("a member edited but still the same story stays linked", async () => {
    const [a, b] = await twoCopies();
    const edited = await change(db, "daily", "strike-daily", {
      ...TEXTS.strike,
      link: "https://daily.example/strike-over",
    });
    expect(await decide(edited)).toBe("dropped");
    expect(await stateOf(db, b?.entryKey as string)).toMatchObject({
      duplicateOf: a?.entryKey,
      version: edited.version,
    });
    expect(await count("SELECT count(*) FROM dedup_links WHERE ended_at IS NULL")).toBe(1);
  });

  async function twoCopies() {
    const a = await put(db, "wire", "strike-wire", TEXTS.strike);
    const b = await put(db, "daily", "strike-daily", TEXTS.strike);
    await decide(a);
    await decide(b);
    return [a, b];
  }
});

describe("at least once", () => {
  it("a job run twice changes nothing", async () => {
    const a = await put(db, "wire", "strike-wire", TEXTS.strike);
    const b = await put(db, "daily", "strike-daily", TEXTS.strike);
    const g = await put(db, "star", "rate", TEXTS.rate);
    const h = await put(db, "ittefaq", "rate-grey", rateGrey);
    for (const w of [a, b, g, h]) await decide(w);
    const before = await snapshot(db);
    const verdicts = [];
    for (const w of [a, b, g, h]) verdicts.push(await decide(w));
    expect(verdicts).toEqual(["survived", "dropped", "survived", "survived"]);
    expect(await snapshot(db)).toEqual(before);
  });

  it("a result for version N arriving after N+1 changes nothing", async () => {
    const a = await put(db, "wire", "strike-wire", TEXTS.strike);
    const b = await put(db, "daily", "strike-daily", TEXTS.strike);
    await decide(a);
    const v2 = await change(db, "daily", "strike-daily", TEXTS.cricket);
    // The job for v2 runs first; the late job for v1 finds a newer version and does nothing.
    expect(await decide(v2)).toBe("survived");
    const before = await snapshot(db);
    expect(await decide(b.entryKey, b.version)).toBe("superseded");
    expect(await snapshot(db)).toEqual(before);
    expect(await stateOf(db, b.entryKey)).toMatchObject({ version: v2.version, outcome: "unique" });

    // And the write itself is guarded: keys for an older version never land over newer ones.
    const written = await db.prisma.$transaction((tx) =>
      writeKeysAll(tx, false, [
        {
          entryKey: b.entryKey,
          version: b.version,
          sourceId: "daily",
          firstSeenAt: new Date(),
          live: true,
          keys: { urlKey: "x", contentKey: "y", simhash: 1n, bands: [0, 0, 0, 1] },
        },
      ]),
    );
    expect(written.size).toBe(0);
    expect(await snapshot(db)).toEqual(before);
  });

  it("a job for a version the item has not reached, or for no item, is parked at once", async () => {
    const a = await put(db, "wire", "strike-wire", TEXTS.strike);
    await expect(decide(a.entryKey, a.version + 5)).rejects.toBeInstanceOf(PermanentJobError);
    await expect(decide("0".repeat(64), 1)).rejects.toBeInstanceOf(PermanentJobError);
    expect(await count("SELECT count(*) FROM dedup_items")).toBe(0);
  });

  it("emits dedup:decided per decision, not for a re-run", async () => {
    const seen: { stage: string | null; outcome: string; ms: number }[] = [];
    const off = on("dedup:decided", (e) => seen.push(e));
    try {
      const a = await put(db, "wire", "strike-wire", TEXTS.strike);
      const b = await put(db, "daily", "strike-daily", TEXTS.strike);
      await decide(a);
      await decide(b);
      await decide(b);
    } finally {
      off();
    }
    expect(seen.map((e) => [e.stage, e.outcome])).toEqual([
      [null, "unique"],
      ["exact", "duplicate"],
    ]);
    expect(seen.every((e) => e.ms >= 0 && Number.isFinite(e.ms))).toBe(true);
  });
});

describe("thresholds", () => {
  it("inserts the defaults once and follows a new revision", async () => {
    const a = await put(db, "wire", "rate", TEXTS.rate);
    const b = await put(db, "star", "rate-edited", rateNear);
    await decide(a);
    expect(await db.prisma.dedupSettings.findMany()).toEqual([
      expect.objectContaining({ id: 1, revision: 1, thresholds: DEFAULT_THRESHOLDS }),
    ]);
    // Stricter near threshold, revision 2: the edited headline no longer links.
    await db.prisma.dedupSettings.update({
      where: { id: 1 },
      data: {
        revision: 2,
        thresholds: { ...DEFAULT_THRESHOLDS, near: { duplicate: 0.99, review: 0.98 } },
      },
    });
    expect(await decide(b)).toBe("survived");
    const [row] = await db.prisma.$queryRaw<{ outcome: string; settings_revision: number }[]>`
      SELECT outcome, settings_revision FROM dedup_items WHERE entry_key = ${b.entryKey}`;
    expect(row).toEqual({ outcome: "unique", settings_revision: 2 });
  });

  it("refuses to decide under settings that do not validate (the job retries)", async () => {
    const a = await put(db, "wire", "rate", TEXTS.rate);
    await db.prisma.dedupSettings.create({
      data: { id: 1, revision: 7, thresholds: { windowHours: -1 } },
    });
    const err = await decide(a).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(PermanentJobError);
    expect((err as Error).message).toMatch(/revision 7 is not valid/);
    expect(await count("SELECT count(*) FROM dedup_items")).toBe(0);
  });
});

describe("batches", () => {
  const names = new Map<string, string>();
  const named = (key: string | null | undefined) => (key ? (names.get(key) ?? key) : null);
  const putNamed = async (...args: Parameters<typeof put>) => {
    const w = await put(...args);
    names.set(w.entryKey, `${args[1]}/${args[2]}`);
    return w;
  };
  /** One of each kind of item, plus the stories already stored that some of them repeat. */
  async function mixedItems(): Promise<Written[]> {
    const t0 = Date.parse("2026-12-01T08:00:00Z");
    const at = (m: number) => new Date(t0 + m * 60_000);
    const stored = [
      await putNamed(db, "wire", "old-rate", { ...TEXTS.rate, observedAt: at(0) }),
      await putNamed(db, "daily", "old-strike", { ...TEXTS.strike, observedAt: at(1) }),
    ];
    for (const w of stored) await decide(w);
    const word = madeUpWords(7);
    const own = () => {
      const ws = Array.from({ length: 20 }, word);
      return { title: ws.slice(0, 8).join(" "), summary: ws.slice(8).join(" ") };
    };
    const fresh = own();
    return [
      // Copies of a story the window has not seen, in one batch, handed over newest first.
      await putNamed(db, "observer", "fresh-3", { ...fresh, observedAt: at(12) }),
      await putNamed(db, "star", "fresh-2", { ...fresh, observedAt: at(11) }),
      await putNamed(db, "wire", "fresh-1", { ...fresh, observedAt: at(10) }),
      // A near copy of one of them, and one of a stored story; a grey one; a wire copy.
      await putNamed(db, "daily", "fresh-near", {
        title: `${fresh.title} today`,
        summary: fresh.summary,
        observedAt: at(13),
      }),
      await putNamed(db, "star", "rate-near", { ...rateNear, observedAt: at(14) }),
      await putNamed(db, "ittefaq", "rate-grey", { ...rateGrey, observedAt: at(15) }),
      await putNamed(db, "ittefaq", "strike-copy", { ...TEXTS.strike, observedAt: at(16) }),
      // Unrelated stories, and a stored item retracted.
      await putNamed(db, "wire", "other-1", { ...own(), observedAt: at(17) }),
      await putNamed(db, "daily", "other-2", { ...own(), observedAt: at(18) }),
      await tombstone(db, "daily", "old-strike"),
    ];
  }
  const decisions = () =>
    db.prisma
      .$queryRawUnsafe<unknown[]>(
        `SELECT d.entry_key, d.outcome, d.stage, c.canonical_key, n.duplicate_of
       FROM dedup_items d LEFT JOIN dedup_clusters c ON c.id = d.cluster_id
       JOIN news n USING (entry_key)`,
      )
      .then((rows) =>
        (rows as Record<string, string | null>[])
          .map((r) => ({
            item: named(r.entry_key),
            outcome: r.outcome,
            stage: r.stage,
            canonical: named(r.canonical_key),
            duplicateOf: named(r.duplicate_of),
          }))
          .sort((a, b) => String(a.item).localeCompare(String(b.item))),
      );

  it("decides items handed over together as it decides them one after another", async () => {
    const items = await mixedItems();
    // One after another, in order of first sight: the reference.
    const order = [...items].sort((a, b) => a.entryKey.localeCompare(b.entryKey));
    const firstSeen = await db.prisma.$queryRaw<{ entry_key: string }[]>`
      SELECT entry_key FROM news WHERE entry_key = ANY(${order.map((w) => w.entryKey)}::text[])
      ORDER BY first_seen_at, entry_key`;
    const one = dedupStage(db, { batch: { maxBatch: 1, maxInFlight: 1 } });
    const alone: StageVerdict[] = [];
    for (const { entry_key } of firstSeen) {
      alone.push(
        await one.handle({ entryKey: entry_key, version: await versionOf(db, entry_key) }, ctx()),
      );
    }
    const reference = await decisions();

    await db.prisma.$executeRawUnsafe(
      `TRUNCATE news, news_events, dedup_items, dedup_clusters, dedup_cluster_events, dedup_links,
                dedup_reviews, dedup_anchors RESTART IDENTITY`,
    );
    const again = await mixedItems();
    const batched = dedupStage(db, { batch: { maxBatch: 64, maxInFlight: 1 } });
    const verdicts = await Promise.all(
      again.map((w) => batched.handle({ entryKey: w.entryKey, version: w.version }, ctx())),
    );
    expect(await decisions()).toEqual(reference);
    const byKey = new Map(firstSeen.map((r, i) => [r.entry_key, alone[i]]));
    expect(verdicts).toEqual(again.map((w) => byKey.get(w.entryKey)));
    // The story new to the window: one cluster, the first seen its canonical.
    const fresh = (await decisions()).filter((r) =>
      String((r as { item: string }).item).includes("fresh"),
    ) as { outcome: string; canonical: string }[];
    expect(new Set(fresh.map((r) => r.canonical))).toEqual(new Set(["wire/fresh-1"]));
    expect(fresh.map((r) => r.outcome).sort()).toEqual([
      "duplicate",
      "duplicate",
      "duplicate",
      "unique",
    ]);
  });

  it("keeps a pair an operator rejected apart inside one batch too", async () => {
    const a = await put(db, "wire", "rate-w", TEXTS.rate);
    const b = await put(db, "star", "rate-copy", { ...TEXTS.rate, link: "https://star.example/r" });
    await db.prisma.$executeRaw`
      INSERT INTO dedup_reviews (entry_key, candidate_key, pair_a, pair_b, stage, score, threshold,
                                 item_version, state, decided_by, decided_at)
      VALUES (${b.entryKey}, ${a.entryKey}, least(${a.entryKey}, ${b.entryKey}),
              greatest(${a.entryKey}, ${b.entryKey}), 'near', 1, 1, 1, 'rejected', 'ops', now())`;
    const batched = dedupStage(db, { batch: { maxBatch: 8, maxInFlight: 1 } });
    await Promise.all([a, b].map((w) => batched.handle(w, ctx())));
    expect((await stateOf(db, a.entryKey))?.clusterId).toBeNull();
    expect((await stateOf(db, b.entryKey))?.clusterId).toBeNull();
  });

  it("a decision that fails takes only its own job down; the rest of its batch is decided", async () => {
    const base = await put(db, "wire", "rate-w", TEXTS.rate);
    await decide(base);
    const grey = await put(db, "star", "rate-grey", rateGrey);
    const word = madeUpWords(11);
    const others: Written[] = [];
    for (let i = 0; i < 5; i++) {
      const ws = Array.from({ length: 16 }, word);
      others.push(await put(db, "daily", `other-${i}`, { title: ws.join(" ") }));
    }
    const failing = dedupStage(db, {
      batch: { maxBatch: 16, maxInFlight: 1 },
      meaning: {
        compare: async () => {
          throw new Error("comparer down");
        },
      },
    });
    const settled = await Promise.allSettled(
      [grey, ...others].map((w) => failing.handle(w, ctx())),
    );
    expect(settled[0]).toMatchObject({ status: "rejected", reason: { message: "comparer down" } });
    expect(settled.slice(1).map((s) => s.status)).toEqual(Array(5).fill("fulfilled"));
    for (const w of others) expect((await stateOf(db, w.entryKey))?.outcome).toBe("unique");
    // The failed one left nothing half-done: undecided, its job to retry.
    expect(
      await count(
        `SELECT count(*) FROM dedup_items WHERE entry_key = '${grey.entryKey}' AND decision_ms IS NOT NULL`,
      ),
    ).toBe(0);
  });
});

describe.skipIf(!requireRealPostgres("the dedup stage's racing decisions"))(
  "racing workers",
  () => {
    it("two workers deciding two copies of one story at once never leave both unique", async () => {
      const other = await db.connectAnother(4);
      const theirs = dedupStage(other);
      const pairs: [Written, Written][] = [];
      // Each pair its own story (words no other pair uses), the two copies byte-identical.
      const word = madeUpWords(42);
      for (let i = 0; i < 24; i++) {
        const words = Array.from({ length: 24 }, word);
        const own = { title: words.slice(0, 8).join(" "), summary: words.slice(8).join(" ") };
        pairs.push([
          await put(db, "wire", `race-${i}-a`, own),
          await put(db, "star", `race-${i}-b`, { ...own, link: `https://star.example/${i}` }),
        ]);
      }
      await Promise.all(
        pairs.map(([x, y]) =>
          Promise.all([
            stage.handle({ entryKey: x.entryKey, version: x.version }, ctx()),
            theirs.handle({ entryKey: y.entryKey, version: y.version }, { ...ctx(), db: other }),
          ]),
        ),
      );
      for (const [x, y] of pairs) {
        const sx = await stateOf(db, x.entryKey);
        const sy = await stateOf(db, y.entryKey);
        expect([sx?.outcome, sy?.outcome].sort()).toEqual(["duplicate", "unique"]);
        expect(sx?.clusterId).not.toBeNull();
        expect(sx?.clusterId).toBe(sy?.clusterId);
      }
      expect(await count("SELECT count(*) FROM dedup_clusters WHERE dissolved_at IS NULL")).toBe(
        24,
      );
    });
  },
);
