import type { Database } from "@/lib/db";
import { bucketSecondsFor, claimWindows } from "./claimStats";
import { type BuildPoint, buildSeries } from "./readPath";
import { listWorkers, type WorkerRow } from "./workers";

const HOUR_MS = 3_600_000;

/** Lease ages, bucketed by the limits that matter: a lease is 30–60 s, sweeps every few seconds. */
export const LEASE_AGE_BUCKETS = [
  { label: "<1 s", maxMs: 1_000 },
  { label: "1–5 s", maxMs: 5_000 },
  { label: "5–15 s", maxMs: 15_000 },
  { label: "15–30 s", maxMs: 30_000 },
  { label: "30–60 s", maxMs: 60_000 },
  { label: "1–2 min", maxMs: 120_000 },
  { label: "2–5 min", maxMs: 300_000 },
  { label: "≥5 min", maxMs: null },
] as const;

export interface QueuesView {
  now: Date;
  hours: number;
  bucketSeconds: number;
  depth: {
    queue: string;
    ready: number;
    /** Ready and already due: the backlog, as opposed to recurring jobs waiting for their time. */
    due: number;
    leased: number;
    dead: number;
    oldestDueAt: Date | null;
  }[];
  /**
   * Fetch → available in the read model in the same buckets (./readPath.ts buildSeries): the
   * headline lag, drawn above the stages' claim waits.
   */
  readModelLag: Pick<BuildPoint, "t" | "changed" | "lagP50Ms" | "lagP99Ms">[];
  /** Per stage, claims in time buckets with their wait p50/p99 (ms), oldest first. */
  lag: { queue: string; points: { t: number; claims: number; p50Ms: number; p99Ms: number }[] }[];
  inFlight: {
    total: number;
    leases: {
      id: string;
      queue: string;
      key: string | null;
      sourceId: string | null;
      owner: string | null;
      attempt: number;
      leasedAt: Date | null;
      expiresAt: Date | null;
      ageMs: number;
    }[];
  };
  leaseEvents: {
    /** Counts in the window by kind. */
    counts: { expired: number; reclaimed: number; released: number };
    histogram: {
      bucket: string;
      expired: number;
      reclaimed: number;
      released: number;
      total: number;
    }[];
  };
  /** Most recently seen first; `lost`: running or draining but silent for 30 s (./workers.ts). */
  workers: WorkerRow[];
}

export { bucketSecondsFor } from "./claimStats";

/**
 * The queues' state. Depth is three counts over the jobs table's partial indexes (ready, leased,
 * dead), never over archived rows; claims and their waits over time read the per-minute rollup
 * (queue_claim_stats, ./claimStats.ts), lease expiries, reclaims and releases a bounded range of
 * lease_events_at_idx; leases in flight and workers are capped lists.
 */
