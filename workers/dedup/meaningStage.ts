import type { Database } from "@/lib/db";
import { Prisma } from "@/lib/generated/prisma/client";
import type { EmbedTarget } from "@/workers/embed/targets";
import type { Stage } from "@/workers/line/stage";
import { dedupStage } from "./stage";
import { storedVectorComparer } from "./vectorComparer";

export const MEANING_STAGE = "meaning";

export interface MeaningStageOptions {
  /** The model stage 4 compares with, and how to embed an item that has no vector of it yet. */
  target: EmbedTarget;
  /** Embeds and stores `entryKeys`' current text by the target's model where it is missing. */
  ensureVectors: (entryKeys: string[]) => Promise<void>;
  handsOn?: readonly string[];
}

/**
 * Stage 4 of the cascade (seed 002: "meaning comparison"), after embed: an item dedup left in
 * review (its pairs in stage 3's grey band) is decided again at the same version, with the
 * vectors of one model (vectorComparer.ts): a pair at or above the model's threshold is linked
 * with stage 'meaning' and its cosine, one clearly below is no longer a question, the rest stay
 * in review. The decision is dedup's own (stage.ts: same locks, same links, same undo), made once
 * per version (dedup_items.meaning_version). Other items pass straight through.
 */
export function meaningStage(db: Database, options: MeaningStageOptions): Stage {
  const model = options.target.model;
  const decide = dedupStage(db, {
    meaning: storedVectorComparer(model),
    meaningPass: { stageName: MEANING_STAGE, modelId: model.id },
    handsOn: options.handsOn,
    concurrency: 8,
    batch: { maxBatch: 8, maxInFlight: 1 },
  });
  return {
    ...decide,
    name: MEANING_STAGE,
    handle: async (job, ctx) => {
      const [row] = await db.prisma.$queryRaw<
        { version: number; outcome: string; meaning_version: number | null }[]
      >`SELECT version, outcome, meaning_version FROM dedup_items WHERE entry_key = ${job.entryKey}`;
      if (!row || row.version > job.version) return "superseded";
      if (row.version < job.version)
        throw new Error(`meaning: ${job.entryKey}@${job.version} not decided by dedup yet`);
      if (row.outcome !== "review" || (row.meaning_version ?? 0) >= job.version) {
        return row.outcome === "unique" || row.outcome === "review" ? "survived" : "dropped";
      }
      // The pairs to compare are its pending reviews: both sides need a current vector.
      const pairs = await db.prisma.$queryRaw<{ other: string }[]>`
        SELECT CASE WHEN entry_key = ${job.entryKey} THEN candidate_key ELSE entry_key END AS other
        FROM dedup_reviews
        WHERE state = 'pending' AND (entry_key = ${job.entryKey} OR candidate_key = ${job.entryKey})`;
      await options.ensureVectors([job.entryKey, ...pairs.map((p) => p.other)]);
      return decide.handle(job, ctx);
    },
    // Items left in review at their version that stage 4 has not decided with this model, and
    // that have their vector (embed hands them on; this catches what a crash lost).
    pending: () => Prisma.sql`
      SELECT d.entry_key, d.version, d.source_id, d.decided_at AS at
      FROM dedup_items d
      WHERE d.outcome = 'review' AND coalesce(d.meaning_version, 0) < d.version
        AND EXISTS (SELECT 1 FROM item_vectors v WHERE v.model_id = ${model.id}
                    AND v.entry_key = d.entry_key AND v.item_version >= d.version)`,
    horizon: () => Prisma.sql`SELECT max(decided_at) FROM dedup_items WHERE outcome = 'review'`,
  };
}
