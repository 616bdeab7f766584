import type { Database } from "@/lib/db";
import { logger } from "@/lib/logger";
import { recordActivity, recordContent } from "@/workers/collectors/collectorStatus";
import { CursorExpiredError, type StoryApi } from "./api";
import { type ApplyContext, applyStoryEvent } from "./apply";
import { describeIssues, STORY_EVENT_TYPES, type StoryEvent, storyEventSchema } from "./events";
import { recordWebhookRejection } from "./receiveWebhook";
import { syncTickers } from "./source";
import { closeStory, saveStory } from "./writes";

export interface CatchUpOptions {
  /** An event the catch-up finds is "missed by webhooks" only when published while its ticker
   *  was followed and longer ago than this, since its webhook may still be on its way (60 s). */
  graceSeconds?: number;
  /** Stop after this many pages (the rest waits for the next run); default: no limit. */
  maxPages?: number;
  /** Called before each page is requested (chaos runs expire cursors here). */
  beforePage?: (page: number) => void | Promise<void>;
}

export interface CatchUpResult {
  pages: number;
  events: number;
  /** Events found that no webhook had delivered. */
  missed: number;
  /** Events a webhook delivered that this catch-up's listing did not contain. */
  unlisted: number;
  reloads: number;
  tickersLoaded: string[];
  skipped: number;
}

/**
 * One catch-up run for a source (seed 001): first load the stories of tickers added since the
 * last run, then page through GET /v1/events from the saved cursor, applying every event with the
 * same handler as webhooks and saving the cursor only after its page is applied, so a crash
 * replays a page rather than skipping it. A refused cursor (410, or 400 from an API that
 * restarted and never issued it) reloads the copy in full and starts again from the
 * beginning of the window. Runs as one job per source on the `story` queue, so one at a time.
 */
export async function catchUp(
  ctx: ApplyContext,
  options: CatchUpOptions = {},
): Promise<CatchUpResult> {
  const { db, source, api } = ctx;
  const grace = options.graceSeconds ?? 60;
  const result: CatchUpResult = {
    pages: 0,
    events: 0,
    missed: 0,
    unlisted: 0,
    reloads: 0,
    tickersLoaded: [],
    skipped: 0,
  };
  const startedAt = new Date();
  await db.prisma.$executeRaw`
    INSERT INTO story_sync (source_id) VALUES (${source.id}) ON CONFLICT DO NOTHING`;

  const sync = await db.prisma.storySync.findUniqueOrThrow({ where: { sourceId: source.id } });
  let cursor = sync.cursor;
  for (;;) {
    if (options.maxPages !== undefined && result.pages >= options.maxPages) return result;
    // The tickers as of now: one added since the last page is loaded once, before it is listed.
    Object.assign(source, await syncTickers(db, source.id));
    for (const ticker of source.unloaded) {
      await loadTicker(db, source.id, api, ticker);
      result.tickersLoaded.push(ticker);
    }
    source.unloaded = [];
    const tickers = [...source.tickers.keys()].sort();
    await options.beforePage?.(result.pages);
    let page: Awaited<ReturnType<StoryApi["listEvents"]>>;
    try {
      page = await api.listEvents(cursor, tickers);
    } catch (err) {
      if (!(err instanceof CursorExpiredError)) throw err;
      if (result.reloads >= 3) {
        throw new Error(`the cursor expired ${result.reloads + 1} times in one catch-up`);
      }
      await reloadEverything(ctx, err.message);
      result.reloads++;
      cursor = null;
      continue;
    }
    // A ticker added while the page was being listed: its events from after it was added may be
    // on this page's stretch of the log, unlisted. Passing the cursor over them would lose them
    // for good, so list the same stretch again with it.
    const now = await syncTickers(db, source.id);
    if (!sameKeys(now.tickers, source.tickers)) continue;
    result.pages++;
    const applied: StoryEvent[] = [];
    for (const [i, raw] of page.data.entries()) {
      const event = parseCatchUpEvent(raw);
      if (!event.ok) {
        // Recorded and passed over: one bad event must not hold the cursor back for ever.
        result.skipped++;
        await recordWebhookRejection(
          db,
          source.id,
          "malformed_event",
          null,
          `catch-up page ${result.pages}, data[${i}]: ${event.message}`,
        );
        continue;
      }
      if (!event.value) continue;
      await applyStoryEvent(ctx, event.value);
      applied.push(event.value);
    }
    result.events += applied.length;
    await recordCaughtUp(db, source.id, applied);
    cursor = page.next_cursor;
    await db.prisma.$executeRaw`
      UPDATE story_sync SET cursor = ${cursor}, cursor_saved_at = now(),
        caught_up_at = CASE WHEN ${!page.has_more} THEN now() ELSE caught_up_at END,
        last_error = NULL
      WHERE source_id = ${source.id}`;
    if (!page.has_more) break;
  }
  Object.assign(
    result,
    await reconcile(db, source.id, grace, new Date(startedAt.getTime() - grace * 1000)),
  );
  // Source health: the API answered (activity); news we had not had by webhook arrived (content).
  if (result.missed > 0 || result.tickersLoaded.length > 0 || result.reloads > 0) {
    await recordContent(db, source.id, source.collector);
  } else {
    await recordActivity(db, source.id, source.collector, "fetch");
  }
  return result;
}

function sameKeys(a: Map<string, unknown>, b: Map<string, unknown>): boolean {
  return a.size === b.size && [...a.keys()].every((k) => b.has(k));
}