export async function queuesView(
  db: Database,
  {
    hours = 1,
    now = new Date(),
    leaseLimit = 50,
    lostAfterSeconds,
  }: { hours?: number; now?: Date; leaseLimit?: number; lostAfterSeconds?: number } = {},
): Promise<QueuesView> {
  const from = new Date(now.getTime() - hours * HOUR_MS);
  const bucketSeconds = bucketSecondsFor(hours);
  const edges = LEASE_AGE_BUCKETS.map((b) => b.maxMs ?? Number.MAX_SAFE_INTEGER);
  const [depth, lag, inFlight, inFlightTotal, events, workers, builds] = await Promise.all([
    db.prisma.$queryRaw<
      {
        queue: string;
        ready: number;
        due: number;
        leased: number;
        dead: number;
        oldest_due: Date | null;
      }[]
    >`
      SELECT queue, sum(ready)::int AS ready, sum(due)::int AS due, sum(leased)::int AS leased,
             sum(dead)::int AS dead, min(oldest_due) AS oldest_due
      FROM (
        SELECT queue, count(*) AS ready, count(*) FILTER (WHERE run_at <= now()) AS due,
               0 AS leased, 0 AS dead, min(run_at) FILTER (WHERE run_at <= now()) AS oldest_due
        FROM jobs WHERE state = 'ready' GROUP BY queue
        UNION ALL
        SELECT queue, 0, 0, count(*), 0, NULL FROM jobs WHERE state = 'leased' GROUP BY queue
        UNION ALL
        SELECT queue, 0, 0, 0, count(*), NULL FROM jobs WHERE state = 'dead' GROUP BY queue
      ) d
      GROUP BY queue ORDER BY queue`,
    claimWindows(db, { from, now, bucketSeconds }),
    db.prisma.$queryRaw<
      {
        id: string;
        queue: string;
        key: string | null;
        source_id: string | null;
        lease_owner: string | null;
        attempts: number;
        leased_at: Date | null;
        lease_expires_at: Date | null;
        age_ms: number;
      }[]
    >`
      SELECT id::text AS id, queue, key, source_id, lease_owner, attempts, leased_at,
             lease_expires_at,
             (extract(epoch FROM (now() - leased_at)) * 1000)::float8 AS age_ms
      FROM jobs WHERE state = 'leased'
      ORDER BY leased_at ASC NULLS LAST
      LIMIT ${leaseLimit}`,
    db.prisma.$queryRaw<
      { n: number }[]
    >`SELECT count(*)::int AS n FROM jobs WHERE state = 'leased'`,
    db.prisma.$queryRaw<{ kind: string; bucket: number; count: number }[]>`
      SELECT kind,
             CASE
               WHEN lease_age_ms < ${edges[0]} THEN 0
               WHEN lease_age_ms < ${edges[1]} THEN 1
               WHEN lease_age_ms < ${edges[2]} THEN 2
               WHEN lease_age_ms < ${edges[3]} THEN 3
               WHEN lease_age_ms < ${edges[4]} THEN 4
               WHEN lease_age_ms < ${edges[5]} THEN 5
               WHEN lease_age_ms < ${edges[6]} THEN 6
               ELSE 7
             END AS bucket,
             count(*)::int AS count
      FROM lease_events
      WHERE at >= ${from} AND at <= ${now} AND kind IN ('expired', 'reclaimed', 'released')
      GROUP BY 1, 2`,
    listWorkers(db, { limit: 100, lostAfterSeconds }),
    buildSeries(db, { hours, now }),
  ]);

  const byQueue = new Map<string, QueuesView["lag"][number]["points"]>();
  for (const r of lag) {
    const points = byQueue.get(r.queue) ?? [];
    points.push({ t: r.t, claims: r.claims, p50Ms: r.p50Ms, p99Ms: r.p99Ms });
    byQueue.set(r.queue, points);
  }

  const histogram = LEASE_AGE_BUCKETS.map((b) => ({
    bucket: b.label,
    expired: 0,
    reclaimed: 0,
    released: 0,
    total: 0,
  }));
  const counts = { expired: 0, reclaimed: 0, released: 0 };
  for (const e of events) {
    const kind = e.kind as keyof typeof counts;
    const row = histogram[e.bucket];
    if (!row || !(kind in counts)) continue;
    row[kind] += e.count;
    row.total += e.count;
    counts[kind] += e.count;
  }

  return {
    now,
    hours,
    bucketSeconds,
    depth: depth.map((d) => ({
      queue: d.queue,
      ready: d.ready,
      due: d.due,
      leased: d.leased,
      dead: d.dead,
      oldestDueAt: d.oldest_due,
    })),
    readModelLag: builds.points.map(({ t, changed, lagP50Ms, lagP99Ms }) => ({
      t,
      changed,
      lagP50Ms,
      lagP99Ms,
    })),
    lag: [...byQueue].map(([queue, points]) => ({ queue, points })),
    inFlight: {
      total: inFlightTotal[0]?.n ?? 0,
      leases: inFlight.map((l) => ({
        id: l.id,
        queue: l.queue,
        key: l.key,
        sourceId: l.source_id,
        owner: l.lease_owner,
        attempt: l.attempts,
        leasedAt: l.leased_at,
        expiresAt: l.lease_expires_at,
        ageMs: Math.max(0, Math.round(l.age_ms ?? 0)),
      })),
    },
    leaseEvents: { counts, histogram },
    workers,
  };
}
