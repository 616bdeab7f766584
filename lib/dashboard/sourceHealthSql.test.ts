import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HEALTH_STATES, type HealthState } from "@/lib/health";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { readSourceKeys } from "./sourceIndex";
import { pageFromSnapshot, type SourceListQuery } from "./sourceList";
import { listSources, type SourceRow } from "./sources";

/**
 * The SQL health (filtering and sorting the list) against lib/health.ts (the row's shown state)
 * over sources whose facts are drawn across every boundary that moves the answer: if the two
 * disagreed, a source filtered as "stalled" would show as "quiet".
 */

let db: TestDatabase;
const now = new Date("2026-12-24T12:00:00Z");
const SOURCES = 400;

/** Deterministic draws (mulberry32), so a failure names the same source every run. */
function random(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const secondsAgo = (s: number) => new Date(now.getTime() - s * 1000);

beforeAll(async () => {
  db = await createTestDatabase();
  const r = random(7);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
  // Ages around the thresholds: a 300 s feed stalls after 450 s, a stream after 22.5 s, a feed
  // polled every 1,200 s after 1,800 s; the assumed gap is 3,600 s (silent past 10,800 s).
  const ages = [
    null,
    0,
    5,
    20,
    25,
    100,
    400,
    500,
    1_000,
    1_700,
    1_900,
    3_000,
    4_000,
    11_000,
    90_000,
  ];
  for (let i = 0; i < SOURCES; i++) {
    const id = `s${String(i).padStart(3, "0")}`;
    await db.prisma.source.create({
      data: {
        id,
        name: `Source ${id}`,
        kind: pick(["feed", "feed", "stream", "page"]),
        pollIntervalSeconds: pick([10, 300, 300]),
        enabled: r() > 0.05,
        createdAt: secondsAgo(pick([10, 200, 600, 86_400])),
      },
    });
    if (r() > 0.1) {
      const errorAge = pick(ages);
      await db.prisma.sourceState.create({
        data: {
          sourceId: id,
          breakerState: pick(["closed", "closed", "closed", "open", "half_open"]),
          disabledReason: pick([null, null, null, null, "", "http_410"]),
          lastErrorAt: errorAge === null ? null : secondsAgo(errorAge),
          lastErrorCode: errorAge === null ? null : "timeout",
          pollEverySeconds: pick([null, null, 60, 1_200]),
        },
      });
    }
    const collectors = pick([0, 1, 1, 2]);
    for (const collector of ["A", "B"].slice(0, collectors)) {
      const activity = pick(ages);
      const content = pick(ages);
      await db.prisma.collectorStatus.create({
        data: {
          sourceId: id,
          collector,
          lastActivityAt: activity === null ? null : secondsAgo(activity),
          lastContentAt: content === null ? null : secondsAgo(content),
          usualGapSeconds: pick([null, 60, 600]),
          gapsSeen: pick([0, 4, 5, 20]),
        },
      });
    }
  }
}, 120_000);

afterAll(async () => {
  await db?.drop();
});

describe("health in SQL", () => {
  it("is the state lib/health.ts gives every source", async () => {
    const shown = new Map((await all({})).map((s) => [s.id, s.health.state]));
    expect(shown.size).toBe(SOURCES);
    const filtered = new Map<string, HealthState>();
    for (const state of HEALTH_STATES) {
      for (const s of await all({ health: state })) filtered.set(s.id, state);
    }
    const disagree = [...shown].filter(([id, state]) => filtered.get(id) !== state);
    expect(disagree.map(([id, state]) => `${id}: ${state} / ${filtered.get(id)}`)).toEqual([]);
    // The draws reach every state, so each branch of the expression was compared.
    expect(new Set(shown.values())).toEqual(new Set(HEALTH_STATES));
  });

  it("sorts by the same states, worst first when descending", async () => {
    const order = (await all({ sort: "health", dir: "desc" })).map((s) => s.health.state);
    expect(order).toHaveLength(SOURCES);
    const ranks = order.map((s) => HEALTH_STATES.indexOf(s));
    expect(ranks).toEqual([...ranks].sort((a, b) => b - a));
  });
});

describe("the snapshot of every source's keys", () => {
  it("pages, filters and orders as the SQL does", async () => {
    const snapshot = await readSourceKeys(db, now);
    expect(snapshot.keys).toHaveLength(SOURCES);
    const queries: SourceListQuery[] = [
      {},
      { sort: "health", dir: "desc" },
      { sort: "health" },
      { health: "stalled" },
      { health: "quiet", q: "S01" },
      { sort: "lastPolled", dir: "desc" },
      { sort: "errorRate", dir: "desc", kind: "feed" },
      { breaker: "open", sort: "health" },
      { health: "healthy", sort: "name", dir: "desc" },
    ];
    for (const query of queries) {
      const fromSql = (await all(query)).map((s) => s.id);
      const fromSnapshot: string[] = [];
      let cursor: string | undefined;
      do {
        const page = pageFromSnapshot(snapshot, { ...query, limit: 150, cursor });
        fromSnapshot.push(...page.ids);
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
      expect(fromSnapshot, JSON.stringify(query)).toEqual(fromSql);
    }
  });
});

/** Every page of a query, in order, through its cursors (pages of 150: several per state). */
async function all(query: SourceListQuery): Promise<SourceRow[]> {
  const rows: SourceRow[] = [];
  let cursor: string | undefined;
  do {
    const page = await listSources(db, { ...query, limit: 150, cursor }, now);
    rows.push(...page.sources);
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return rows;
}
