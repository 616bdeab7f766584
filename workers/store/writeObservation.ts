import type { Database } from "@/lib/db";
import type { NormalizedObservation, WriteResult } from "./observation";

export const NEWS_CHANNEL = "wirewatch_news";

export interface WriteOutcome {
  eventId: bigint;
  result: WriteResult;
  entryKey: string;
  /**
   * The version this delivery wrote; null when it changed nothing. (Reading the current version
   * inside the same statement would see its snapshot, which under racing writers may predate the
   * row this delivery conflicted with; a wrong number is worse than none.)
   */
  version: number | null;
  notified: boolean;
  reason?: string;
}

interface OutcomeRow {
  ord: bigint;
  id: bigint;
  result: WriteResult;
  version: number | null;
  notified: boolean;
}

/**
 * observe and edit: the guarded monotonic upsert, its audit rows and its notifications, for a
 * batch of deliveries whose entry keys are all different, in ONE statement. The check and the
 * write cannot be separated by another writer, and each delivery keeps its own decision and its
 * own audit row, as if it had been written alone.
 *
 * Why it is safe under concurrent writers: INSERT … ON CONFLICT DO UPDATE takes the row lock of
 * the conflicting row and evaluates SET and WHERE against its latest committed version (not the
 * statement's snapshot), so two writers racing on one item serialise on that row and the second
 * merges into what the first wrote. news_merge is a join (order-independent for values of one
 * revision), so the result is the same whichever wins the lock. Each statement is its own
 * transaction and inserts its rows in entry_key order, so any two statements lock the rows they
 * share in the same order and cannot deadlock. writeBatch runs up to 4 of these statements at
 * once, 50–250 rows each, for one round of a batch: their keys are disjoint, so they never wait
 * on each other, and the next round (the same items' later deliveries) starts only once all of
 * them have committed, so an item's deliveries are still applied in order.
 *
 * The rules, in the WHERE: a tombstoned row is final; a fallback observation never modifies;
 * an authoritative one modifies only when news_merge would change something, which
 * news_merge_changes answers from field comparisons (migration 20261214010000; it agrees with
 * `news_merge(n, excluded) IS DISTINCT FROM n`), so a conflict merges once, in SET, where it
 * used to merge twice. No change → no UPDATE, no version bump, no notification. Backfill never
 * notifies. NOTIFY is transactional, so a listener only hears of rows that were committed.
 *
 * Repeat sightings (docs/decisions/011): a delivery that changed nothing and is identical to the
 * item's latest event (same collector, origin and kind, same payload apart from its observation
 * time) adds no row; it is counted on that event (sightings + 1, last_seen_at). Re-applying a
 * payload already applied never changes a row (news_merge only moves toward more information),
 * so news_rebuild folds to the same row without it. A feed re-polled unchanged thus adds no
 * news_events rows, where it used to add one per entry per poll. Two writers folding into one
 * event serialise on its row lock, and the second adds to the first's count.
 */
