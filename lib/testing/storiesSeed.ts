import type { Database } from "../db";

/** The story-api source seedStoryRows writes, and what its rows add up to. */
export const STORY_SEED = {
  source: "newsfilter",
  name: "Newsfilter stories",
  tickers: ["ACME", "BRK.B"],
  open: { ACME: 3, "BRK.B": 1 },
  closed: { ACME: 1, "BRK.B": 2 },
  caughtUpSecondsAgo: 42,
  missedWebhooks: 2,
  unlistedEvents: 1,
  reloads: 1,
  /** Deliveries of events published in the last 24 h: 6 first deliveries, 2 replays. */
  verified: 8,
  replays: 2,
  /** Events published in the last hour (one of them seen by the catch-up only). */
  recentEvents: 6,
  /** Webhook lags of the last hour's delivered events: 0.4, 0.8, 1.2, 2 and 30 s. */
  lagP50: 1.2,
  lagP95: 24.4,
  rejected: { bad_signature: 3, stale_timestamp: 1 },
  /** Refused deliveries that named no source (source_id ''). */
  unattributed: { unknown_source: 2 },
  claimed: 3,
  sent: 2,
  lost: 1,
} as const;

const ago = (now: Date, seconds: number) => new Date(now.getTime() - seconds * 1000);

/**
 * Rows as the story-api consumer leaves them after a day of work: a source following ACME and
 * BRK.B (BRK.B added minutes ago, its one-time load pending), stories open and closed, a catch-up
 * 42 s ago after an old failure, one reload, events with webhook lags and replays, refused
 * deliveries (one naming no source, with markup in its detail), and claimed notifications (one
 * lost to a crash between claim and send). STORY_SEED says what they add up to.
 */
export async function seedStoryRows(db: Database, now = new Date()): Promise<void> {
  const p = db.prisma;
  const id = STORY_SEED.source;
  await p.source.create({
    data: {
      id,
      name: STORY_SEED.name,
      kind: "story-api",
      storyMode: "snapshot",
      tickers: [...STORY_SEED.tickers],
      webhookSecrets: ["whsec_c2VjcmV0LW9uZS1kby1ub3Qtc2hvdw==", "whsec_c2VjcmV0LXR3by1kby1ub3Q="],
    },
  });
  await p.storyTicker.createMany({
    data: [
      { sourceId: id, ticker: "ACME", addedAt: ago(now, 86_400), loadedAt: ago(now, 86_390) },
      { sourceId: id, ticker: "BRK.B", addedAt: ago(now, 300), loadedAt: null },
    ],
  });
  const story = (ticker: string, n: number) => ({
    id: `st_${ticker}_${n}`,
    ticker,
    version: 3,
    title: `${ticker} story ${n}`,
    strong: n === 1,
    articles: [],
    created_at: ago(now, 7200).toISOString(),
    updated_at: ago(now, 600).toISOString(),
  });
  const rows: {
    sourceId: string;
    id: string;
    ticker: string;
    version: number;
    closed: boolean;
    story?: object;
  }[] = [];
  for (const ticker of STORY_SEED.tickers) {
    for (let n = 1; n <= STORY_SEED.open[ticker]; n++) {
      rows.push({
        sourceId: id,
        id: `st_${ticker}_${n}`,
        ticker,
        version: 3,
        closed: false,
        story: story(ticker, n),
      });
    }
    for (let n = 1; n <= STORY_SEED.closed[ticker]; n++) {
      rows.push({ sourceId: id, id: `st_${ticker}_c${n}`, ticker, version: 5, closed: true });
    }
  }
  await p.story.createMany({ data: rows });
  await p.storySync.create({
    data: {
      sourceId: id,
      cursor: "evt_01JD6Z9F3Q",
      cursorSavedAt: ago(now, STORY_SEED.caughtUpSecondsAgo),
      caughtUpAt: ago(now, STORY_SEED.caughtUpSecondsAgo),
      lastError: "catch-up: http_503 from GET /v1/events",
      lastErrorAt: ago(now, 7200),
      reloads: STORY_SEED.reloads,
      reloadStartedAt: ago(now, 10_800),
      reloadFinishedAt: ago(now, 10_760),
      missedWebhooks: BigInt(STORY_SEED.missedWebhooks),
      unlistedEvents: BigInt(STORY_SEED.unlistedEvents),
    },
  });
  // [published seconds ago, webhook lag in s (null: catch-up only), deliveries]
  const events: [number, number | null, number][] = [
    [3000, 0.4, 1],
    [2400, 0.8, 3],
    [1800, 1.2, 1],
    [1200, 2, 1],
    [900, 30, 1],
    [600, null, 0],
    [10_800, 5, 1], // 3 h ago: in the day's deliveries, not in the hour's lag
    [172_800, 1, 4], // 2 days ago: outside both windows
  ];
  await p.storyEvent.createMany({
    data: events.map(([secondsAgo, lag, deliveries], i) => {
      const published = ago(now, secondsAgo);
      return {
        sourceId: id,
        eventId: `evt_${String(i).padStart(4, "0")}`,
        type: i === 1 ? "story.became_strong" : "story.updated",
        ticker: i % 2 ? "BRK.B" : "ACME",
        publishedAt: published,
        webhookAt: lag === null ? null : new Date(published.getTime() + lag * 1000),
        webhookDeliveries: deliveries,
        catchupAt: ago(now, Math.max(0, secondsAgo - 120)),
        appliedAt: published,
        reconciled: lag === null,
      };
    }),
  });
  await p.storyWebhookRejection.createMany({
    data: [
      {
        sourceId: id,
        reason: "bad_signature",
        count: BigInt(STORY_SEED.rejected.bad_signature),
        firstAt: ago(now, 5400),
        lastAt: ago(now, 120),
        lastWebhookId: "msg_2b7Qx",
        lastDetail: "no secret matched (2 tried)",
      },
      {
        sourceId: id,
        reason: "stale_timestamp",
        count: BigInt(STORY_SEED.rejected.stale_timestamp),
        firstAt: ago(now, 3600),
        lastAt: ago(now, 3600),
        lastWebhookId: "msg_9kLm",
        lastDetail: "timestamp 412 s old (limit 300 s)",
      },
      {
        sourceId: "",
        reason: "unknown_source",
        count: BigInt(STORY_SEED.unattributed.unknown_source),
        firstAt: ago(now, 1800),
        lastAt: ago(now, 60),
        lastWebhookId: null,
        lastDetail: "<script>alert(1)</script> names no source",
      },
    ],
  });
  await p.claimed.createMany({
    data: [
      {
        key: `strong:${id}/st_ACME_1`,
        sourceId: id,
        claimedAt: ago(now, 5000),
        sentAt: ago(now, 4999),
      },
      {
        key: `strong:${id}/st_BRK.B_1`,
        sourceId: id,
        claimedAt: ago(now, 2400),
        sentAt: ago(now, 2399),
      },
      // A crash between the claim and the send: lost, never sent twice.
      { key: `strong:${id}/st_ACME_2`, sourceId: id, claimedAt: ago(now, 600), sentAt: null },
    ],
  });
}
