import type { Database } from "@/lib/db";
import { CATEGORIES } from "@/lib/extract/types";
import { Prisma } from "@/lib/generated/prisma/client";
import type { ItemJob, Stage, StageVerdict } from "@/workers/line/stage";
import { PermanentJobError } from "@/workers/queue/queueWorker";

/** The index stage's name: its queue and its line_cursors row. */
export const INDEX_STAGE = "index";

/** A summary is cut here: 20 stories a page × 400 characters keeps a page near 15 KB. */
const SUMMARY_CHARS = 400;

export interface IndexStageOptions {
  /**
   * What the stage before it is: "extract" (survivors are items with an extraction at their
   * version) or "dedup" (the line has no extraction: survivors are dedup's canonical items).
   */
  after: "extract" | "dedup";
}

interface ItemState {
  version: number;
  story: string | null;
}

/**
 * The read model's index stage (issue 16), the processing line's last: keeps `read_stories`
 * current for the story an item belongs to, a story being a dedup cluster's canonical item (or
 * an item alone). For item@version it rewrites the item's own row (written when the item is a
 * story, deleted when it is not: retracted, removed, a duplicate now) and, when the item is a
 * duplicate, its canonical's row (its outlets). The builder (builder.ts) turns read_stories into
 * payloads; this stage never reads nor writes one.
 *
 * Fed by extract's survivors (handed on) and by its sweep (`pending`): survivors the hand-on
 * lost, clusters that changed (a duplicate linked, a link undone, a canonical re-elected, a
 * member retracted: none of them reaches extract) and stories retracted or removed. The builder
 * runs the last two inline before each build (`reconcileChanges`), so they reach the read model
 * within one build interval instead of the sweep's 5 s plus a queue turn.
 *
 * Safe to run twice and at once: each story's row is one statement under a transaction-scoped
 * advisory lock on the story, computed from what is committed when the lock is held, so two jobs
 * about one story write in turn and the second sees the first's commit; the write replaces only a
 * row at an older or equal item_version and only when something a reader sees changed (so
 * `indexed_at`, the builder's "what changed", moves only then). indexed_at is the statement's
 * clock_timestamp(), not the transaction's start (which precedes the wait for the story's lock):
 * the row commits a moment after its stamp, so a build reading at time T misses only rows
 * stamped within that moment before T, which its next build re-reads (builder.ts).
 */
export function indexStage(db: Database, options: IndexStageOptions): Stage {
  return {
    name: INDEX_STAGE,
    handsOn: [],
    // Each job is two or three short statements; 4 at once keep up with dedup's batches of 32
    // without taking more than 4 of the pool's connections.
    concurrency: 4,
    handle: (job) => indexItem(db, job),
    pending: (since) => Prisma.sql`
      ${options.after === "extract" ? extractedSince(since) : decidedSince(since)}
      UNION ALL ${clusterChangesSince(since)}
      UNION ALL ${goneSince(since)}`,
    horizon: () => Prisma.sql`SELECT greatest(
      (SELECT max(${options.after === "extract" ? Prisma.sql`extracted_at) FROM item_extractions` : Prisma.sql`decided_at) FROM dedup_items`}),
      (SELECT max(updated_at) FROM dedup_clusters),
      (SELECT max(updated_at) FROM news))`,
  };
}

/** The index stage's handler: the item's own row and its story's. */
export async function indexItem(db: Database, job: ItemJob): Promise<StageVerdict> {
  const state = await itemState(db, job.entryKey);
  if (!state) throw new PermanentJobError(`index: no news row ${job.entryKey}`, "no_item");
  if (state.version > job.version) return "superseded";
  if (state.version < job.version) {
    throw new PermanentJobError(
      `index: job for version ${job.version} of ${job.entryKey}, which is at ${state.version}`,
      "bad_version",
    );
  }
  await indexStories(db, storiesOf(job.entryKey, state));
  return "survived";
}

function storiesOf(entryKey: string, state: ItemState): string[] {
  return state.story && state.story !== entryKey ? [entryKey, state.story] : [entryKey];
}

