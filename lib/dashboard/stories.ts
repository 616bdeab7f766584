import type { Database } from "@/lib/db";

/**
 * A catch-up older than this is stale (the dashboard says so in amber; deploy/alerts.yml pages at
 * the same 15 min): the catch-up runs every few minutes, so three missed rounds in a row.
 */
export const STALE_CURSOR_SECONDS = 15 * 60;

/**
 * A claim without sent_at younger than this is still being sent, not lost: sending one
 * notification takes well under a second, 60 s leaves room for a slow mail relay.
 */
export const SEND_GRACE_SECONDS = 60;

/** Rejection details come from unauthenticated requests: shown as text, and only this much. */
const DETAIL_CHARS = 200;

export type StoryHealth =
  /** The last catch-up reached the end of the event list less than 15 min ago. */
  | "caught_up"
  /** It did, but longer ago than that. */
  | "stale"
  /** The last catch-up attempt failed after the last one that succeeded. */
  | "failing"
  /** A full reload is running. */
  | "reloading"
  /** No catch-up has reached the end yet. */
  | "never";

export interface StoryRejection {
  reason: string;
  count: number;
  firstAt: Date;
  lastAt: Date;
  lastWebhookId: string | null;
  lastDetail: string | null;
}

export interface StorySourceView {
  id: string;
  name: string;
  enabled: boolean;
  mode: string | null;
  /** How many webhook secrets are configured (never the secrets): 2 while one is rotated. */
  secrets: number;
  health: StoryHealth;
  /** Followed tickers (configured or recorded), with their stories open and closed. */
  tickers: {
    ticker: string;
    open: number;
    closed: number;
    /** In story_tickers (the consumer has picked it up). */
    followed: boolean;
    addedAt: Date | null;
    /** When its one-time load of current stories finished; null while pending. */
    loadedAt: Date | null;
  }[];
  stories: { open: number; closed: number };
  sync: {
    /** now − caught_up_at; null if no catch-up ever reached the end of the event list. */
    cursorAgeSeconds: number | null;
    caughtUpAt: Date | null;
    cursorSavedAt: Date | null;
    lastError: string | null;
    lastErrorAt: Date | null;
    /** Events the catch-up found that no webhook delivered. */
    missedWebhooks: number;
    /** Events a webhook delivered that the catch-up passed without listing. */
    unlistedEvents: number;
  };
  reloads: {
    count: number;
    lastStartedAt: Date | null;
    lastFinishedAt: Date | null;
    inProgress: boolean;
  };
  /** Over the events published in the window (`hours`). */
  webhooks: {
    /** Verified deliveries, replays included. */
    verified: number;
    /** Events whose first delivery arrived. */
    first: number;
    /** Deliveries of an event already delivered (deduplicated by event id). */
    replays: number;
  };
  /** Refused deliveries naming this source, all time, by reason. */
  rejected: { total: number; reasons: StoryRejection[] };
  /** One-time "story became strong" notifications, all time. */
  notifications: {
    claimed: number;
    sent: number;
    /** Claimed, never sent, older than SEND_GRACE_SECONDS: lost to a crash in between. */
    lost: number;
    /** Claimed moments ago and not sent yet. */
    sending: number;
  };
  /** Over the last hour. */
  recent: {
    /** Events published in the last hour, seen either way. */
    events: number;
    /** Webhook lag (webhook_at − published_at) of those a webhook delivered. */
    lagP50Seconds: number | null;
    lagP95Seconds: number | null;
  };
}

export interface StoriesView {
  now: Date;
  /** The window of the delivery counts. */
  hours: number;
  sources: StorySourceView[];
  /** Refused deliveries no source could be told for (source_id ''), by reason. */
  unattributed: StoryRejection[];
}

/**
 * The story-API copy's state per story-api source. Every query is keyed by source id on an index
 * of its table (stories_ticker_idx, the primary keys of story_tickers, story_sync and
 * story_webhook_rejections, claimed_source_idx, story_events_published_idx for a bounded range of
 * published_at) and capped by a LIMIT; only the sources list filters on kind, over a table of tens
 * of rows.
 */
