import type { Database } from "../db";
import { seedClaimStats } from "./claimStats";

/**
 * Rows for the database-derived metrics: two sources (one with an open breaker and its collector
 * timestamps), a dead letter, an open local outage, an admin action, and claims with known
 * waits in a minute that has closed (the lag fold reads only those).
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
  // Through the model, not SQL: lib/ cannot reach the queue's seeding (docs/decisions/021).
  await p.job.create({
    data: {
      queue: "fetch",
      key: "meridian:A",
      state: "dead",
      attempts: 5,
      maxAttempts: 5,
      deadAt: new Date(Date.now() - 2 * 3_600_000),
      lastError: { message: "fetcher: http_5xx from https://feeds.example.com/world.xml" },
      fingerprint: "fp1",
    },
  });
  await p.$executeRaw`
    INSERT INTO network_outages (started_at, failing_hosts, total_hosts) VALUES (now(), 4, 5)`;
  await p.$executeRaw`
    INSERT INTO admin_audit (actor, action, affected) VALUES ('admin', 'dlq.requeue', 1)`;
  await seedClaimStats(db, { queue: "fetch", at: new Date(Date.now() - 2 * 60_000), waitsMs });
}
