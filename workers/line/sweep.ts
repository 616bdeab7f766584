import type { Database } from "@/lib/db";
import { enqueue } from "@/workers/queue/enqueue";
import { itemJobKey, type Stage } from "./stage";

export interface SweepOptions {
  /**
   * How far behind its cursor a sweep looks again, for transactions that commit late: a row's
   * `at` is its transaction's now(), so a writer that started before the cursor moved past its
   * time but committed after is found as long as it committed within this margin of starting.
   * The writer's statements are one short transaction each (milliseconds; a 250-row round well
   * under a second on a loaded machine), so 30 s is two orders of magnitude of slack. The price:
   * every sweep re-reads the rows of the last 30 s (two index probes each; at 200 items/s,
   * 6,000 probes per sweep).
   */
  marginMs?: number;
  /** Rows per statement; a sweep reads pages until one comes back short or `maxJobs` is hit. */
  pageSize?: number;
  /** Jobs one sweep enqueues at most: a first sweep over a large table spreads over several. */
  maxJobs?: number;
}

export interface SweepResult {
  enqueued: number;
  /** The cursor after the sweep. */
  cursor: Date;
  /** The sweep stopped at maxJobs with more to do. */
  more: boolean;
}

interface PendingRow {
  entry_key: string;
  version: number;
  source_id: string | null;
  at: Date;
  horizon: Date | null;
}

const EPOCH = new Date(0);

/**
 * The catch-up sweep of one stage: from its cursor in line_cursors (minus the margin), every
 * item the stage has not decided at its current version and that has no job for it (live, or a
 * dead letter the operator has not requeued) is enqueued as item@version. So an item is never
 * lost because a NOTIFY went unheard (no worker listening, the connection dropped) or was never
 * sent (backfill does not notify). The cursor is saved after the jobs are in: a sweep that dies
 * in between enqueues the same keys again, which the queue's key makes harmless. Sweeps in
 * several processes at once only repeat each other's work; the cursor only moves forward.
 */
export async function sweepStage(
  db: Database,
  stage: Stage,
  options: SweepOptions = {},
): Promise<SweepResult> {
  const margin = options.marginMs ?? 30_000;
  const pageSize = options.pageSize ?? 500;
  const maxJobs = options.maxJobs ?? 5_000;
  let cursor = await readCursor(db, stage.name);
  let enqueued = 0;
  for (;;) {
    const since = new Date(cursor.getTime() - margin);
    // The horizon comes from the same statement, so from the same snapshot as the pending rows.
    const found = await db.prisma.$queryRaw<PendingRow[]>`
      WITH h AS (SELECT (${stage.horizon()}) AS horizon),
      pend AS (
        SELECT p.entry_key, p.version::int AS version, p.source_id, p.at
        FROM (${stage.pending(since)}) AS p
        -- Scalar subqueries, not NOT EXISTS: PostgreSQL never turns these into a join, so each
        -- is one probe of a partial index per row. As anti-joins, with the statistics of a jobs
        -- table that had grown by 100,000 since its last ANALYZE, the plan materialised every
        -- job of the queue and compared each row with all of them: one sweep ran for minutes.
        WHERE (SELECT 1 FROM jobs j
               WHERE j.queue = ${stage.name} AND j.key = p.entry_key || '@' || p.version
                 AND j.key IS NOT NULL AND j.state IN ('ready', 'leased') LIMIT 1) IS NULL
          AND (SELECT 1 FROM jobs j
               WHERE j.queue = ${stage.name} AND j.key = p.entry_key || '@' || p.version
                 AND j.key IS NOT NULL AND j.state IN ('dead', 'archived') LIMIT 1) IS NULL
        ORDER BY p.at, p.entry_key
        LIMIT ${pageSize}
      )
      SELECT pend.entry_key, pend.version, pend.source_id, pend.at, h.horizon
      FROM h LEFT JOIN pend ON true
      ORDER BY pend.at, pend.entry_key`;
    const rows = found.filter((r) => r.entry_key !== null);
    if (rows.length > 0) {
      await enqueue(
        db,
        stage.name,
        rows.map((r) => ({
          key: itemJobKey({ entryKey: r.entry_key, version: r.version }),
          payload: { entryKey: r.entry_key, version: r.version },
          sourceId: r.source_id,
          maxAttempts: stage.maxAttempts,
        })),
      );
      enqueued += rows.length;
    }
    const full = rows.length === pageSize;
    // A short page saw everything committed up to the horizon (same snapshot); a full one only
    // up to its last row.
    const reached = full ? (rows[rows.length - 1] as PendingRow).at : (found[0]?.horizon ?? null);
    if (reached && reached > cursor) cursor = reached;
    if (!full || enqueued >= maxJobs) {
      await saveCursor(db, stage.name, cursor);
      return { enqueued, cursor, more: full };
    }
  }
}

async function readCursor(db: Database, stageName: string): Promise<Date> {
  const [row] = await db.prisma.$queryRaw<{ updated_at: Date }[]>`
    SELECT updated_at FROM line_cursors WHERE stage = ${stageName}`;
  return row?.updated_at ?? EPOCH;
}

/** Forward only: a slower sweeper in another process never moves the cursor back. */
async function saveCursor(db: Database, stageName: string, at: Date): Promise<void> {
  await db.prisma.$executeRaw`
    INSERT INTO line_cursors (stage, updated_at, swept_at) VALUES (${stageName}, ${at}, now())
    ON CONFLICT (stage) DO UPDATE SET
      updated_at = greatest(line_cursors.updated_at, excluded.updated_at), swept_at = now()`;
}

/** For tests: how far the sweep of a stage has come (epoch when it never ran). */
export function stageCursor(db: Database, stageName: string): Promise<Date> {
  return readCursor(db, stageName);
}
