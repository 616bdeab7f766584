import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "@/lib/db";
import { createTestDatabase, requireRealPostgres, type TestDatabase } from "@/lib/testing/db";
import { edit, observe, retract, type WriteOutcome, writeBatch } from "./index";
import {
  type Delivery,
  deliveriesArb,
  expectedRow,
  expectedSightings,
  type ModelRow,
  type Plan,
  toDeliveries,
  toModelRow,
} from "./testing/referenceModel";

// Property runs per test; raise it for a soak (PROPERTY_RUNS=2000 npm run test:unit).
const RUNS = Number(process.env.PROPERTY_RUNS ?? 100);
const SOURCE = "prop-wire";

let db: TestDatabase;
let run = 0;

beforeAll(async () => {
  db = await createTestDatabase();
  await db.prisma.source.create({ data: { id: SOURCE, name: "Property wire", kind: "stream" } });
});
afterAll(() => db?.drop());

function deliver(target: Database, d: Delivery): Promise<WriteOutcome> {
  if (d.kind === "retract") return retract(target, d.input);
  return d.kind === "edit" ? edit(target, d.input) : observe(target, d.input);
}

async function deliverAll(target: Database, ds: Delivery[]): Promise<WriteOutcome[]> {
  const out: WriteOutcome[] = [];
  for (const d of ds) out.push(await deliver(target, d));
  return out;
}

/** The item's deliveries in the order the writer applied them (its news_events id order). */
async function appliedOrder(entryKey: string, deliveries: Delivery[]) {
  const events = await db.prisma.newsEvent.findMany({
    where: { entryKey },
    orderBy: { id: "asc" },
  });
  const byTime = new Map(deliveries.map((d) => [d.input.observedAt as string, d]));
  return {
    events,
    applied: events.map((e) => {
      const d = byTime.get(e.observedAt.toISOString());
      if (!d) throw new Error(`event ${e.id} matches no delivery`);
      return d;
    }),
  };
}

async function currentRow(entryKey: string): Promise<ModelRow> {
  return toModelRow(await db.prisma.news.findUniqueOrThrow({ where: { entryKey } }));
}

/**
 * The contract's invariants for one item after its deliveries. `delivered`, when the deliveries
 * went in one at a time in a known order, is that order: the history's rows and sightings are
 * then exactly the model's.
 */
async function checkItem(
  entryKey: string,
  deliveries: Delivery[],
  expectedEvents: number,
  delivered?: Delivery[],
) {
  const { events, applied } = await appliedOrder(entryKey, deliveries);
  // news_events accounts for every delivery: a row each, or a sighting counted on the row it repeats
  expect(events.reduce((n, e) => n + e.sightings, 0)).toBe(expectedEvents);
  if (delivered) expect(events.map((e) => e.sightings)).toEqual(expectedSightings(delivered));
  // versions never decrease: each change writes the next one, in the order applied
  const versions = events.flatMap((e) => (e.version === null ? [] : [e.version]));
  expect(versions).toEqual(versions.map((_v, i) => i + 1));
  // the current row is what the model computes
  const row = await currentRow(entryKey);
  expect(row).toEqual(expectedRow(applied));
  // repair, which rebuilds from the audit table with the writer's merge, finds nothing to fix
  const [drift] = await db.prisma.$queryRaw<{ same: boolean }[]>`
    SELECT (n.quality, n.title, n.link, n.summary, n.category, n.language, n.published_at,
            n.breaking, n.instruments, n.deleted_at IS NOT NULL)
           IS NOT DISTINCT FROM
           (b.quality, b.title, b.link, b.summary, b.category, b.language, b.published_at,
            b.breaking, b.instruments, b.deleted_at IS NOT NULL) AS same
    FROM news n CROSS JOIN LATERAL news_rebuild(n.entry_key) b WHERE n.entry_key = ${entryKey}`;
  expect(drift?.same).toBe(true);
  return row;
}

