import type { Database } from "@/lib/db";
import { emit } from "@/lib/events";
import { CATEGORIES, EXTRACTION_LANGUAGES } from "@/lib/extract/types";
import type { Prisma, ReadStory } from "@/lib/generated/prisma/client";
import { logger } from "@/lib/logger";
import {
  DEFAULT_PAGE_LIMIT,
  listId,
  orderKey,
  PREBUILT_PAGES,
  storyKey,
} from "@/lib/readmodel/keys";
import {
  orderPayload,
  pagePayload,
  parseOrder,
  publicStory,
  storyPayload,
} from "@/lib/readmodel/payload";
import { DEFAULT_RANK_WEIGHTS, type RankWeights, rank } from "@/lib/readmodel/rank";
import type { Payload, PublicStory, ReadModelStore } from "@/lib/readmodel/types";
import { reconcileChanges } from "./indexStage";

/**
 * The newest stories (by first seen) a model holds: at the default 6 h half-life the 5,000th
 * story of a busy day ranks far below page 5, and the home order stays ~340 KB of ids. Older
 * stories leave the read model (their /api/news/{id} answers 404).
 */
export const MODEL_STORIES = 5_000;
/**
 * A version's order payloads stay for cursors this long after the next version replaced it (the
 * issue's "at least 10 minutes"): a reader paging slowly finishes a walk in its frozen order.
 */
export const ORDER_RETENTION_MS = 10 * 60_000;
/**
 * Changed stories are re-read from this far before the last build's read: an index statement
 * stamps indexed_at with its own clock and commits a moment later, so one that stamped just
 * before the read but committed just after it is caught by the next build (re-putting a story's
 * payload unchanged costs one write).
 */
const CHANGED_MARGIN_MS = 5_000;
/** The builder's own inline reconcile re-reads this far back (the line's sweep keeps 30 s). */
const RECONCILE_MARGIN_MS = 5_000;

/**
 * Every list a model has, built at every version even when empty, so any filter a reader can ask
 * for (a category of lib/extract CATEGORIES, a language) has an order and a first page at the
 * head: 1 + 16 + 3 + 48 = 68 lists.
 */
export const LISTS: readonly string[] = [
  listId(),
  ...CATEGORIES.map((category) => listId({ category })),
  ...EXTRACTION_LANGUAGES.map((lang) => listId({ lang })),
  ...CATEGORIES.flatMap((category) =>
    EXTRACTION_LANGUAGES.map((lang) => listId({ category, lang })),
  ),
];

export interface BuilderOptions {
  /** Where the payloads go (the process's read model store). */
  store: ReadModelStore | (() => Promise<ReadModelStore>);
  /** How often it looks for changes (WIREWATCH_READ_MODEL_INTERVAL_MS). */
  intervalMs?: number;
  weights?: RankWeights;
  /** Run the index stage's cluster and retraction changes inline before each build (default on). */
  reconcile?: boolean;
}

export interface BuildResult {
  modelVersion: number;
  trigger: string;
  stories: number;
  changed: number;
  removed: number;
  payloads: number;
  bytes: number;
  lagSeconds: number[];
  seconds: number;
}

export interface ReadModelBuilder {
  /**
   * Builds a version now if read_stories changed since the last build (always when `force`, and
   * when the store has no model); null when nothing changed or another builder holds the lock.
   */
  buildNow(options?: { force?: boolean; trigger?: string }): Promise<BuildResult | null>;
  /** Starts the loop: a build at once, then every interval when something changed. */
  start(): void;
  /** Stops the loop and waits for the build in flight. */
  stop(): Promise<void>;
}

type Query = Pick<Prisma.TransactionClient, "$queryRaw" | "$executeRaw">;

/** PGlite is one process's: the builders of that process take turns here. */
const embeddedBusy = new WeakSet<object>();

/**
 * The read model's builder (issue 16): turns read_stories into a model version — each list's
 * frozen order (`order:<version>:<list>`), its first 5 pages at limit 20, the changed stories'
 * payloads — stores them, then moves the head to it. One builder at a time across processes: on
 * PostgreSQL a transaction-scoped advisory lock tried without waiting (a second process skips and
 * looks again an interval later; the lock goes with the transaction if the process dies); on
 * PGlite, one process by construction, a flag. A failed build leaves the head where it was: the
 * last model stays served.
 */
