import type { Database } from "../db";

/**
 * Rows for the database-derived metrics: two sources (one with an open breaker and its collector
 * timestamps), a dead letter, an open local outage, an admin action, and claims in lease_events
 * with known waits (old enough for the lag fold, which skips the last 2 s).
 */
export async function seedMetricsRows(db: Database, waitsMs: number[]): Promise<void> {
  const p = db.prisma;
  await p.$executeRaw`
    INSERT INTO sources (id, name, kind, url) VALUES
      ('wire', 'Wire', 'stream', 'https://wire.example.com/events'),
      ('meridian', 'Meridian', 'feed', 'https://feeds.example.com/world.xml')`;
  await p.$executeRaw`
    INSERT INTO source_state (source_id, breaker_state) VALUES ('wire', 'closed'), ('meridian', 'open')`;
  await p.$executeRaw`
    INSERT INTO collector_status (source_id, collector, connected, last_activity_at, last_content_at)
    VALUES ('wire', 'A', true, now() - interval '5 seconds', now() - interval '60 seconds')`;
  await p.$executeRaw`
    INSERT INTO jobs (queue, key, state, attempts, max_attempts, dead_at, last_error, fingerprint)
    VALUES ('fetch', 'meridian:A', 'dead', 5, 5, now() - interval '2 hours',
            '{"message": "fetcher: http_5xx from https://feeds.example.com/world.xml"}', 'fp1')`;
  await p.$executeRaw`
    INSERT INTO network_outages (started_at, failing_hosts, total_hosts) VALUES (now(), 4, 5)`;
  await p.$executeRaw`
    INSERT INTO admin_audit (actor, action, affected) VALUES ('admin', 'dlq.requeue', 1)`;
  for (const [i, wait] of waitsMs.entries()) {
    await p.$executeRaw`
      INSERT INTO lease_events (at, job_id, queue, attempt, worker_id, kind, wait_ms)
      VALUES (now() - interval '1 minute', ${i + 1}, 'fetch', 1, 'w1', 'claimed', ${wait}::int)`;
  }
}
