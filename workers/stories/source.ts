import type { Database } from "@/lib/db";
import { Prisma } from "@/lib/generated/prisma/client";
import { makeDueSql } from "@/workers/queue/makeDue";
import { wakeSql } from "@/workers/queue/wake";
import { catchUpKey, STORY_QUEUE } from "./queue";

export type StoryMode = "snapshot" | "fetch";

/** A story-api source as the consumer needs it. */
export interface StorySource {
  id: string;
  url: string;
  allowPrivate: boolean;
  mode: StoryMode;
  /** Standard Webhooks secrets; several while one is being rotated. */
  secrets: string[];
  /** The tickers followed, each with when it was added: events published before are history. */
  tickers: Map<string, Date>;
  /** Tickers whose current stories have not been loaded yet (added since the last catch-up). */
  unloaded: string[];
  pollIntervalSeconds: number;
  /** The collector name its activity and content are reported under (source health). */
  collector: string;
  /** Paused by an admin (or disabled after a permanent failure): takes no webhooks meanwhile. */
  paused: string | null;
}

/**
 * Reads a story-api source, first bringing `story_tickers` in step with the source's `tickers`
 * (a ticker added gets its added_at now; one removed is forgotten, so adding it again loads it
 * again). Null when there is no such enabled story-api source.
 */
export async function loadStorySource(db: Database, id: string): Promise<StorySource | null> {
  const source = await db.prisma.source.findUnique({ where: { id }, include: { state: true } });
  if (source?.kind !== "story-api" || !source.enabled || !source.url) return null;
  const tickers = await syncTickers(db, id, source.tickers);
  return {
    id,
    url: source.url,
    allowPrivate: source.allowPrivate,
    mode: source.storyMode === "fetch" ? "fetch" : "snapshot",
    secrets: source.webhookSecrets,
    ...tickers,
    pollIntervalSeconds: source.pollIntervalSeconds,
    collector: source.collectors[0] ?? "A",
    paused: source.state?.disabledReason ?? null,
  };
}

const cache = new WeakMap<
  Database,
  Map<string, { at: number; source: Promise<StorySource | null> }>
>();

/**
 * loadStorySource, remembered for `ttlMs` per process: the webhook path and the story stage read
 * a source for every event, and three statements each time would be most of their cost. A secret
 * rotated is seen within the TTL (a webhook refused meanwhile is retried by the sender). An event
 * for a ticker the remembered source does not follow reads it afresh (`ticker`), so a ticker just
 * added in another process is never taken for one not followed.
 */
export async function cachedStorySource(
  db: Database,
  id: string,
  options: { ticker?: string; ttlMs?: number } = {},
): Promise<StorySource | null> {
  let byId = cache.get(db);
  if (!byId) {
    byId = new Map();
    cache.set(db, byId);
  }
  const hit = byId.get(id);
  const now = Date.now();
  if (hit && now - hit.at < (options.ttlMs ?? 1_000)) {
    const source = await hit.source;
    if (!source || options.ticker === undefined || source.tickers.has(options.ticker))
      return source;
  }
  const source = loadStorySource(db, id);
  byId.set(id, { at: now, source });
  // A failed read is not remembered: the next call tries again.
  source.catch(() => byId.delete(id));
  return source;
}

/** Forgets what cachedStorySource remembers (after editing a source in-process, and in tests). */
export function forgetCachedStorySources(db: Database): void {
  cache.delete(db);
}

/** The enabled story-api sources' ids. */
export async function storySourceIds(db: Database): Promise<string[]> {
  const rows = await db.prisma.source.findMany({
    where: { kind: "story-api", enabled: true },
    select: { id: true },
    orderBy: { id: "asc" },
  });
  return rows.map((r) => r.id);
}

/**
 * Brings `story_tickers` in step with the configured tickers and reads them back. Exported for
 * the catch-up, which re-reads them around every page it lists.
 */
export async function syncTickers(
  db: Database,
  sourceId: string,
  configured?: string[],
): Promise<Pick<StorySource, "tickers" | "unloaded">> {
  const wanted =
    configured ??
    (await db.prisma.source.findUnique({ where: { id: sourceId }, select: { tickers: true } }))
      ?.tickers ??
    [];
  // A ticker added makes the source's catch-up due now, so its stories are loaded at once.
  await db.prisma.$queryRaw`
    WITH gone AS (
      DELETE FROM story_tickers
      WHERE source_id = ${sourceId} AND NOT (ticker = ANY(${wanted}::text[]))
    ), added AS (
      INSERT INTO story_tickers (source_id, ticker)
      SELECT ${sourceId}, t FROM unnest(${wanted}::text[]) AS t
      ON CONFLICT DO NOTHING
      RETURNING ticker
    ), due AS (${makeDueSql(
      Prisma.sql`queue = ${STORY_QUEUE} AND key = ${catchUpKey(sourceId)} AND run_at > now()
                 AND EXISTS (SELECT 1 FROM added)`,
    )})
    SELECT (SELECT count(*) FROM added)::int AS added, (${wakeSql("due")}) AS woke`;
  const rows = await db.prisma.storyTicker.findMany({ where: { sourceId } });
  return {
    tickers: new Map(rows.map((r) => [r.ticker, r.addedAt])),
    unloaded: rows.filter((r) => r.loadedAt === null).map((r) => r.ticker),
  };
}