export function createReadModelBuilder(db: Database, options: BuilderOptions): ReadModelBuilder {
  const log = logger().child({ part: "readmodel" });
  const intervalMs = options.intervalMs ?? 2_000;
  const weights = options.weights ?? DEFAULT_RANK_WEIGHTS;
  const reconcile = options.reconcile ?? true;
  const store =
    typeof options.store === "function"
      ? options.store
      : async () => options.store as ReadModelStore;
  let wroteAll = false;
  let reconciledFrom: Date | null = null;
  let timer: NodeJS.Timeout | null = null;
  let stopped = false;
  let inFlight: Promise<unknown> = Promise.resolve();
  let lastPruned = 0;

  const locked = async <T>(fn: (q: Query) => Promise<T>): Promise<T | null> => {
    if (db.kind === "pglite") {
      if (embeddedBusy.has(db.prisma)) return null;
      embeddedBusy.add(db.prisma);
      try {
        return await fn(db.prisma);
      } finally {
        embeddedBusy.delete(db.prisma);
      }
    }
    return db.prisma.$transaction(
      async (tx) => {
        const [got] = await tx.$queryRaw<{ ok: boolean }[]>`
          SELECT pg_try_advisory_xact_lock(hashtextextended('wirewatch:readmodel:builder', 0)) AS ok`;
        return got?.ok ? fn(tx) : null;
      },
      // A build of 5,000 stories takes well under a second; a minute is a database in trouble.
      { maxWait: 10_000, timeout: 60_000 },
    );
  };

  const buildNow: ReadModelBuilder["buildNow"] = async (opts = {}) => {
    const started = performance.now();
    try {
      return await locked(async (q) => {
        const s = await store();
        if (reconcile) {
          const from = new Date((reconciledFrom ?? new Date()).getTime() - RECONCILE_MARGIN_MS);
          reconciledFrom = new Date();
          await reconcileChanges(db, from);
        }
        const head = await s.head();
        // The last build any process made (this store may be another process's copy that has
        // not refreshed yet): what changed is judged against it, so two builder processes taking
        // turns at the lock build once per change.
        const last = await lastBuild(q);
        const previous = last ? await homeIds(s, last.version) : null;
        if (!opts.force && head && last && !(await changedSince(q, last, previous))) return null;
        return build(
          q,
          s,
          head,
          last,
          previous,
          opts.trigger ?? (last ? "changed" : "start"),
          started,
        );
      });
    } catch (err) {
      const seconds = (performance.now() - started) / 1000;
      const error = err instanceof Error ? err.message : String(err);
      log.error({ err }, "read model build failed; the last model stays");
      await db.prisma.$executeRaw`
        INSERT INTO read_model_builds (model_version, started_at, finished_at, build_ms, trigger, error)
        VALUES (0, now() - make_interval(secs => ${seconds}), now(), ${seconds * 1000},
                ${opts.trigger ?? "changed"}, ${error.slice(0, 2_000)})`.catch(() => undefined);
      emit("readmodel:failed", { seconds, error: error.slice(0, 500) });
      throw err;
    }
  };

  const build = async (
    q: Query,
    s: ReadModelStore,
    head: { modelVersion: number; builtAt: Date } | null,
    last: LastBuild | null,
    previous: string[] | null,
    trigger: string,
    started: number,
  ): Promise<BuildResult> => {
    // After the store lost everything (Redis flushed) the version still moves forward, so no
    // cursor or ETag of an older model ever names the new one.
    const version = Math.max(head?.modelVersion ?? 0, last?.version ?? 0) + 1;
    // Two reads: what ranking needs of every story (8 narrow columns: 5,000 rows in ~75 ms on a
    // loaded 2-core machine, against ~150-500 ms for whole rows with their outlets), then whole
    // rows only for the stories a payload shows (the prebuilt pages and the changed stories).
    const rows = await q.$queryRaw<RankRow[]>`
      SELECT story_key, category, language, breaking, outlet_count, first_seen_at, indexed_at,
             fetched_at, statement_timestamp() AS read_at
      FROM read_stories ORDER BY first_seen_at DESC, story_key LIMIT ${MODEL_STORIES}`;
    const [clock] = await q.$queryRaw<{ now: Date }[]>`SELECT statement_timestamp() AS now`;
    const builtAt = rows[0]?.read_at ?? clock?.now ?? new Date();

    const ranked = rank(
      rows.map((r) => ({
        id: r.story_key,
        firstSeenAt: r.first_seen_at,
        outlets: r.outlet_count,
        breaking: r.breaking,
      })),
      builtAt,
      weights,
    );
    const byId = new Map(rows.map((r) => [r.story_key, r]));
    const orders = new Map<string, string[]>(LISTS.map((list) => [list, []]));
    for (const { id } of ranked) {
      for (const list of listsOf(byId.get(id) as RankRow)) orders.get(list)?.push(id);
    }

    const everything = !wroteAll || head === null;
    const since = last ? last.builtAt.getTime() : Number.NEGATIVE_INFINITY;
    const changedRows = rows.filter((r) => r.indexed_at.getTime() > since);
    const toWrite = everything
      ? rows
      : rows.filter((r) => r.indexed_at.getTime() > since - CHANGED_MARGIN_MS);
    const shown = new Set(toWrite.map((r) => r.story_key));
    for (const ids of orders.values()) {
      for (const id of ids.slice(0, PREBUILT_PAGES * DEFAULT_PAGE_LIMIT)) shown.add(id);
    }
    const stories = await readStories(q, [...shown]);

    const payloads: Payload[] = [];
    for (const [list, ids] of orders) {
      payloads.push(orderPayload(list, ids, version, builtAt));
      const pages = Math.max(
        1,
        Math.min(PREBUILT_PAGES, Math.ceil(ids.length / DEFAULT_PAGE_LIMIT)),
      );
      for (let p = 0; p < pages; p++) {
        const offset = p * DEFAULT_PAGE_LIMIT;
        // A story deleted between the two reads is left out, as a page built from the order
        // later leaves it out; the next build (it sees the deletion) drops it from the order.
        const items = ids
          .slice(offset, offset + DEFAULT_PAGE_LIMIT)
          .flatMap((id) => stories.get(id) ?? []);
        payloads.push(
          pagePayload(list, DEFAULT_PAGE_LIMIT, offset, items, ids.length, version, builtAt),
        );
      }
    }
    for (const r of toWrite) {
      const story = stories.get(r.story_key);
      if (story) payloads.push(storyPayload(story, version, builtAt));
    }

    await s.put(payloads);
    await s.setHead({ modelVersion: version, builtAt });
    wroteAll = true;
    const removed = previous ? previous.filter((id) => !byId.has(id)) : [];
    if (removed.length > 0) await s.delete(removed.map(storyKey));

    const seconds = (performance.now() - started) / 1000;
    const finishedAt = new Date(builtAt.getTime() + seconds * 1000);
    const lagSeconds = changedRows.map((r) =>
      Math.max(0, (finishedAt.getTime() - r.fetched_at.getTime()) / 1000),
    );
    const bytes = payloads.reduce((n, p) => n + p.body.length, 0);
    await q.$executeRaw`
      INSERT INTO read_model_builds (model_version, started_at, finished_at, build_ms, stories,
                                     changed, payloads, bytes, lag_p50_ms, lag_p99_ms, trigger)
      VALUES (${version}, ${builtAt}, ${finishedAt}, ${seconds * 1000}, ${rows.length},
              ${changedRows.length}, ${payloads.length}, ${bytes},
              ${quantileMs(lagSeconds, 0.5)}, ${quantileMs(lagSeconds, 0.99)}, ${trigger})`;
    await prune(q, s, version);
    const result: BuildResult = {
      modelVersion: version,
      trigger,
      stories: rows.length,
      changed: changedRows.length,
      removed: removed.length,
      payloads: payloads.length,
      bytes,
      lagSeconds,
      seconds,
    };
    emit("readmodel:built", {
      modelVersion: version,
      seconds,
      stories: rows.length,
      changed: changedRows.length,
      payloads: payloads.length,
      bytes,
      lagSeconds,
      trigger,
    });
    log.debug({ ...result, lagSeconds: undefined }, "read model built");
    return result;
  };

  /**
   * The order payloads of versions whose successor was set more than ORDER_RETENTION_MS ago: a
   * cursor is made while its version is the head, so it stays good for at least that long after.
   * Versions already pruned by this process are skipped; after a restart the last hour's are
   * asked again (deleting a missing key is nothing).
   */
  const prune = async (q: Query, s: ReadModelStore, current: number) => {
    const old = await q.$queryRaw<{ v: bigint }[]>`
      SELECT b.model_version AS v FROM read_model_builds b
      WHERE b.error IS NULL AND b.model_version < ${current} AND b.model_version > ${lastPruned}
        AND b.finished_at > now() - interval '1 hour'
        AND EXISTS (SELECT 1 FROM read_model_builds n
                    WHERE n.error IS NULL AND n.model_version > b.model_version
                      AND n.finished_at < now() - make_interval(secs => ${ORDER_RETENTION_MS / 1000}))
      ORDER BY b.model_version`;
    if (old.length === 0) return;
    await s.delete(old.flatMap(({ v }) => LISTS.map((list) => orderKey(list, Number(v)))));
    lastPruned = Number(old[old.length - 1]?.v ?? lastPruned);
  };

  const tick = () => {
    const run = buildNow().catch(() => undefined);
    inFlight = run;
    void run.finally(() => {
      if (!stopped) timer = setTimeout(tick, intervalMs);
    });
  };

  return {
    buildNow,
    start: () => {
      stopped = false;
      tick();
    },
    stop: async () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      await inFlight;
    },
  };
}

