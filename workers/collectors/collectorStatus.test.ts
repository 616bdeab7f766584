import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { seedSource } from "@/lib/dashboard/testing";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { recordContent } from "./collectorStatus";

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});
beforeEach(async () => {
  await db.prisma.$executeRaw`TRUNCATE sources, network_outages CASCADE`;
  await seedSource(db, "harbour-atom");
});

/** The next item arrives `seconds` after the previous one. */
async function nextItemAfter(seconds: number) {
  await db.prisma.$executeRaw`
    UPDATE collector_status SET last_content_at = now() - make_interval(secs => ${seconds})`;
  await recordContent(db, "harbour-atom", "A");
}

async function learned() {
  const st = await db.prisma.collectorStatus.findUniqueOrThrow({
    where: { sourceId_collector: { sourceId: "harbour-atom", collector: "A" } },
  });
  return { gap: st.usualGapSeconds, seen: st.gapsSeen };
}

/** A 25 s cadence, learned from six gaps. */
async function learn25s() {
  await recordContent(db, "harbour-atom", "A");
  for (let i = 0; i < 6; i++) await nextItemAfter(25);
  expect(await learned()).toMatchObject({ seen: 6 });
  expect((await learned()).gap).toBeCloseTo(25, 0);
}

describe("the usual gap between news", () => {
  it("does not learn from a gap in which the source was failing", async () => {
    await learn25s();
    // The feed answered 503 for two minutes; the next item came 140 s after the last one.
    await db.prisma.$executeRaw`
      UPDATE source_state SET last_error_at = now() - interval '60 seconds',
                              last_error_code = 'http_503'
      WHERE source_id = 'harbour-atom'`;
    await nextItemAfter(140);
    const after = await learned();
    expect(after.seen).toBe(6);
    expect(after.gap).toBeCloseTo(25, 0);
    // Back to normal: the next gap is learned again.
    await nextItemAfter(30);
    expect((await learned()).seen).toBe(7);
  });

  it("does not learn from a gap that spans a local network outage", async () => {
    await learn25s();
    await db.prisma.networkOutage.create({
      data: {
        startedAt: new Date(Date.now() - 120_000),
        endedAt: new Date(Date.now() - 10_000),
        failingHosts: 5,
        totalHosts: 6,
      },
    });
    await nextItemAfter(140);
    expect(await learned()).toMatchObject({ seen: 6 });
    expect((await learned()).gap).toBeCloseTo(25, 0);
    // An outage that ended before the gap began does not stop learning.
    await nextItemAfter(5);
    expect((await learned()).seen).toBe(7);
  });

  it("still learns a long quiet gap with no failure in it", async () => {
    await learn25s();
    await nextItemAfter(140);
    expect((await learned()).seen).toBe(7);
    expect((await learned()).gap).toBeGreaterThan(30);
  });
});
