import { DEFAULT_THRESHOLDS, type DedupThresholds, dedupThresholdsSchema } from "@/lib/dedup";
import type { Tx } from "./clusters";

export interface ThresholdsInForce {
  thresholds: DedupThresholds;
  revision: number;
}

/**
 * The thresholds in force, from dedup_settings (one row). Read with every decision, in the
 * decision's transaction, so a decision records the revision it was made under; parsed (zod)
 * only when the revision changed since the last read. No row yet: the defaults are inserted
 * once (ON CONFLICT: two workers starting together insert one).
 */
export class ThresholdsCache {
  private cached: ThresholdsInForce | null = null;

  async read(tx: Tx): Promise<ThresholdsInForce> {
    let [row] = await tx.$queryRaw<{ revision: number; thresholds: unknown }[]>`
      SELECT revision, CASE WHEN revision = ${this.cached?.revision ?? -1} THEN NULL
                            ELSE thresholds END AS thresholds
      FROM dedup_settings WHERE id = 1`;
    if (!row) {
      await tx.$executeRaw`
        INSERT INTO dedup_settings (id, thresholds, revision)
        VALUES (1, ${JSON.stringify(DEFAULT_THRESHOLDS)}::jsonb, 1)
        ON CONFLICT (id) DO NOTHING`;
      [row] = await tx.$queryRaw<{ revision: number; thresholds: unknown }[]>`
        SELECT revision, thresholds FROM dedup_settings WHERE id = 1`;
      if (!row) throw new Error("dedup: dedup_settings has no row after inserting the defaults");
    }
    if (this.cached && row.revision === this.cached.revision) return this.cached;
    const parsed = dedupThresholdsSchema.safeParse(row.thresholds);
    if (!parsed.success) {
      // Not the item's fault: the job retries (and parks if nobody fixes the settings).
      throw new Error(
        `dedup: dedup_settings revision ${row.revision} is not valid: ${parsed.error.issues
          .map((i) => `${i.path.join(".")}: ${i.message}`)
          .join("; ")}`,
      );
    }
    this.cached = { thresholds: parsed.data, revision: Number(row.revision) };
    return this.cached;
  }
}