export async function storiesView(
  db: Database,
  {
    hours = 24,
    now = new Date(),
    sourceLimit = 50,
  }: { hours?: number; now?: Date; sourceLimit?: number } = {},
): Promise<StoriesView> {
  const p = db.prisma;
  const sources = await p.$queryRaw<
    {
      id: string;
      name: string;
      enabled: boolean;
      story_mode: string | null;
      tickers: string[];
      secrets: number;
    }[]
  >`
    SELECT id, name, enabled, story_mode, tickers,
           coalesce(cardinality(webhook_secrets), 0)::int AS secrets
    FROM sources WHERE kind = 'story-api'
    ORDER BY enabled DESC, id LIMIT ${sourceLimit}`;
  const ids = sources.map((s) => s.id);
  const since = new Date(now.getTime() - hours * 3_600_000);
  const hourAgo = new Date(now.getTime() - 3_600_000);
  const grace = new Date(now.getTime() - SEND_GRACE_SECONDS * 1000);

  const [tickers, counts, syncs, events, recent, claims, rejections] = await Promise.all([
    p.$queryRaw<{ source_id: string; ticker: string; added_at: Date; loaded_at: Date | null }[]>`
      SELECT source_id, ticker, added_at, loaded_at FROM story_tickers
      WHERE source_id = ANY(${ids}::text[]) ORDER BY source_id, ticker LIMIT 2000`,
    p.$queryRaw<{ source_id: string; ticker: string | null; open: number; closed: number }[]>`
      SELECT source_id, ticker, (count(*) FILTER (WHERE NOT closed))::int AS open,
             (count(*) FILTER (WHERE closed))::int AS closed
      FROM stories WHERE source_id = ANY(${ids}::text[])
      GROUP BY source_id, ticker ORDER BY source_id, ticker LIMIT 2000`,
    p.storySync.findMany({ where: { sourceId: { in: ids } }, take: sourceLimit }),
    p.$queryRaw<{ source_id: string; verified: number; first: number }[]>`
      SELECT source_id, coalesce(sum(webhook_deliveries), 0)::float8 AS verified,
             (count(*) FILTER (WHERE webhook_at IS NOT NULL))::float8 AS first
      FROM story_events
      WHERE source_id = ANY(${ids}::text[]) AND published_at >= ${since} AND published_at <= ${now}
      GROUP BY source_id LIMIT ${sourceLimit}`,
    p.$queryRaw<{ source_id: string; events: number; p50: number | null; p95: number | null }[]>`
      SELECT source_id, count(*)::int AS events,
             (percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM webhook_at - published_at))
               FILTER (WHERE webhook_at IS NOT NULL))::float8 AS p50,
             (percentile_cont(0.95) WITHIN GROUP (ORDER BY extract(epoch FROM webhook_at - published_at))
               FILTER (WHERE webhook_at IS NOT NULL))::float8 AS p95
      FROM story_events
      WHERE source_id = ANY(${ids}::text[]) AND published_at >= ${hourAgo} AND published_at <= ${now}
      GROUP BY source_id LIMIT ${sourceLimit}`,
    p.$queryRaw<{ source_id: string; claimed: number; sent: number; lost: number }[]>`
      SELECT source_id, count(*)::int AS claimed, count(sent_at)::int AS sent,
             (count(*) FILTER (WHERE sent_at IS NULL AND claimed_at < ${grace}))::int AS lost
      FROM claimed WHERE source_id = ANY(${ids}::text[])
      GROUP BY source_id LIMIT ${sourceLimit}`,
    p.$queryRaw<
      {
        source_id: string;
        reason: string;
        count: number;
        first_at: Date;
        last_at: Date;
        last_webhook_id: string | null;
        last_detail: string | null;
      }[]
    >`
      SELECT source_id, reason, count::float8 AS count, first_at, last_at,
             left(last_webhook_id, ${DETAIL_CHARS}::int) AS last_webhook_id,
             left(last_detail, ${DETAIL_CHARS}::int) AS last_detail
      FROM story_webhook_rejections
      WHERE source_id = ANY(${[...ids, ""]}::text[])
      ORDER BY source_id, count DESC, reason LIMIT 500`,
  ]);

  const bySource = <T extends { source_id: string }>(rows: T[]) => {
    const map = new Map<string, T[]>();
    for (const r of rows) map.set(r.source_id, [...(map.get(r.source_id) ?? []), r]);
    return map;
  };
  const tickersBy = bySource(tickers);
  const countsBy = bySource(counts);
  const rejectionsBy = bySource(rejections);
  const toRejection = (r: (typeof rejections)[number]): StoryRejection => ({
    reason: r.reason,
    count: Number(r.count),
    firstAt: r.first_at,
    lastAt: r.last_at,
    lastWebhookId: r.last_webhook_id,
    lastDetail: r.last_detail,
  });

  return {
    now,
    hours,
    sources: sources.map((s): StorySourceView => {
      const sync = syncs.find((y) => y.sourceId === s.id);
      const ev = events.find((e) => e.source_id === s.id);
      const rec = recent.find((r) => r.source_id === s.id);
      const claim = claims.find((c) => c.source_id === s.id);
      const storyCounts = countsBy.get(s.id) ?? [];
      const followed = tickersBy.get(s.id) ?? [];
      const names = [
        ...new Set([
          ...s.tickers,
          ...followed.map((t) => t.ticker),
          ...storyCounts.flatMap((c) => (c.ticker ? [c.ticker] : [])),
        ]),
      ].sort();
      const reasons = (rejectionsBy.get(s.id) ?? []).map(toRejection);
      const reloads = {
        count: sync?.reloads ?? 0,
        lastStartedAt: sync?.reloadStartedAt ?? null,
        lastFinishedAt: sync?.reloadFinishedAt ?? null,
        inProgress:
          !!sync?.reloadStartedAt &&
          sync.reloadStartedAt.getTime() > (sync.reloadFinishedAt?.getTime() ?? -Infinity),
      };
      const caughtUpAt = sync?.caughtUpAt ?? null;
      const cursorAgeSeconds = caughtUpAt
        ? Math.max(0, (now.getTime() - caughtUpAt.getTime()) / 1000)
        : null;
      const verified = Number(ev?.verified ?? 0);
      const first = Number(ev?.first ?? 0);
      return {
        id: s.id,
        name: s.name,
        enabled: s.enabled,
        mode: s.story_mode,
        secrets: s.secrets,
        health: storyHealth({
          cursorAgeSeconds,
          caughtUpAt,
          lastErrorAt: sync?.lastErrorAt ?? null,
          reloading: reloads.inProgress,
        }),
        tickers: names.map((ticker) => {
          const c = storyCounts.find((x) => x.ticker === ticker);
          const t = followed.find((x) => x.ticker === ticker);
          return {
            ticker,
            open: c?.open ?? 0,
            closed: c?.closed ?? 0,
            followed: t !== undefined,
            addedAt: t?.added_at ?? null,
            loadedAt: t?.loaded_at ?? null,
          };
        }),
        stories: {
          open: storyCounts.reduce((n, c) => n + c.open, 0),
          closed: storyCounts.reduce((n, c) => n + c.closed, 0),
        },
        sync: {
          cursorAgeSeconds,
          caughtUpAt,
          cursorSavedAt: sync?.cursorSavedAt ?? null,
          lastError: sync?.lastError ?? null,
          lastErrorAt: sync?.lastErrorAt ?? null,
          missedWebhooks: Number(sync?.missedWebhooks ?? 0),
          unlistedEvents: Number(sync?.unlistedEvents ?? 0),
        },
        reloads,
        webhooks: { verified, first, replays: Math.max(0, verified - first) },
        rejected: { total: reasons.reduce((n, r) => n + r.count, 0), reasons },
        notifications: {
          claimed: claim?.claimed ?? 0,
          sent: claim?.sent ?? 0,
          lost: claim?.lost ?? 0,
          sending: (claim?.claimed ?? 0) - (claim?.sent ?? 0) - (claim?.lost ?? 0),
        },
        recent: {
          events: rec?.events ?? 0,
          lagP50Seconds: rec?.p50 ?? null,
          lagP95Seconds: rec?.p95 ?? null,
        },
      };
    }),
    unattributed: (rejectionsBy.get("") ?? []).map(toRejection),
  };
}

/** Reloading wins (it clears the cursor on purpose); then a failure newer than the last success. */
export function storyHealth({
  cursorAgeSeconds,
  caughtUpAt,
  lastErrorAt,
  reloading,
}: {
  cursorAgeSeconds: number | null;
  caughtUpAt: Date | null;
  lastErrorAt: Date | null;
  reloading: boolean;
}): StoryHealth {
  if (reloading) return "reloading";
  if (lastErrorAt && lastErrorAt.getTime() > (caughtUpAt?.getTime() ?? -Infinity)) return "failing";
  if (cursorAgeSeconds === null) return "never";
  return cursorAgeSeconds > STALE_CURSOR_SECONDS ? "stale" : "caught_up";
}
