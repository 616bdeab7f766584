import type pg from "pg";
import { seedJobsFrom } from "@/workers/queue/testing/seed";

export interface SeedSize {
  news: number;
  events: number;
  sources: number;
  /** Fetch attempts over the last day (200,000 unless given). */
  attempts?: number;
}

/**
 * Fills an empty, migrated PostgreSQL database with a production-sized history, in SQL
 * (generate_series), so the dashboard's queries meet realistic row counts and distributions:
 * `sources` with their state and collectors, `news` spread over 30 days (a few retracted,
 * versions 1–4), `news_events` for them (every item's first delivery plus duplicates, upgrades and
 * edits, with payloads like the writer's), a day of fetch attempts, a day of claims (queue_claim_stats) and lease events, the
 * frontier, some dead letters, repair runs and admin actions. Deterministic (setseed).
 */
export async function seedLargeDatabase(
  client: pg.Client,
  size: SeedSize,
  log: (line: string) => void,
): Promise<void> {
  const step = async (what: string, sql: string, params: unknown[] = []) => {
    const started = Date.now();
    await client.query(sql, params);
    log(`  ${what} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  };
  await client.query("SELECT setseed(0.42)");
  // Sources in one statement each (100k in a few seconds), with a fleet's mix of health: most
  // healthy, some quiet or silent (content hours old), a few stalled (no activity for an hour),
  // failing (breaker open or probing, or a recent error), starting (just added) and paused.
  await step(
    `${size.sources.toLocaleString("en")} sources`,
    `INSERT INTO sources (id, name, kind, url, poll_interval_seconds, collectors, config_origin, created_at)
     SELECT 'src-' || i, 'Source ' || i,
            CASE WHEN i % 10 = 0 THEN 'stream' WHEN i % 25 = 1 THEN 'page' ELSE 'feed' END,
            'https://news' || i || '.example/feed.xml', 300, ARRAY['A','B'], 'file',
            CASE WHEN i % 500 = 7 THEN now() - interval '1 minute' ELSE now() - interval '30 days' END
     FROM generate_series(1, $1::int) i`,
    [size.sources],
  );
  await step(
    "source state and collector status",
    `INSERT INTO source_state (source_id, next_poll_at, last_polled_at, breaker_state,
                               breaker_failures, breaker_changed_at, trusts_validators,
                               last_error_code, last_error_message, last_error_at, disabled_reason,
                               disabled_at)
     SELECT id, now() + random() * interval '5 minutes', now() - random() * interval '5 minutes',
            CASE WHEN n % 50 = 3 THEN 'open' WHEN n % 200 = 5 THEN 'half_open' ELSE 'closed' END,
            CASE WHEN n % 50 = 3 THEN 5 WHEN n % 40 = 9 THEN 2 ELSE 0 END,
            now() - interval '1 hour', random() < 0.9,
            CASE WHEN n % 50 = 3 OR n % 40 = 9 THEN 'http_5xx' END,
            CASE WHEN n % 50 = 3 OR n % 40 = 9 THEN '503 Service Unavailable' END,
            CASE WHEN n % 50 = 3 OR n % 40 = 9 THEN now() - interval '5 seconds' END,
            CASE WHEN n % 100 = 11 THEN 'paused by admin' END,
            CASE WHEN n % 100 = 11 THEN now() - interval '2 days' END
     FROM (SELECT id, substr(id, 5)::int AS n FROM sources) s;
     INSERT INTO collector_status (source_id, collector, connected, last_activity_at,
                                   last_activity_kind, last_content_at, usual_gap_seconds, gaps_seen)
     SELECT s.id, c, true,
            CASE WHEN n % 500 = 7 THEN NULL WHEN n % 33 = 4 THEN now() - interval '1 hour'
                 ELSE now() - interval '5 seconds' END,
            'fetch',
            CASE WHEN n % 500 = 7 THEN NULL WHEN n % 20 = 2 THEN now() - interval '5 hours'
                 WHEN n % 20 = 6 THEN now() - interval '12 minutes' ELSE now() - interval '4 minutes' END,
            600, 50
     FROM (SELECT id, substr(id, 5)::int AS n FROM sources) s CROSS JOIN unnest(ARRAY['A','B']) c`,
  );
  await step(
    `${size.news.toLocaleString("en")} news rows`,
    `INSERT INTO news (entry_key, source_id, canonical_id, quality, title, title_stamp, link,
                       link_stamp, summary, summary_stamp, category, category_stamp, language,
                       published_at, version, content_hash, first_seen_at, first_source,
                       first_collector, last_result, deleted_at, updated_at)
     SELECT encode(sha256(convert_to('item' || i, 'UTF8')), 'hex'), 'src-' || (1 + i % $2::int), 'guid:' || i, 'authoritative',
            (ARRAY['Floods cut off','Central bank lifts','Port strike ends in','Markets rally on',
                   'Council votes on','Rain delays'])[1 + i % 6] || ' ' || (i % 997) || ' story ' || i,
            2, 'https://news' || (1 + i % $2::int) || '.example/a/' || i, 2,
            'Summary of story ' || i, 2, (ARRAY['world','business','sport','politics'])[1 + i % 4], 2,
            CASE WHEN i % 3 = 0 THEN 'bn' ELSE 'en' END,
            now() - (i::float8 / $1::int) * interval '30 days', 1 + i % 4, md5('c' || i),
            now() - (i::float8 / $1::int) * interval '30 days', 'src-' || (1 + i % $2::int), 'A',
            CASE WHEN i % 500 = 0 THEN 'tombstoned' ELSE 'inserted' END,
            CASE WHEN i % 500 = 0 THEN now() - (i::float8 / $1::int) * interval '30 days' END,
            now() - (i::float8 / $1::int) * interval '30 days' + interval '5 minutes'
     FROM generate_series(1, $1::int) i`,
    [size.news, size.sources],
  );
  await step(
    `${size.events.toLocaleString("en")} news_events rows`,
    `INSERT INTO news_events (entry_key, source_id, collector, origin, kind, observed_at,
                              received_at, payload, result, version)
     SELECT encode(sha256(convert_to('item' || (1 + (e - 1) % $1::int), 'UTF8')), 'hex'), 'src-' || (1 + ((e - 1) % $1::int + 1) % $2::int),
            CASE WHEN e % 2 = 0 THEN 'A' ELSE 'B' END,
            CASE WHEN e % 7 = 0 THEN 'fallback' ELSE 'poll' END, 'observe',
            now() - ((1 + (e - 1) % $1::int)::float8 / $1::int) * interval '30 days' + (e / $1::int) * interval '1 minute',
            now() - ((1 + (e - 1) % $1::int)::float8 / $1::int) * interval '30 days' + (e / $1::int) * interval '1 minute',
            jsonb_build_object('guid', 'guid:' || (1 + (e - 1) % $1::int), 'title', 'Story ' || e,
                               'collector', CASE WHEN e % 2 = 0 THEN 'A' ELSE 'B' END),
            CASE WHEN e <= $1::int THEN 'inserted'
                 WHEN e % 11 = 0 THEN 'upgraded' WHEN e % 13 = 0 THEN 'updated'
                 WHEN e % 101 = 0 THEN 'rejected' ELSE 'unchanged' END,
            CASE WHEN e <= $1::int THEN 1 END
     FROM generate_series(1, $3::int) e`,
    [size.news, size.sources, size.events],
  );
  const attempts = size.attempts ?? 200_000;
  await step(
    `a day of fetch attempts (${attempts.toLocaleString("en")})`,
    `INSERT INTO fetch_attempts (source_id, collector, started_at, duration_ms, code, http_status,
                                 bytes, not_modified, retry)
     SELECT 'src-' || (1 + i % $1::int), CASE WHEN i % 2 = 0 THEN 'A' ELSE 'B' END,
            now() - (i::float8 / $2::int) * interval '1 day', 100 + i % 900,
            CASE WHEN i % 9 = 0 THEN 'not_modified' WHEN i % 31 = 0 THEN 'http_5xx'
                 WHEN i % 53 = 0 THEN 'timeout' ELSE 'ok' END,
            CASE WHEN i % 9 = 0 THEN 304 WHEN i % 31 = 0 THEN 503 WHEN i % 53 = 0 THEN NULL ELSE 200 END,
            20000 + i % 5000, i % 9 = 0, 0
     FROM generate_series(1, $2::int) i`,
    [size.sources, attempts],
  );
  const timed = async (what: string, run: () => Promise<void>) => {
    const started = Date.now();
    await run();
    log(`  ${what} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  };
  await timed("the frontier and dead letters", async () => {
    await seedJobsFrom(
      client,
      ["queue", "key", "payload", "source_id", "run_at"],
      `SELECT 'fetch', s.id || '/' || c, jsonb_build_object('sourceId', s.id, 'collector', c), s.id,
              now() + random() * interval '5 minutes'
       FROM sources s CROSS JOIN unnest(ARRAY['A','B']) c`,
    );
    await seedJobsFrom(
      client,
      [
        "queue",
        "key",
        "payload",
        "source_id",
        "state",
        "attempts",
        "max_attempts",
        "dead_at",
        "first_failed_at",
        "last_failed_at",
        "last_error",
        "fingerprint",
      ],
      `SELECT 'fetch', NULL, jsonb_build_object('sourceId', 'src-' || (1 + i % 50)), 'src-' || (1 + i % 50),
              'dead', 10, 10, now() - (i::float8 / 2000) * interval '3 days',
              now() - (i::float8 / 2000) * interval '4 days', now() - (i::float8 / 2000) * interval '3 days',
              jsonb_build_object('code', 'ECONNRESET', 'message', 'socket hang up after ' || i || ' ms',
                                 'stack', 'Error: socket hang up'),
              (ARRAY['0123456789abcdef','fedcba9876543210','00112233aabbccdd'])[1 + i % 3]
       FROM generate_series(1, 2000) i`,
    );
  });
  // A day of claims as the claim statement rolls them up (one row per queue and minute, 150–249
  // claims a minute, most waits under 100 ms), and the lease events kept beside them: expiries,
  // reclaims and releases with their lease ages (no row per claim).
  await step(
    "a day of claims and lease events",
    `INSERT INTO queue_claim_stats (queue, minute, claims, reclaimed, wait_ms_sum, wait_ms_max, wait_buckets)
     SELECT q, date_trunc('minute', now()) - m * interval '1 minute', c, c / 90, c * 180, 4900,
            ARRAY[c * 6 / 10, c * 2 / 10, c / 10, c - c * 6 / 10 - c * 2 / 10 - c / 10 - c / 20, c / 20,
                  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]::bigint[]
     FROM generate_series(1, 1440) m CROSS JOIN unnest(ARRAY['fetch', 'stream']) q
     CROSS JOIN LATERAL (SELECT 150 + (m * 7) % 100 AS c) k;
     INSERT INTO lease_events (at, job_id, queue, attempt, worker_id, kind, lease_age_ms)
     SELECT now() - (i::float8 / 6000) * interval '1 day', 1 + i % 1000,
            CASE WHEN i % 5 = 0 THEN 'stream' ELSE 'fetch' END, 1, 'bench:' || (i % 4),
            (ARRAY['expired', 'reclaimed', 'released'])[1 + i % 3], 30000 + (i * 37) % 90000
     FROM generate_series(1, 6000) i;
     INSERT INTO queue_workers (id, host, pid, queues, claimed, completed)
     SELECT 'bench:' || i, 'host-' || i, 1000 + i, ARRAY['fetch','stream'], 100000, 99990
     FROM generate_series(0, 3) i`,
  );
  await step(
    "repair runs",
    `INSERT INTO repair_runs (actor, dry_run, status, started_at, finished_at, rows_total,
                              rows_examined, rows_changed)
     SELECT 'cli:ops', i % 2 = 0, 'finished', now() - i * interval '1 day',
            now() - i * interval '1 day' + interval '3 minutes', $1::int, $1::int, i % 7
     FROM generate_series(1, 30) i`,
    [size.news],
  );
  await step(
    "admin actions",
    `INSERT INTO admin_audit (at, actor, action, target, dry_run, affected)
     SELECT now() - (i::float8 / 10000) * interval '90 days', 'admin',
            (ARRAY['dead_letters.requeue','dead_letters.discard','sources.pause','repairs.apply'])[1 + i % 4],
            jsonb_build_object('fingerprint', '0123456789abcdef'), i % 2 = 0, i % 50
     FROM generate_series(1, 10000) i`,
  );
  await step("ANALYZE", "ANALYZE");
}
