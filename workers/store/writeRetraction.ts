import type { Database } from "@/lib/db";
import type { NormalizedObservation, WriteResult } from "./observation";
import { NEWS_CHANNEL, type WriteOutcome } from "./writeObservation";

/**
 * retract: set the tombstone, keep the row, audit and notify, in ONE statement.
 *
 * A retraction for an item never seen creates a tombstoned row, so a late observation of it
 * cannot bring it to life (the same move as seed 001's closeStory). A tombstone is final:
 * WHERE deleted_at IS NULL makes a repeated retraction change nothing and every later
 * observation 'unchanged'. Concurrency: as for observe, ON CONFLICT serialises writers on the
 * row lock; exactly one retraction sees deleted_at IS NULL.
 */
export async function writeRetraction(
  db: Database,
  obs: NormalizedObservation,
): Promise<WriteOutcome> {
  const payload = JSON.stringify(obs.row);
  const mayNotify = obs.origin !== "backfill";
  const rows = await db.prisma.$queryRaw<
    { id: bigint; result: WriteResult; version: number | null; notified: number }[]
  >`
    WITH inc AS (
      SELECT jsonb_populate_record(NULL::news, ${payload}::jsonb) AS r
    ),
    written AS (
      INSERT INTO news AS n (
        entry_key, source_id, canonical_id, quality, revision, version, content_hash,
        first_seen_at, first_source, first_collector, last_result, deleted_at
      )
      SELECT (r).entry_key, (r).source_id, (r).canonical_id, (r).quality, (r).revision, 1,
             news_content_hash(r), (r).first_seen_at, (r).first_source, (r).first_collector,
             'tombstoned', ${obs.observedAt}
      FROM inc
      ON CONFLICT (entry_key) DO UPDATE SET
        deleted_at = excluded.deleted_at,
        revision = greatest(n.revision, excluded.revision),
        version = n.version + 1,
        last_result = 'tombstoned',
        updated_at = now()
      WHERE n.deleted_at IS NULL
      RETURNING n.version
    ),
    decided AS (
      SELECT CASE WHEN w.version IS NULL THEN 'unchanged' ELSE 'tombstoned' END AS result,
             w.version
      FROM inc LEFT JOIN written w ON true
    ),
    audit AS (
      INSERT INTO news_events (entry_key, source_id, collector, origin, kind, observed_at, revision, payload, result, version)
      SELECT (inc.r).entry_key, (inc.r).source_id, ${obs.collector}, ${obs.origin}, 'retract',
             ${obs.observedAt}, (inc.r).revision, ${payload}::jsonb, d.result, d.version
      FROM inc, decided d
      RETURNING id, result, version
    ),
    notify AS (
      SELECT pg_notify(${NEWS_CHANNEL}, json_build_object(
               'entryKey', (inc.r).entry_key, 'sourceId', (inc.r).source_id,
               'result', a.result, 'version', a.version)::text)
      FROM audit a, inc
      WHERE ${mayNotify} AND a.result = 'tombstoned'
    )
    SELECT a.id, a.result, a.version, (SELECT count(*) FROM notify)::int AS notified FROM audit a`;
  const row = rows[0];
  if (!row) throw new Error("writer: the retract statement returned no audit row");
  return {
    eventId: BigInt(row.id),
    result: row.result,
    entryKey: obs.entryKey,
    version: row.version === null ? null : Number(row.version),
    notified: Number(row.notified) > 0,
  };
}