interface RankRow {
  story_key: string;
  category: string | null;
  language: string | null;
  breaking: boolean;
  outlet_count: number;
  first_seen_at: Date;
  indexed_at: Date;
  fetched_at: Date;
  read_at: Date;
}

const KNOWN_LISTS = new Set(LISTS);

/** The lists a story is in: home, its category, its language, both (those a model has). */
function listsOf(r: RankRow): string[] {
  // Spelled as listId spells them, unchecked: a value outside the known lists is simply in none.
  const lists = ["home"];
  if (r.category) lists.push(`category:${r.category}`);
  if (r.language) lists.push(`lang:${r.language}`);
  if (r.category && r.language) lists.push(`category:${r.category}|lang:${r.language}`);
  return lists.filter((l) => KNOWN_LISTS.has(l));
}

/** Whole rows of these stories, as the public API shows them. */
async function readStories(q: Query, ids: string[]): Promise<Map<string, PublicStory>> {
  const rows = await q.$queryRaw<ReadStory[]>`
    SELECT story_key AS "storyKey", source_id AS "sourceId", item_version AS "itemVersion",
           title, link, summary, category, language, breaking, outlets,
           outlet_count AS "outletCount", published_at AS "publishedAt",
           first_seen_at AS "firstSeenAt", fetched_at AS "fetchedAt",
           updated_at AS "updatedAt", indexed_at AS "indexedAt"
    FROM read_stories WHERE story_key = ANY(${ids}::text[])`;
  return new Map(rows.map((r) => [r.storyKey, publicStory(r)]));
}

