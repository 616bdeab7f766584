import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { STORY_SEED, seedStoryRows } from "@/lib/testing/storiesSeed";
import { STALE_CURSOR_SECONDS, storiesView, storyHealth } from "./stories";
import { minutesBefore, seedSource } from "./testing";

let db: TestDatabase;
const now = new Date();

beforeAll(async () => {
  db = await createTestDatabase();
  await seedStoryRows(db, now);
  // A claim made a moment ago and not sent yet: being sent, not lost.
  await db.prisma.claimed.create({
    data: {
      key: `strong:${STORY_SEED.source}/st_ACME_3`,
      sourceId: STORY_SEED.source,
      claimedAt: new Date(now.getTime() - 2_000),
    },
  });
  // A second story-api source whose catch-up fails since it last reached the end, in fetch mode,
  // with nothing else recorded yet; and a feed source, which the page does not show.
  await db.prisma.source.create({
    data: {
      id: "pressroom",
      name: "Pressroom",
      kind: "story-api",
      storyMode: "fetch",
      tickers: ["ZETA"],
      webhookSecrets: ["whsec_b25lLXNlY3JldA=="],
    },
  });
  await db.prisma.storySync.create({
    data: {
      sourceId: "pressroom",
      caughtUpAt: minutesBefore(now, 30),
      lastError: "catch-up: cursor_expired (410) from GET /v1/events",
      lastErrorAt: minutesBefore(now, 1),
    },
  });
  await seedSource(db, "meridian");
});

afterAll(async () => {
  await db?.drop();
});

describe("storiesView", () => {
  it("gives per story-api source its tickers, catch-up, webhooks, rejections and notifications", async () => {
    const v = await storiesView(db, { now });
    expect(v.sources.map((s) => s.id)).toEqual(["newsfilter", "pressroom"]);
    const s = v.sources[0];
    expect(s).toMatchObject({
      name: STORY_SEED.name,
      mode: "snapshot",
      secrets: 2,
      health: "caught_up",
      stories: { open: 4, closed: 3 },
      reloads: { count: 1, inProgress: false },
      webhooks: { verified: STORY_SEED.verified, first: 6, replays: STORY_SEED.replays },
      notifications: { claimed: 4, sent: 2, lost: 1, sending: 1 },
    });
    expect(JSON.stringify(v)).not.toContain("whsec_");
    expect(s?.tickers).toEqual([
      expect.objectContaining({ ticker: "ACME", open: 3, closed: 1, followed: true }),
      expect.objectContaining({ ticker: "BRK.B", open: 1, closed: 2, loadedAt: null }),
    ]);
    expect(s?.tickers[0]?.loadedAt).toBeInstanceOf(Date);
    expect(s?.sync).toMatchObject({
      missedWebhooks: 2,
      unlistedEvents: 1,
      lastError: "catch-up: http_503 from GET /v1/events",
    });
    expect(s?.sync.cursorAgeSeconds).toBeCloseTo(42, 0);
    expect(s?.recent.events).toBe(STORY_SEED.recentEvents);
    expect(s?.recent.lagP50Seconds).toBeCloseTo(STORY_SEED.lagP50, 3);
    expect(s?.recent.lagP95Seconds).toBeCloseTo(STORY_SEED.lagP95, 3);
    expect(s?.rejected.total).toBe(4);
    expect(s?.rejected.reasons.map((r) => [r.reason, r.count])).toEqual([
      ["bad_signature", 3],
      ["stale_timestamp", 1],
    ]);
    expect(s?.rejected.reasons[0]).toMatchObject({
      lastWebhookId: "msg_2b7Qx",
      lastDetail: "no secret matched (2 tried)",
    });
    expect(v.unattributed.map((r) => [r.reason, r.count])).toEqual([["unknown_source", 2]]);
  });

  it("says a catch-up that failed since it last reached the end is failing, and counts nothing it has not seen", async () => {
    const v = await storiesView(db, { now });
    const s = v.sources.find((x) => x.id === "pressroom");
    expect(s).toMatchObject({
      mode: "fetch",
      secrets: 1,
      health: "failing",
      tickers: [{ ticker: "ZETA", open: 0, closed: 0, followed: false, loadedAt: null }],
      webhooks: { verified: 0, first: 0, replays: 0 },
      rejected: { total: 0, reasons: [] },
      notifications: { claimed: 0, sent: 0, lost: 0, sending: 0 },
      recent: { events: 0, lagP50Seconds: null, lagP95Seconds: null },
    });
    expect(s?.sync.cursorAgeSeconds).toBeCloseTo(1800, 0);
  });

  it("narrows the delivery counts to the window", async () => {
    const v = await storiesView(db, { now, hours: 1 });
    // The 3-hours-old event (1 delivery) drops out; the hour's 5 first deliveries and 2 replays stay.
    expect(v.sources[0]?.webhooks).toEqual({ verified: 7, first: 5, replays: 2 });
  });

  it("answers an empty list when no story-api source is configured", async () => {
    const other = await createTestDatabase();
    try {
      await seedSource(other, "meridian");
      expect(await storiesView(other, { now })).toMatchObject({ sources: [], unattributed: [] });
    } finally {
      await other.drop();
    }
  });
});

describe("storyHealth", () => {
  const at = (s: number) => new Date(now.getTime() - s * 1000);
  it("puts a reload first, then a failure newer than the last catch-up, then the cursor's age", () => {
    const base = { cursorAgeSeconds: 42, caughtUpAt: at(42), lastErrorAt: null, reloading: false };
    expect(storyHealth(base)).toBe("caught_up");
    expect(storyHealth({ ...base, reloading: true, lastErrorAt: at(1) })).toBe("reloading");
    expect(storyHealth({ ...base, lastErrorAt: at(10) })).toBe("failing");
    expect(storyHealth({ ...base, lastErrorAt: at(100) })).toBe("caught_up");
    expect(
      storyHealth({
        ...base,
        cursorAgeSeconds: STALE_CURSOR_SECONDS + 1,
        caughtUpAt: at(STALE_CURSOR_SECONDS + 1),
      }),
    ).toBe("stale");
    expect(storyHealth({ ...base, cursorAgeSeconds: null, caughtUpAt: null })).toBe("never");
    expect(
      storyHealth({ ...base, cursorAgeSeconds: null, caughtUpAt: null, lastErrorAt: at(5) }),
    ).toBe("failing");
  });
});