export async function writeObservations(
  db: Database,
  batch: NormalizedObservation[],
): Promise<WriteOutcome[]> {
  if (batch.length === 0) return [];
  const payloads = JSON.stringify(batch.map((o) => o.row));
  const rows = await db.prisma.$queryRaw<OutcomeRow[]>`
    WITH inc AS (
      SELECT d.ord, d.p AS payload, jsonb_populate_record(NULL::news, d.p) AS r
      FROM jsonb_array_elements(${payloads}::jsonb) WITH ORDINALITY AS d(p, ord)
    ),
    written AS (
      INSERT INTO news AS n (
        entry_key, source_id, canonical_id, quality,
        title, title_stamp, link, link_stamp, summary, summary_stamp, category, category_stamp,
        language, published_at, breaking, instruments, revision,
        version, content_hash, first_seen_at, first_source, first_collector, last_result
      )
      SELECT (r).entry_key, (r).source_id, (r).canonical_id, (r).quality,
             (r).title, (r).title_stamp, (r).link, (r).link_stamp, (r).summary, (r).summary_stamp,
             (r).category, (r).category_stamp, (r).language, (r).published_at, (r).breaking,
             news_instruments((r).instruments), (r).revision,
             1, news_content_hash(r), (r).first_seen_at, (r).first_source, (r).first_collector,
             'inserted'
      FROM inc ORDER BY (r).entry_key
      ON CONFLICT (entry_key) DO UPDATE SET
        (quality, title, title_stamp, link, link_stamp, summary, summary_stamp,
         category, category_stamp, language, published_at, breaking, instruments, revision,
         version, content_hash, last_result, updated_at) =
        (SELECT m.quality, m.title, m.title_stamp, m.link, m.link_stamp, m.summary, m.summary_stamp,
                m.category, m.category_stamp, m.language, m.published_at, m.breaking, m.instruments,
                m.revision, m.version, m.content_hash, m.last_result,
                -- a stamp-only write (a newer revision saying the same) is not news
                CASE WHEN m.version > n.version THEN now() ELSE n.updated_at END
         FROM news_merge(n, excluded) AS m)
      WHERE n.deleted_at IS NULL
        AND excluded.quality = 'authoritative'
        AND news_merge_changes(n, excluded)
      RETURNING n.entry_key, n.version, n.last_result, (n.xmax = 0) AS inserted
    ),
    decided AS (
      SELECT inc.ord, inc.payload, (inc.r).entry_key, (inc.r).source_id, (inc.r).revision,
             coalesce(CASE WHEN w.inserted THEN 'inserted' ELSE w.last_result END, 'unchanged') AS result,
             CASE WHEN w.inserted OR w.last_result <> 'unchanged' THEN w.version END AS version
      FROM inc LEFT JOIN written w ON w.entry_key = (inc.r).entry_key
    ),
    repeat AS (
      SELECT d.ord, latest.id
      FROM decided d
      CROSS JOIN LATERAL (
        SELECT e.id, e.collector, e.origin, e.kind, e.payload FROM news_events e
        WHERE e.entry_key = d.entry_key ORDER BY e.id DESC LIMIT 1
      ) AS latest
      WHERE d.result = 'unchanged'
        AND latest.collector = d.payload->>'collector'
        AND latest.origin = d.payload->>'origin'
        AND latest.kind = d.payload->>'kind'
        AND latest.payload - 'observed_at' - 'first_seen_at' = d.payload - 'observed_at' - 'first_seen_at'
    ),
    folded AS (
      UPDATE news_events AS e SET
        sightings = e.sightings + 1,
        last_seen_at = greatest(coalesce(e.last_seen_at, e.observed_at), (d.payload->>'observed_at')::timestamptz)
      FROM repeat r JOIN decided d ON d.ord = r.ord
      WHERE e.id = r.id
      RETURNING e.id
    ),
    audit AS (
      INSERT INTO news_events (entry_key, source_id, collector, origin, kind, observed_at, revision, payload, result, version)
      SELECT d.entry_key, d.source_id, d.payload->>'collector', d.payload->>'origin', d.payload->>'kind',
             (d.payload->>'observed_at')::timestamptz, d.revision, d.payload, d.result, d.version
      FROM decided d WHERE d.ord NOT IN (SELECT ord FROM repeat) ORDER BY d.ord
      RETURNING id, entry_key
    ),
    notify AS (
      SELECT pg_notify(${NEWS_CHANNEL}, json_build_object(
               'entryKey', d.entry_key, 'sourceId', d.source_id,
               'result', d.result, 'version', d.version)::text)
      FROM decided d
      WHERE d.payload->>'origin' <> 'backfill' AND d.result IN ('inserted', 'upgraded', 'updated')
    )
    -- count(*) reads notify to the end, so every pg_notify runs (a SELECT CTE runs only as far
    -- as it is read).
    SELECT d.ord, coalesce(a.id, r.id) AS id, d.result, d.version, s.sent,
           (d.payload->>'origin' <> 'backfill' AND d.result IN ('inserted', 'upgraded', 'updated')) AS notified
    FROM decided d LEFT JOIN audit a ON a.entry_key = d.entry_key
         LEFT JOIN repeat r ON r.ord = d.ord
         CROSS JOIN (SELECT count(*) AS sent FROM notify) AS s
    ORDER BY d.ord`;
  return toOutcomes(batch, rows);
}

/** Matches the statement's rows (by ordinality) back to the batch. */
export function toOutcomes(batch: NormalizedObservation[], rows: OutcomeRow[]): WriteOutcome[] {
  if (rows.length !== batch.length) {
    throw new Error(
      `writer: expected ${batch.length} audit rows, the statement returned ${rows.length}`,
    );
  }
  return rows.map((row, i) => ({
    eventId: BigInt(row.id),
    result: row.result,
    entryKey: (batch[i] as NormalizedObservation).entryKey,
    version: row.version === null ? null : Number(row.version),
    notified: row.notified,
  }));
}
