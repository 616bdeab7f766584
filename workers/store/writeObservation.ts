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

/**
 * observe and edit: the guarded monotonic upsert, its audit row and its notification in ONE
 * statement, so the check and the write cannot be separated by another writer.
 *
 * Why it is safe under concurrent writers: INSERT … ON CONFLICT DO UPDATE takes the row lock of
 * the conflicting row and evaluates SET and WHERE against its latest committed version (not the
 * statement's snapshot), so two writers racing on one item serialise on that row and the second
 * merges into what the first wrote. news_merge is a join (order-independent for values of one
 * revision), so the result is the same whichever wins the lock.
 *
 * The rules, in the WHERE: a tombstoned row is final; a fallback observation never modifies;
 * an authoritative one modifies only when news_merge changes something. No change → no UPDATE,
 * no version bump, no notification. Backfill never notifies. NOTIFY is transactional, so a
 * listener only hears of rows that were committed.
 */
export async function writeObservation(
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
        entry_key, source_id, canonical_id, quality,
        title, title_stamp, link, link_stamp, summary, summary_stamp, category, category_stamp,
        language, published_at, breaking, instruments, revision,
        version, content_hash, first_seen_at, first_source, first_collector, last_result
      )
      SELECT (r).entry_key, (r).source_id, (r).canonical_id, (r).quality,
             (r).title, (r).title_stamp, (r).link, (r).link_stamp, (r).summary, (r).summary_stamp,
             (r).category, (r).category_stamp, (r).language, (r).published_at, (r).breaking,
             (r).instruments, (r).revision,
             1, news_content_hash(r), (r).first_seen_at, (r).first_source, (r).first_collector,
             'inserted'
      FROM inc
      ON CONFLICT (entry_key) DO UPDATE SET
        (quality, title, title_stamp, link, link_stamp, summary, summary_stamp,
         category, category_stamp, language, published_at, breaking, instruments, revision,
         version, content_hash, last_result) =
        (SELECT m.quality, m.title, m.title_stamp, m.link, m.link_stamp, m.summary, m.summary_stamp,
                m.category, m.category_stamp, m.language, m.published_at, m.breaking, m.instruments,
                m.revision, m.version, m.content_hash, m.last_result
         FROM news_merge(n, excluded) AS m),
        updated_at = now()
      WHERE n.deleted_at IS NULL
        AND excluded.quality = 'authoritative'
        AND news_merge(n, excluded) IS DISTINCT FROM n
      RETURNING n.version, n.last_result, (n.xmax = 0) AS inserted
    ),
    decided AS (
      SELECT coalesce(CASE WHEN w.inserted THEN 'inserted' ELSE w.last_result END, 'unchanged') AS result,
             CASE WHEN w.inserted OR w.last_result <> 'unchanged' THEN w.version END AS version
      FROM inc LEFT JOIN written w ON true
    ),
    audit AS (
      INSERT INTO news_events (entry_key, source_id, collector, origin, kind, observed_at, revision, payload, result, version)
      SELECT (inc.r).entry_key, (inc.r).source_id, ${obs.collector}, ${obs.origin}, ${obs.kind},
             ${obs.observedAt}, (inc.r).revision, ${payload}::jsonb, d.result, d.version
      FROM inc, decided d
      RETURNING id, result, version
    ),
    notify AS (
      SELECT pg_notify(${NEWS_CHANNEL}, json_build_object(
               'entryKey', (inc.r).entry_key, 'sourceId', (inc.r).source_id,
               'result', a.result, 'version', a.version)::text)
      FROM audit a, inc
      WHERE ${mayNotify} AND a.result IN ('inserted', 'upgraded', 'updated')
    )
    SELECT a.id, a.result, a.version, (SELECT count(*) FROM notify)::int AS notified FROM audit a`;
  const row = rows[0];
  if (!row) throw new Error("writer: the write statement returned no audit row");
  return {
    eventId: BigInt(row.id),
    result: row.result,
    entryKey: obs.entryKey,
    version: row.version === null ? null : Number(row.version),
    notified: Number(row.notified) > 0,
  };
}
