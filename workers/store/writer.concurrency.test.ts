import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "@/lib/db";
import { createTestDatabase, requireRealPostgres, type TestDatabase } from "@/lib/testing/db";
import { edit, observe, retract } from "./index";
import {
  type Delivery,
  deliveriesArb,
  expectedRow,
  toDeliveries,
  toModelRow,
} from "./testing/referenceModel";

type NewsRow = Parameters<typeof toModelRow>[0];

const WRITERS = 8;
const OBSERVATIONS = 1_000;
const enabled = requireRealPostgres("8 racing writers over 1,000 observations");

function deliver(target: Database, d: Delivery) {
  if (d.kind === "retract") return retract(target, d.input);
  return d.kind === "edit" ? edit(target, d.input) : observe(target, d.input);
}

/** 1,000 realistic deliveries over many items, for one source; deterministic. */
function workload(sourceId: string): Delivery[] {
  const out: Delivery[] = [];
  const items = fc.sample(deliveriesArb(), { seed: 20260612, numRuns: 400 });
  for (const [i, { truth, plans }] of items.entries()) {
    const start = Date.UTC(2026, 5, 12) + i * 1_000;
    out.push(...toDeliveries(truth, plans, { sourceId, guid: `item-${i}` }, start));
    if (out.length >= OBSERVATIONS) break;
  }
  return out.slice(0, OBSERVATIONS);
}

function shuffled<T>(xs: T[], seed: number): T[] {
  const copy = [...xs];
  let s = seed;
  for (let i = copy.length - 1; i > 0; i--) {
    s = (s * 1_103_515_245 + 12_345) % 2_147_483_648;
    const j = s % (i + 1);
    [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
  }
  return copy;
}

describe.skipIf(!enabled)("racing writers on real PostgreSQL", () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase();
    await db.prisma.source.createMany({
      data: [
        { id: "serial", name: "Serial delivery", kind: "stream" },
        { id: "race", name: "Racing delivery", kind: "stream" },
      ],
    });
  });
  afterAll(() => db?.drop());

  it("8 connections delivering the same 1,000 observations leave one row per item, as a serial delivery does", async () => {
    const serial = workload("serial");
    for (const d of serial) await deliver(db, d);

    const race = workload("race");
    const writers = await Promise.all(Array.from({ length: WRITERS }, () => db.connectAnother(1)));
    await Promise.all(
      writers.map(async (writer, w) => {
        for (const d of shuffled(race, w + 1)) await deliver(writer, d);
      }),
    );

    const guids = new Set(race.map((d) => d.input.guid as string));
    const rows = async (sourceId: string) =>
      new Map(
        (await db.prisma.news.findMany({ where: { sourceId } })).map((r) => [r.canonicalId, r]),
      );
    const [serialRows, raceRows] = await Promise.all([rows("serial"), rows("race")]);
    expect(raceRows.size).toBe(guids.size);
    expect(serialRows.size).toBe(guids.size);
    // every delivery is accounted for: its own row, or a sighting counted on the row it repeats
    const accounted = await db.prisma.newsEvent.aggregate({
      where: { sourceId: "race" },
      _sum: { sightings: true },
    });
    expect(accounted._sum.sightings).toBe(WRITERS * OBSERVATIONS);

    let compared = 0;
    let retracted = 0;
    for (const guid of guids) {
      const s = toModelRow(serialRows.get(guid) as NewsRow);
      const r = toModelRow(raceRows.get(guid) as NewsRow);
      const mine = race.filter((d) => d.input.guid === guid);
      const authoritative = mine.some((d) => d.input.origin !== "fallback");
      if (s.deleted || r.deleted) {
        // A tombstone freezes the row as it was when the retraction landed, which depends on
        // the interleaving; it must still be the tombstone, and what the model says for the
        // order the writer actually applied.
        expect(r.deleted).toBe(true);
        const events = await db.prisma.newsEvent.findMany({
          where: { entryKey: (raceRows.get(guid) as { entryKey: string }).entryKey },
          orderBy: { id: "asc" },
        });
        const byTime = new Map(mine.map((d) => [d.input.observedAt as string, d]));
        expect(r).toEqual(
          expectedRow(events.map((e) => byTime.get(e.observedAt.toISOString()) as Delivery)),
        );
        retracted += 1;
      } else if (authoritative) {
        expect(r).toEqual(s);
        compared += 1;
      }
    }
    // The workload must exercise both paths, or this test proves little.
    expect(compared).toBeGreaterThan(50);
    expect(retracted).toBeGreaterThan(10);
  });
});