function parseCatchUpEvent(
  raw: unknown,
): { ok: true; value: StoryEvent | null } | { ok: false; message: string } {
  const type = (raw as { type?: unknown } | null)?.type;
  if (typeof type === "string" && !(STORY_EVENT_TYPES as readonly string[]).includes(type)) {
    return { ok: true, value: null };
  }
  const parsed = storyEventSchema.safeParse(raw);
  return parsed.success
    ? { ok: true, value: parsed.data }
    : { ok: false, message: describeIssues(parsed.error) };
}

/** Marks a page's events as seen by the catch-up and applied, in one statement. */
async function recordCaughtUp(db: Database, sourceId: string, events: StoryEvent[]): Promise<void> {
  if (events.length === 0) return;
  const rows = events.map((e) => ({ id: e.id, type: e.type, ticker: e.ticker, at: e.created_at }));
  await db.prisma.$executeRaw`
    INSERT INTO story_events AS e
      (source_id, event_id, type, ticker, published_at, catchup_at, applied_at)
    SELECT DISTINCT ON (id) ${sourceId}, id, type, ticker, at, now(), now()
    FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
      AS i(id text, type text, ticker text, at timestamptz)
    ON CONFLICT (source_id, event_id) DO UPDATE
      SET catchup_at = coalesce(e.catchup_at, now()), applied_at = now()`;
}

/**
 * Reconciliation, after a catch-up reached the end, in one statement over the events not yet
 * settled (a partial index keeps that set small). Each event is settled once:
 * - missed: the catch-up has it, no webhook brought it although it was published while its
 *   ticker was followed, longer ago than the grace (its webhook may still be on its way);
 * - unlisted: a webhook brought it, published before this catch-up began (less the grace), and no
 *   catch-up listed it;
 * - settled without counting: seen both ways, or history from before its ticker was followed.
 */
async function reconcile(
  db: Database,
  sourceId: string,
  graceSeconds: number,
  listedBefore: Date,
): Promise<{ missed: number; unlisted: number }> {
  const [row] = await db.prisma.$queryRaw<{ missed: number; unlisted: number }[]>`
    WITH judged AS (
      SELECT e.event_id,
             CASE
               WHEN e.webhook_at IS NOT NULL AND e.catchup_at IS NOT NULL THEN 'both'
               WHEN e.webhook_at IS NULL AND (t.added_at IS NULL OR e.published_at < t.added_at)
                 THEN 'history'
               WHEN e.webhook_at IS NULL
                    AND e.published_at < now() - make_interval(secs => ${graceSeconds}) THEN 'missed'
               WHEN e.catchup_at IS NULL AND e.published_at < ${listedBefore} THEN 'unlisted'
             END AS verdict
      FROM story_events e
      LEFT JOIN story_tickers t ON t.source_id = e.source_id AND t.ticker = e.ticker
      WHERE e.source_id = ${sourceId} AND NOT e.reconciled
    ), settled AS (
      UPDATE story_events e SET reconciled = true
      FROM judged j
      WHERE e.source_id = ${sourceId} AND e.event_id = j.event_id AND j.verdict IS NOT NULL
      RETURNING j.verdict
    ), counted AS (
      SELECT (count(*) FILTER (WHERE verdict = 'missed'))::int AS missed,
             (count(*) FILTER (WHERE verdict = 'unlisted'))::int AS unlisted
      FROM settled
    ), bumped AS (
      UPDATE story_sync
      SET missed_webhooks = missed_webhooks + (SELECT missed FROM counted),
          unlisted_events = unlisted_events + (SELECT unlisted FROM counted)
      WHERE source_id = ${sourceId}
    )
    SELECT missed, unlisted FROM counted`;
  return { missed: row?.missed ?? 0, unlisted: row?.unlisted ?? 0 };
}

/** A ticker's current stories, loaded once after it is added (events keep them up to date). */
async function loadTicker(
  db: Database,
  sourceId: string,
  api: StoryApi,
  ticker: string,
): Promise<void> {
  for (const story of await api.listStories(ticker)) await saveStory(db, sourceId, story);
  await db.prisma.$executeRaw`
    UPDATE story_tickers SET loaded_at = now() WHERE source_id = ${sourceId} AND ticker = ${ticker}`;
}

/**
 * Rebuilds the copy (seed 001's three steps) without throwing anything away: closed rows stop a
 * reload or a replayed event from bringing a story back, and claims stop repeat notifications.
 * Webhooks keep arriving meanwhile; every write is the same safe write. Step 3 (clear the cursor,
 * catch up from the start of the window) is the caller's loop.
 */
export async function reloadEverything(
  ctx: ApplyContext,
  reason = "catch-up cursor expired (410)",
): Promise<void> {
  const { db, source, api } = ctx;
  const log = logger().child({ part: "stories", source: source.id });
  await db.prisma.$executeRaw`
    UPDATE story_sync SET reloads = reloads + 1, reload_started_at = now() WHERE source_id = ${source.id}`;
  log.warn({ reason }, "catch-up cursor refused: reloading the story copy in full");
  const listed = new Set<string>();
  for (const ticker of source.tickers.keys()) {
    for (const story of await api.listStories(ticker)) {
      listed.add(story.id);
      await saveStory(db, source.id, story);
    }
  }
  const open = await db.prisma.story.findMany({
    where: { sourceId: source.id, closed: false, ticker: { in: [...source.tickers.keys()] } },
    select: { id: true, ticker: true },
  });
  for (const row of open) {
    if (listed.has(row.id)) continue;
    // Created during the reload (save it), or closed since (close it on 404).
    const story = await api.getStory(row.id);
    if (story) await saveStory(db, source.id, story);
    else await closeStory(db, source.id, row.id, 0, row.ticker);
  }
  await db.prisma.$executeRaw`
    UPDATE story_sync SET cursor = NULL, cursor_saved_at = now(), reload_finished_at = now()
    WHERE source_id = ${source.id}`;
  log.info({ listed: listed.size }, "story copy reloaded");
}