const permutation = (plans: Plan[]) =>
  fc.shuffledSubarray(plans, { minLength: plans.length, maxLength: plans.length });

describe("the writer against the reference model", () => {
  it("random deliveries in two random orders, each delivered twice", async () => {
    await fc.assert(
      fc.asyncProperty(
        deliveriesArb().chain(({ truth, plans }) =>
          fc.tuple(fc.constant(truth), fc.constant(plans), permutation(plans), permutation(plans)),
        ),
        async ([truth, plans, order1, order2]) => {
          run += 1;
          const start = Date.UTC(2026, 5, 12, 9) + run * 1_000;
          const a = toDeliveries(
            truth,
            order1,
            { sourceId: SOURCE, guid: `r${run}-a` },
            start,
            plans,
          );
          const b = toDeliveries(
            truth,
            order2,
            { sourceId: SOURCE, guid: `r${run}-b` },
            start,
            plans,
          );

          const c = toDeliveries(
            truth,
            order1,
            { sourceId: SOURCE, guid: `r${run}-c` },
            start,
            plans,
          );

          const firstA = await deliverAll(db, a);
          const againA = await deliverAll(db, a);
          await deliverAll(db, b);
          await deliverAll(db, b);
          // The same deliveries as A, batched: same decisions, one by one, and the same row.
          const batched = await writeBatch(db, [...c, ...c]);
          expect(batched.map((o) => [o.result, o.version, o.notified])).toEqual(
            [...firstA, ...againA].map((o) => [o.result, o.version, o.notified]),
          );

          // A second full delivery changes nothing at all.
          expect(againA.map((o) => o.result)).toEqual(a.map(() => "unchanged"));
          const keyA = firstA[0]?.entryKey as string;
          const keyB = (await observeKey(b)) as string;
          const rowA = await checkItem(keyA, a, 2 * a.length, [...a, ...a]);
          const rowB = await checkItem(keyB, b, 2 * b.length, [...b, ...b]);
          const rowC = await checkItem(batched[0]?.entryKey as string, c, 2 * c.length, [
            ...c,
            ...c,
          ]);
          expect(rowC).toEqual(rowA);

          // Without a retraction, and once any authoritative view arrived, order does not matter.
          const retracted = plans.some((p) => p.kind === "retract");
          const authoritative = plans.some((p) => p.kind !== "fallback");
          if (!retracted && authoritative) expect(rowB).toEqual(rowA);
        },
      ),
      { numRuns: RUNS },
    );
  });
});

const concurrent = requireRealPostgres("concurrent property deliveries");

describe.skipIf(!concurrent)("the writer against the reference model, racing writers", () => {
  it("the same deliveries raced by 4 connections, each in its own order", async () => {
    const writers = await Promise.all([1, 2, 3, 4].map(() => db.connectAnother(2)));
    await fc.assert(
      fc.asyncProperty(
        deliveriesArb().chain(({ truth, plans }) =>
          fc.tuple(
            fc.constant(truth),
            fc.constant(plans),
            fc.array(permutation(plans), { minLength: 4, maxLength: 4 }),
          ),
        ),
        async ([truth, plans, orders]) => {
          run += 1;
          const start = Date.UTC(2026, 5, 12, 9) + run * 1_000;
          const identity = { sourceId: SOURCE, guid: `race${run}` };
          const lanes = orders.map((o) => toDeliveries(truth, o, identity, start, plans));
          const outcomes = await Promise.all(
            lanes.map((lane, i) => deliverAll(writers[i] as Database, lane)),
          );
          const key = outcomes[0]?.[0]?.entryKey as string;
          await checkItem(key, lanes[0] as Delivery[], 4 * plans.length);
        },
      ),
      { numRuns: RUNS },
    );
  });
});

async function observeKey(ds: Delivery[]): Promise<string | undefined> {
  const { entryKey } = await import("@/lib/canonical");
  return ds[0] ? entryKey(SOURCE, ds[0].input.guid as string) : undefined;
}
