import type { Database } from "@/lib/db";
import { logger } from "@/lib/logger";
import { itemJobKey } from "@/workers/line/stage";
import { enqueue } from "@/workers/queue/enqueue";
import { EXTRACT_STAGE, extractable } from "./stage";

export interface ExtractBackfillOptions {
  /** The configured chain's id: rows made by another one (or none) are re-extracted. */
  extractorId: string;
  /** Stage 4 runs before extract (items in review wait for it): as the stage's own setting. */
  afterMeaning?: boolean;
  /** Between rounds (default 10 s). */
  intervalMs?: number;
  /**
   * After a walk that found nothing, the next walk starts this much later (default 1 h): it
   * finds what the line's sweep no longer looks at (items decided over an hour ago with no
   * extraction and no job).
   */
  idleMs?: number;
  /** Items looked at per page (default 500). */
  pageSize?: number;
  /**
   * Pages one round reads at most while it finds nothing to enqueue (default 20: 10,000 items, a
   * few index-only reads): a walk over a million items that are all current takes 100 rounds.
   */
  pagesPerRound?: number;
  /** No more than this many extract jobs waiting: a backfill never floods the queue (default 2,000). */
  maxQueued?: number;
  /** The jobs' attempts (the stage's own: 10). */
  maxAttempts?: number;
}

/** Below the line's own jobs (0): new items are extracted first, the backfill in between. */
export const BACKFILL_PRIORITY = -10;

export interface ExtractBackfill {
  /** One round now: enqueue a page of what another chain made (or nothing did). */
  round(): Promise<void>;
  /** The last walk from start to end found nothing to do: every canonical item is current. */
  complete(): boolean;
  stop(): Promise<void>;
}

interface PageRow {
  entry_key: string;
  version: number;
  source_id: string;
  missing: boolean;
}

/**
 * A model or prompt change re-extracts gradually, never stop-the-world (seed 002, as embeddings):
 * the configured chain has an id (lib/extract: providers, models and prompt versions), stored on
 * every row; a keyset walk over the canonical items (entry_key order, a page at a time) enqueues an
 * extract job at priority −10 for each whose row was made by another chain, or that has none,
 * while fewer than 2,000 extract jobs wait. Until its job runs, an item keeps the older chain's
 * extraction: readers never see a gap. An item whose job is a dead letter is not enqueued again
 * (an operator requeues it, as the sweep leaves it). A walk that found nothing to do from start
 * to end is complete; the next starts an hour later (the line's sweep looks back an hour only:
 * the walk is also how an older item with no extraction and no job is found, e.g. history on the
 * first start with extraction on).
 */
export function startExtractBackfill(
  db: Database,
  options: ExtractBackfillOptions,
): ExtractBackfill {
  const log = logger().child({ part: "extract-backfill" });
  const pageSize = options.pageSize ?? 500;
  const pagesPerRound = options.pagesPerRound ?? 20;
  const maxQueued = options.maxQueued ?? 2_000;
  const afterMeaning = options.afterMeaning ?? false;
  let walk = { after: "", found: false };
  let done = false;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> = Promise.resolve();
  let stopped = false;

  const roundOnce = async () => {
    for (let page = 0; page < pagesPerRound; page++) {
      const [queued] = await db.prisma.$queryRaw<{ n: number }[]>`
        SELECT count(*)::int AS n FROM jobs
        WHERE queue = ${EXTRACT_STAGE} AND state IN ('ready', 'leased')`;
      const room = maxQueued - (queued?.n ?? 0);
      if (room <= 0) return;
      const rows = await db.prisma.$queryRaw<PageRow[]>`
        SELECT d.entry_key, d.version, d.source_id,
               NOT EXISTS (SELECT 1 FROM item_extractions x
                           WHERE x.entry_key = d.entry_key AND x.item_version >= d.version
                             AND x.extractor = ${options.extractorId})
               AND NOT EXISTS (SELECT 1 FROM jobs j
                               WHERE j.queue = ${EXTRACT_STAGE}
                                 AND j.key = d.entry_key || '@' || d.version
                                 AND j.state IN ('dead', 'archived')) AS missing
        FROM dedup_items d
        WHERE d.entry_key > ${walk.after} AND ${extractable(afterMeaning)}
        ORDER BY d.entry_key LIMIT ${pageSize}`;
      // A page with more to do than the queue has room for is taken up to the room; the walk
      // goes on from the last item enqueued.
      const missing: PageRow[] = [];
      let last: PageRow | undefined;
      for (const r of rows) {
        if (r.missing) {
          if (missing.length === room) break;
          missing.push(r);
        }
        last = r;
      }
      if (missing.length > 0) {
        walk.found = true;
        done = false;
        await enqueue(
          db,
          EXTRACT_STAGE,
          missing.map((r) => ({
            key: itemJobKey({ entryKey: r.entry_key, version: r.version }),
            payload: { entryKey: r.entry_key, version: r.version },
            sourceId: r.source_id,
            priority: BACKFILL_PRIORITY,
            maxAttempts: options.maxAttempts ?? 10,
          })),
        );
      }
      if (last) walk.after = last.entry_key;
      if (rows.length < pageSize && last === rows.at(-1)) {
        // The end of a walk. Nothing to do from start to end: complete. Else walk again (the jobs
        // enqueued this walk will have run by then, or their items show up again).
        if (!walk.found && !done) {
          log.info({ extractor: options.extractorId }, "extraction backfill complete");
        }
        done = !walk.found;
        walk = { after: "", found: false };
        return; // a walk a round at most: after a complete one, the next waits idleMs
      }
      if (missing.length > 0) return; // one page of jobs a round: the queue works between rounds
    }
  };

  const tick = () => {
    running = running
      .then(roundOnce)
      .catch((err: unknown) => log.warn({ err }, "extraction backfill round failed; it runs again"))
      .finally(() => {
        if (stopped) return;
        const atStart = walk.after === "";
        timer = setTimeout(
          tick,
          done && atStart ? (options.idleMs ?? 3_600_000) : (options.intervalMs ?? 10_000),
        );
      });
  };
  tick();

  return {
    round: () => {
      const run = running.then(roundOnce);
      running = run.catch(() => undefined);
      return run;
    },
    complete: () => done,
    stop: async () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running.catch(() => undefined);
    },
  };
}
