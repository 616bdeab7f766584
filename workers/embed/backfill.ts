import type { Database } from "@/lib/db";
import { emit } from "@/lib/events";
import { logger } from "@/lib/logger";
import { itemJobKey } from "@/workers/line/stage";
import { enqueue } from "@/workers/queue/enqueue";
import { EMBED_STAGE } from "./targets";

export interface BackfillOptions {
  /** The models to keep current (the embed stage's targets), read at every round. */
  modelIds: () => number[];
  /** Called when a model's backfill completed (search may switch to it). */
  onComplete?: (modelId: number) => void | Promise<void>;
  /** Between rounds (default 10 s). */
  intervalMs?: number;
  /** Items looked at per page (default 500). */
  pageSize?: number;
  /** No more than this many embed jobs waiting: a backfill never floods the queue (default 2,000). */
  maxQueued?: number;
}

/** Lower than the line's own jobs (0): new items are embedded first, the backfill in between. */
export const BACKFILL_PRIORITY = -10;

export interface Backfill {
  /** One round now: enqueue what is missing (a page per model), mark models complete. */
  round(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A model change is a backfill, never a stop-the-world migration (seed 002): every canonical item
 * without a current vector of a target model gets an embed job at low priority, a page at a time
 * (keyset over entry_key, so a million items are walked without an offset), as long as the embed
 * queue has room. A model whose walk found nothing missing from start to end is 'complete', and
 * search may switch to it; its vectors and the older model's stay, each with its model.
 */
export function startBackfill(db: Database, options: BackfillOptions): Backfill {
  const log = logger().child({ part: "embed-backfill" });
  const pageSize = options.pageSize ?? 500;
  const maxQueued = options.maxQueued ?? 2_000;
  // Per model: where the walk is, and whether it has found anything missing since it started.
  const walks = new Map<number, { after: string; found: boolean }>();
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> = Promise.resolve();
  let stopped = false;

  const roundOnce = async () => {
    const ids = options.modelIds();
    if (ids.length === 0) return;
    const states = await db.prisma.$queryRaw<{ id: number; model: string; state: string }[]>`
      SELECT id, model, state FROM embedding_models WHERE id = ANY(${ids}::int[])`;
    for (const m of states) {
      if (m.state !== "backfilling") {
        walks.delete(m.id);
        continue;
      }
      const [queued] = await db.prisma.$queryRaw<{ n: bigint }[]>`
        SELECT count(*) AS n FROM jobs WHERE queue = ${EMBED_STAGE} AND state IN ('ready', 'leased')`;
      if (Number(queued?.n ?? 0) >= maxQueued) return;
      const walk = walks.get(m.id) ?? { after: "", found: false };
      walks.set(m.id, walk);
      const page = await db.prisma.$queryRaw<
        { entry_key: string; version: number; source_id: string; missing: boolean }[]
      >`
        SELECT d.entry_key, d.version, d.source_id,
               NOT EXISTS (SELECT 1 FROM item_vectors v
                           WHERE v.model_id = ${m.id} AND v.entry_key = d.entry_key
                             AND v.item_version >= d.version) AS missing
        FROM dedup_items d
        WHERE d.entry_key > ${walk.after} AND d.live AND d.decision_ms IS NOT NULL
          AND d.outcome IN ('unique', 'review')
        ORDER BY d.entry_key LIMIT ${pageSize}`;
      const missing = page.filter((r) => r.missing);
      if (missing.length > 0) {
        walk.found = true;
        await enqueue(
          db,
          EMBED_STAGE,
          missing.map((r) => ({
            key: itemJobKey({ entryKey: r.entry_key, version: r.version }),
            payload: { entryKey: r.entry_key, version: r.version },
            sourceId: r.source_id,
            priority: BACKFILL_PRIORITY,
          })),
        );
      }
      const last = page.at(-1);
      if (last) walk.after = last.entry_key;
      if (page.length < pageSize) {
        // The end of a walk. Nothing missing from start to end: complete. Else walk again (the
        // jobs enqueued this walk will have run, or their items will show up missing again).
        if (!walk.found) {
          await db.prisma.$executeRaw`
            UPDATE embedding_models SET state = 'complete', backfill_completed_at = now()
            WHERE id = ${m.id} AND state = 'backfilling'`;
          log.info({ model: m.model }, "embedding backfill complete");
          walks.delete(m.id);
          await options.onComplete?.(m.id);
        } else {
          walks.set(m.id, { after: "", found: false });
        }
      }
      await report(db, m.id, m.model);
    }
  };

  const tick = () => {
    running = running
      .then(roundOnce)
      .catch((err: unknown) => log.warn({ err }, "embedding backfill round failed; it runs again"))
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, options.intervalMs ?? 10_000);
      });
  };
  tick();

  return {
    round: () => {
      const run = running.then(roundOnce);
      running = run.catch(() => undefined);
      return run;
    },
    stop: async () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running.catch(() => undefined);
    },
  };
}

async function report(db: Database, modelId: number, model: string): Promise<void> {
  const [row] = await db.prisma.$queryRaw<{ canonical: bigint; embedded: bigint }[]>`
    SELECT (SELECT count(*) FROM dedup_items WHERE live AND outcome IN ('unique', 'review'))
             AS canonical,
           (SELECT count(*) FROM item_vectors v JOIN dedup_items d ON d.entry_key = v.entry_key
            WHERE v.model_id = ${modelId} AND d.live AND d.outcome IN ('unique', 'review'))
             AS embedded`;
  const canonical = Number(row?.canonical ?? 0);
  const embedded = Number(row?.embedded ?? 0);
  emit("embed:backfill", {
    model,
    canonical,
    embedded,
    remaining: Math.max(0, canonical - embedded),
  });
}