async function itemState(db: Database, entryKey: string): Promise<ItemState | null> {
  const [row] = await db.prisma.$queryRaw<{ version: number; story: string | null }[]>`
    SELECT n.version, c.canonical_key AS story
    FROM news n
    LEFT JOIN dedup_items d ON d.entry_key = n.entry_key
    LEFT JOIN dedup_clusters c ON c.id = d.cluster_id AND c.dissolved_at IS NULL
    WHERE n.entry_key = ${entryKey}`;
  return row ? { version: Number(row.version), story: row.story } : null;
}

/**
 * Rewrites the rows of these entry keys (each written if it is a story, deleted if not), each in
 * its own short transaction: the story's advisory lock, then one statement. Returns how many
 * rows changed (written or deleted).
 */
export async function indexStories(db: Database, keys: readonly string[]): Promise<number> {
  let changed = 0;
  for (const key of [...new Set(keys)].sort()) {
    changed += await db.prisma.$transaction(async (tx) => {
      // Serialises the writers of one story (a job, a sweep's job, the builder's reconcile):
      // the statement below then reads what the previous one committed. hashtextextended's 64
      // bits make two stories sharing a lock a 1 in 10^19 chance, and then they only queue.
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`read_stories:${key}`}, 0))`;
      const [r] = await tx.$queryRaw<{ deleted: number; written: number }[]>`${writeStory(key)}`;
      return (r?.deleted ?? 0) + (r?.written ?? 0);
    });
  }
  return changed;
}

/**
 * One statement per decision: the story's row from news, its cluster's live members (one outlet
 * per source, its earliest item, the story's own first), its extraction (category, language,
 * summary; the feed's own when there is none) and the observations that produced the versions
 * shown; written over an older or equal item_version when anything a reader sees differs, or
 * the row deleted when the key is no story (retracted, removed, a duplicate, no title).
 *
 * fetched_at: the latest fetch among the versions the story shows (the canonical's and each
 * outlet's; news_events.observed_at of the observation that wrote that version). A story that
 * gains an outlet is as fresh as that outlet's fetch, so the build's lag ("fetch → available in
 * the read model") measures the change a reader sees, not the canonical's first fetch hours ago.
 * Items without an observation (imported history) fall back to news.updated_at.
 */
function writeStory(key: string): Prisma.Sql {
  return Prisma.sql`
    WITH s AS (
      SELECT n.entry_key, n.source_id, n.version, n.title, n.link, n.summary, n.category,
             n.language, n.breaking, n.published_at, n.first_seen_at, n.updated_at, d.cluster_id,
             x.category AS x_category, x.language AS x_language, x.summary AS x_summary
      FROM news n
      JOIN dedup_items d ON d.entry_key = n.entry_key
      LEFT JOIN dedup_clusters c ON c.id = d.cluster_id
      LEFT JOIN item_extractions x ON x.entry_key = n.entry_key
      WHERE n.entry_key = ${key} AND n.deleted_at IS NULL AND n.duplicate_of IS NULL AND d.live
        AND d.outcome IN ('unique', 'review') AND coalesce(btrim(n.title), '') <> ''
        AND (c.id IS NULL OR c.dissolved_at IS NOT NULL OR c.canonical_key = n.entry_key)
    ),
    keys AS (
      SELECT md.entry_key FROM s JOIN dedup_items md ON md.cluster_id = s.cluster_id
      WHERE md.live
      UNION SELECT entry_key FROM s
    ),
    m AS (
      SELECT DISTINCT ON (mn.source_id) mn.entry_key, mn.source_id, src.name, mn.link,
             mn.first_seen_at,
             (SELECT max(ev.observed_at) FROM news_events ev
              WHERE ev.entry_key = mn.entry_key AND ev.version = mn.version) AS fetched_at
      FROM keys JOIN news mn ON mn.entry_key = keys.entry_key AND mn.deleted_at IS NULL
      JOIN sources src ON src.id = mn.source_id
      ORDER BY mn.source_id, (mn.entry_key = ${key}) DESC, mn.first_seen_at, mn.entry_key
    ),
    o AS (
      SELECT jsonb_agg(jsonb_build_object(
               'entryKey', m.entry_key, 'sourceId', m.source_id, 'source', m.name,
               'link', m.link,
               'firstSeenAt', to_char(m.first_seen_at AT TIME ZONE 'UTC',
                                      'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
             ORDER BY (m.entry_key = ${key}) DESC, m.first_seen_at, m.source_id) AS outlets,
             count(*)::int AS n, max(m.fetched_at) AS fetched_at
      FROM m
    ),
    del AS (
      DELETE FROM read_stories r
      WHERE r.story_key = ${key} AND NOT EXISTS (SELECT 1 FROM s)
      RETURNING 1
    ),
    up AS (
      INSERT INTO read_stories AS r (story_key, source_id, item_version, title, link, summary,
        category, language, breaking, outlets, outlet_count, published_at, first_seen_at,
        fetched_at, updated_at, indexed_at)
      SELECT s.entry_key, s.source_id, s.version, btrim(s.title), s.link,
             left(nullif(btrim(coalesce(s.x_summary, s.summary)), ''), ${SUMMARY_CHARS}),
             coalesce(s.x_category,
                      CASE WHEN lower(btrim(s.category)) = ANY(${[...CATEGORIES]}::text[])
                           THEN lower(btrim(s.category)) END),
             coalesce(s.x_language,
                      CASE WHEN s.language IS NULL THEN NULL
                           WHEN lower(left(s.language, 2)) IN ('bn', 'en')
                           THEN lower(left(s.language, 2)) ELSE 'other' END),
             s.breaking, coalesce(o.outlets, '[]'::jsonb), greatest(o.n, 1), s.published_at,
             s.first_seen_at, coalesce(o.fetched_at, s.updated_at), clock_timestamp(),
             clock_timestamp()
      FROM s CROSS JOIN o
      ON CONFLICT (story_key) DO UPDATE SET
        source_id = excluded.source_id, item_version = excluded.item_version,
        title = excluded.title, link = excluded.link, summary = excluded.summary,
        category = excluded.category, language = excluded.language,
        breaking = excluded.breaking, outlets = excluded.outlets,
        outlet_count = excluded.outlet_count, published_at = excluded.published_at,
        first_seen_at = excluded.first_seen_at, fetched_at = excluded.fetched_at,
        updated_at = clock_timestamp(), indexed_at = clock_timestamp()
      WHERE r.item_version <= excluded.item_version
        AND (r.item_version, r.source_id, r.title, r.link, r.summary, r.category, r.language,
             r.breaking, r.outlets, r.outlet_count, r.published_at, r.first_seen_at,
             r.fetched_at)
            IS DISTINCT FROM
            (excluded.item_version, excluded.source_id, excluded.title, excluded.link,
             excluded.summary, excluded.category, excluded.language, excluded.breaking,
             excluded.outlets, excluded.outlet_count, excluded.published_at,
             excluded.first_seen_at, excluded.fetched_at)
      RETURNING 1
    )
    SELECT (SELECT count(*) FROM del)::int AS deleted, (SELECT count(*) FROM up)::int AS written`;
}

/** Survivors of extract the hand-on lost: an extraction at the item's version, no row at it. */
function extractedSince(since: Date): Prisma.Sql {
  return Prisma.sql`
    SELECT x.entry_key, x.item_version AS version, x.source_id, x.extracted_at AS at
    FROM item_extractions x
    JOIN news n ON n.entry_key = x.entry_key AND n.version = x.item_version
    WHERE x.extracted_at > ${since} AND n.deleted_at IS NULL AND n.duplicate_of IS NULL
      AND NOT EXISTS (SELECT 1 FROM read_stories r
                      WHERE r.story_key = x.entry_key AND r.item_version >= x.item_version)`;
}

/** Without extraction: dedup's canonical items at their version with no row at it. */
function decidedSince(since: Date): Prisma.Sql {
  return Prisma.sql`
    SELECT d.entry_key, d.version, d.source_id, d.decided_at AS at
    FROM dedup_items d JOIN news n ON n.entry_key = d.entry_key AND n.version = d.version
    WHERE d.decided_at > ${since} AND d.live AND d.outcome IN ('unique', 'review')
      AND n.deleted_at IS NULL AND n.duplicate_of IS NULL
      AND NOT EXISTS (SELECT 1 FROM read_stories r
                      WHERE r.story_key = d.entry_key AND r.item_version >= d.version)`;
}

/**
 * Clusters changed since `since` (dedup_clusters.updated_at moves on every join, leave, relink,
 * election and dissolution): their canonical and every item their events since then name (the
 * one that joined, left or was elected, the canonical an election replaced, the last member of a
 * dissolved one). Not yet done: the row of the item's story (its canonical now, or itself alone)
 * was not written since the change, or the item is a duplicate now and still has a row of its
 * own; an item alone that is no story and has no row is done. A change that alters
 * nothing a reader sees (a second item from an outlet already listed) writes no row, so it stays
 * "not done" until the sweep's margin passes it: a few idle re-checks, no writes.
 */
export function clusterChangesSince(since: Date): Prisma.Sql {
  return Prisma.sql`
    SELECT k.entry_key, n.version, n.source_id, c.updated_at AS at
    FROM dedup_clusters c
    CROSS JOIN LATERAL (
      SELECT c.canonical_key AS entry_key
      UNION SELECT ev.entry_key FROM dedup_cluster_events ev
      WHERE ev.cluster_id = c.id AND ev.at > ${since} AND ev.entry_key IS NOT NULL
      UNION SELECT ev.detail ->> 'from' FROM dedup_cluster_events ev
      WHERE ev.cluster_id = c.id AND ev.at > ${since} AND ev.kind = 'elected'
    ) k
    JOIN news n ON n.entry_key = k.entry_key
    LEFT JOIN dedup_items d ON d.entry_key = k.entry_key
    LEFT JOIN dedup_clusters now_in ON now_in.id = d.cluster_id AND now_in.dissolved_at IS NULL
    WHERE c.updated_at > ${since}
      AND (NOT EXISTS (SELECT 1 FROM read_stories r
                       WHERE r.story_key = coalesce(now_in.canonical_key, k.entry_key)
                         AND r.indexed_at >= c.updated_at)
           OR (now_in.canonical_key <> k.entry_key
               AND EXISTS (SELECT 1 FROM read_stories r WHERE r.story_key = k.entry_key)))
      AND NOT (now_in.id IS NULL
               AND (n.deleted_at IS NOT NULL OR d.live IS NOT TRUE
                    OR d.outcome NOT IN ('unique', 'review'))
               AND NOT EXISTS (SELECT 1 FROM read_stories r WHERE r.story_key = k.entry_key))`;
}

/**
 * Stories no longer stories at their item's current version, dedup having decided it: retracted,
 * removed (no text left), or a duplicate now. A retracted story alone in no cluster changes no
 * cluster and never reaches extract; this is how its row goes.
 */
export function goneSince(since: Date): Prisma.Sql {
  return Prisma.sql`
    SELECT n.entry_key, n.version, n.source_id, n.updated_at AS at
    FROM news n
    JOIN read_stories r ON r.story_key = n.entry_key AND r.item_version < n.version
    JOIN dedup_items d ON d.entry_key = n.entry_key AND d.version >= n.version
    WHERE n.updated_at > ${since}
      AND (n.deleted_at IS NOT NULL OR n.duplicate_of IS NOT NULL OR NOT d.live
           OR d.outcome NOT IN ('unique', 'review'))`;
}

/**
 * What changed a story without reaching extract (clusterChangesSince, goneSince), reconciled
 * inline: the builder calls this before each build, so a new duplicate, an undo or a retraction
 * is in the next model version. The line's sweep finds the same rows later and finds them done.
 * Returns the rows it wrote or deleted.
 */
export async function reconcileChanges(
  db: Database,
  since: Date,
  limit = 2_000,
): Promise<{ items: number; changed: number }> {
  const rows = await db.prisma.$queryRaw<{ entry_key: string }[]>`
    SELECT entry_key FROM (${clusterChangesSince(since)} UNION ALL ${goneSince(since)}) p
    ORDER BY at LIMIT ${limit}`;
  const keys = new Set<string>();
  for (const { entry_key } of rows) {
    const state = await itemState(db, entry_key);
    if (state) for (const k of storiesOf(entry_key, state)) keys.add(k);
  }
  return { items: rows.length, changed: await indexStories(db, [...keys]) };
}
