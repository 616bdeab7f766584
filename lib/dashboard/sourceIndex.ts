import type { Database } from "@/lib/db";
import { collectorFactsSql, healthRankSql } from "./sourceHealthSql";

/**
 * Every source's sort and filter keys (health, breaker, the hour's error rate, last poll), read
 * in one pass and kept by the process for a few seconds, so the Sources list's health and error
 * orders and filters, and the Overview's counts, cost a walk over memory instead of a pass over
 * the fleet per request.
 *
 * Why not SQL per request: health changes with the clock, so it cannot be an index; judged per
 * row it is one pass over sources, source_state and collector_status (100k, 100k and 200k rows),
 * and the error rate one over the hour's fetch_attempts. Measured by bench -- dashboard on
 * PostgreSQL at 100k sources on 2 shared cores: 0.6–0.9 s per request sorted or filtered by
 * health, 0.3–0.5 s by error rate, against the 200 ms goal; a dashboard polling every 5 s
 * would pay it on every poll, per open tab.
 *
 * Why a snapshot is enough: the keys decide which sources a page shows and in what order; the
 * rows themselves are read fresh by id (./sources.ts). A page filtered on "stalled" may show a
 * source that recovered in the last seconds, with its current state. The snapshot is refreshed
 * when it is older than SNAPSHOT_MAX_AGE_MS, or 10 times what reading it took if that is longer
 * (a 1 s read on a loaded machine is at most one pass in 10 s), in the background: requests are
 * answered from the previous snapshot meanwhile; only the first request of a process waits.
 * 100k entries are about 20 MB.
 */

export const SNAPSHOT_MAX_AGE_MS = 5_000;
/** However slow the read, a snapshot is not served older than this. */
const SNAPSHOT_HARD_MAX_AGE_MS = 60_000;

export interface SourceKeys {
  id: string;
  name: string;
  url: string | null;
  kind: string;
  breaker: string;
  /** The state's index in HEALTH_STATES (healthy 0 … disabled 6). */
  health: number;
  /** Failed share of the hour's attempts; -1 with none, so it sorts below 0 %. */
  errorRate: number;
  /** last_polled_at in epoch microseconds; -1 never. */
  lastPolled: number;
}

export interface SourceSnapshot {
  at: Date;
  keys: SourceKeys[];
}

/** Reads every source's keys at `now` (one statement). */
export async function readSourceKeys(db: Database, now: Date): Promise<SourceSnapshot> {
  const hourAgo = new Date(now.getTime() - 3_600_000);
  const rows = await db.prisma.$queryRaw<
    {
      id: string;
      name: string;
      url: string | null;
      kind: string;
      breaker: string;
      health: number;
      error_rate: number;
      last_polled: number;
    }[]
  >`
    SELECT s.id, s.name, s.url, s.kind, coalesce(st.breaker_state, 'closed') AS breaker,
           ${healthRankSql(now)} AS health,
           coalesce(r.rate, -1)::float8 AS error_rate,
           coalesce(extract(epoch FROM st.last_polled_at) * 1000000, -1)::float8 AS last_polled
    FROM sources s
    LEFT JOIN source_state st ON st.source_id = s.id
    ${collectorFactsSql(now)}
    LEFT JOIN (
      SELECT source_id,
             (count(*) FILTER (WHERE code NOT IN ('ok', 'not_modified')))::float8 / count(*) AS rate
      FROM fetch_attempts
      WHERE started_at >= ${hourAgo} AND started_at <= ${now}
      GROUP BY source_id
    ) r ON r.source_id = s.id`;
  return {
    at: now,
    keys: rows.map((r) => ({
      id: r.id,
      name: r.name,
      url: r.url,
      kind: r.kind,
      breaker: r.breaker,
      health: Number(r.health),
      errorRate: Number(r.error_rate),
      lastPolled: Number(r.last_polled),
    })),
  };
}

interface Cached {
  current: SourceSnapshot | null;
  refreshing: Promise<SourceSnapshot> | null;
  /** How long the last read took, in ms. */
  cost: number;
}

const cache = globalThis as unknown as { wirewatchSourceKeys?: WeakMap<Database, Cached> };

/** The process's snapshot of the keys, refreshed as said above. */
export function sourceSnapshot(db: Database): Promise<SourceSnapshot> {
  cache.wirewatchSourceKeys ??= new WeakMap();
  let c = cache.wirewatchSourceKeys.get(db);
  if (!c) {
    c = { current: null, refreshing: null, cost: 0 };
    cache.wirewatchSourceKeys.set(db, c);
  }
  const entry = c;
  const refresh = () => {
    if (entry.refreshing) return entry.refreshing;
    const started = performance.now();
    const reading = readSourceKeys(db, new Date()).then(
      (snapshot) => {
        entry.current = snapshot;
        entry.cost = performance.now() - started;
        entry.refreshing = null;
        return snapshot;
      },
      (err) => {
        // A failed read is not kept: the next request tries again.
        entry.refreshing = null;
        throw err;
      },
    );
    entry.refreshing = reading;
    return reading;
  };
  const current = entry.current;
  if (!current) return refresh();
  const age = Date.now() - current.at.getTime();
  const maxAge = Math.min(SNAPSHOT_HARD_MAX_AGE_MS, Math.max(SNAPSHOT_MAX_AGE_MS, 10 * entry.cost));
  if (age > SNAPSHOT_HARD_MAX_AGE_MS) return refresh();
  if (age > maxAge) refresh().catch(() => undefined);
  return Promise.resolve(current);
}

/** Forgets a database's snapshot (tests that change sources and ask again at once). */
export function forgetSourceSnapshot(db: Database): void {
  cache.wirewatchSourceKeys?.delete(db);
}