/** The head's home order: every story it holds (null when it cannot be read). */
async function homeIds(s: ReadModelStore, version: number): Promise<string[] | null> {
  const p = await s.get(orderKey("home", version));
  return p ? parseOrder(p).ids : null;
}

interface LastBuild {
  version: number;
  /** Its read of read_stories (read_model_builds.started_at, the model's builtAt). */
  builtAt: Date;
  stories: number;
}

async function lastBuild(q: Query): Promise<LastBuild | null> {
  const [r] = await q.$queryRaw<{ v: bigint; started_at: Date; stories: number }[]>`
    SELECT model_version AS v, started_at, stories FROM read_model_builds
    WHERE error IS NULL ORDER BY model_version DESC LIMIT 1`;
  return r ? { version: Number(r.v), builtAt: r.started_at, stories: r.stories } : null;
}

/**
 * Whether read_stories changed since the last build read it: a row stamped after that read, or a
 * story it held gone (a deleted row leaves no stamp, so the ids of its home order are probed, one
 * index probe each; without that order in this store, the count of what a model would hold).
 */
async function changedSince(
  q: Query,
  last: LastBuild,
  previous: string[] | null,
): Promise<boolean> {
  const [r] = await q.$queryRaw<{ newer: boolean; present: number; held: number }[]>`
    SELECT EXISTS (SELECT 1 FROM read_stories WHERE indexed_at > ${last.builtAt}) AS newer,
           (SELECT count(*)::int FROM read_stories
            WHERE story_key = ANY(${previous ?? []}::text[])) AS present,
           (SELECT count(*)::int FROM (SELECT 1 FROM read_stories LIMIT ${MODEL_STORIES}) x) AS held`;
  if (!r || r.newer) return true;
  return previous ? r.present < previous.length : r.held !== last.stories;
}

function quantileMs(seconds: number[], q: number): number | null {
  if (seconds.length === 0) return null;
  const sorted = [...seconds].sort((a, b) => a - b);
  const i = Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1);
  return (sorted[Math.max(0, i)] as number) * 1000;
}
