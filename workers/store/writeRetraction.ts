import type { Database } from "@/lib/db";
import type { NormalizedObservation, WriteResult } from "./observation";
import { NEWS_CHANNEL, toOutcomes, type WriteOutcome } from "./writeObservation";

/**
 * retract: set the tombstone, keep the row, audit and notify, for a batch of retractions whose
 * entry keys are all different, in ONE statement.
 *
 * A retraction for an item never seen creates a tombstoned row, so a late observation of it
 * cannot bring it to life (the same move as seed 001's closeStory). A tombstone is final:
 * WHERE deleted_at IS NULL makes a repeated retraction change nothing and every later
 * observation 'unchanged'. Concurrency: as for observe, ON CONFLICT serialises writers on the
 * row lock, each statement its own transaction locking in entry_key order, so exactly one
 * retraction sees deleted_at IS NULL and two statements cannot deadlock. writeBatch runs this
 * statement beside the observe statements of the same round (up to 4 in flight): a round's keys
 * are disjoint, so none of them waits on another, and an item's later deliveries go in a later
 * round, after this one has committed.
 */
export async function writeRetractions(
  db: Database,
  batch: NormalizedObservation[],
): Promise<WriteOutcome[]> {
  if (batch.length === 0) return [];
  const payloads = JSON.stringify(batch.map((o) => o.row));
  const rows = await db.prisma.$queryRaw<
    { ord: bigint; id: bigint; result: WriteResult; version: number | null; notified: boolean }[]
  >`
    WITH inc AS (
      SELECT d.ord, d.p AS payload, jsonb_populate_record(NULL::news, d.p) AS r
      FROM jsonb_array_elements(${payloads}::jsonb) WITH ORDINALITY AS d(p, ord)
    ),
    written AS (
      INSERT INTO news AS n (
        entry_key, source_id, canonical_id, quality, revision, version, content_hash,
        first_seen_at, first_source, first_collector, last_result, deleted_at
      )
      SELECT (r).entry_key, (r).source_id, (r).canonical_id, (r).quality, (r).revision, 1,
             news_content_hash(r), (r).first_seen_at, (r).first_source, (r).first_collector,
             'tombstoned', (payload->>'observed_at')::timestamptz
      FROM inc ORDER BY (r).entry_key
      ON CONFLICT (entry_key) DO UPDATE SET
        deleted_at = excluded.deleted_at,
        revision = greatest(n.revision, excluded.revision),
        version = n.version + 1,
        last_result = 'tombstoned',
        updated_at = now()
      WHERE n.deleted_at IS NULL
      RETURNING n.entry_key, n.version
    ),
    decided AS (
      SELECT inc.ord, inc.payload, (inc.r).entry_key, (inc.r).source_id, (inc.r).revision,
             CASE WHEN w.version IS NULL THEN 'unchanged' ELSE 'tombstoned' END AS result,
             w.version
      FROM inc LEFT JOIN written w ON w.entry_key = (inc.r).entry_key
    ),
    audit AS (
      INSERT INTO news_events (entry_key, source_id, collector, origin, kind, observed_at, revision, payload, result, version)
      SELECT d.entry_key, d.source_id, d.payload->>'collector', d.payload->>'origin', 'retract',
             (d.payload->>'observed_at')::timestamptz, d.revision, d.payload, d.result, d.version
      FROM decided d ORDER BY d.ord
      RETURNING id, entry_key
    ),
    notify AS (
      SELECT pg_notify(${NEWS_CHANNEL}, json_build_object(
               'entryKey', d.entry_key, 'sourceId', d.source_id,
               'result', d.result, 'version', d.version)::text)
      FROM decided d
      WHERE d.payload->>'origin' <> 'backfill' AND d.result = 'tombstoned'
    )
    -- count(*) reads notify to the end, so every pg_notify runs (a SELECT CTE runs only as far
    -- as it is read).
    SELECT d.ord, a.id, d.result, d.version, s.sent,
           (d.payload->>'origin' <> 'backfill' AND d.result = 'tombstoned') AS notified
    FROM decided d JOIN audit a ON a.entry_key = d.entry_key
         CROSS JOIN (SELECT count(*) AS sent FROM notify) AS s
    ORDER BY d.ord`;
  return toOutcomes(batch, rows);
}
