import { cosine } from "@/lib/embed/vector";
import type { RegisteredModel } from "@/workers/embed/models";
import type { MeaningComparer, MeaningVerdict } from "./meaning";

/**
 * Stage 4 from stored vectors: the cosine of the two items' vectors by one model, against that
 * model's calibrated thresholds (embedding_models, lib/meaning). Reads inside the decision's
 * transaction and calls no model: the meaning stage (meaningStage.ts) embeds what is missing
 * before it decides. No verdict (null) when the model has no calibration (an operator's model
 * not measured yet, the lexical fallback), or a side has no vector, or the item's vector is of an
 * older text: the pair stays in review, as it would with no comparer.
 */
export function storedVectorComparer(model: RegisteredModel): MeaningComparer {
  const { meaningThreshold, distinctThreshold } = model.info;
  return {
    async compare(item, candidate, { tx, itemVersion }): Promise<MeaningVerdict | null> {
      if (model.info.kind !== "meaning" || meaningThreshold === undefined) return null;
      const rows = await tx.$queryRaw<
        { entry_key: string; item_version: number; embedding: number[] }[]
      >`
        SELECT entry_key, item_version, embedding FROM item_vectors
        WHERE model_id = ${model.id}
          AND entry_key = ANY(${[item.entryKey, candidate.entryKey]}::text[])`;
      const own = rows.find((r) => r.entry_key === item.entryKey);
      const other = rows.find((r) => r.entry_key === candidate.entryKey);
      if (!own || !other || own.item_version < itemVersion) return null;
      const score = cosine(Float32Array.from(own.embedding), Float32Array.from(other.embedding));
      return {
        duplicate: score >= meaningThreshold,
        distinct: distinctThreshold !== undefined && score < distinctThreshold,
        score,
        threshold: meaningThreshold,
        evidence: {
          model: model.info.model,
          cosine: Math.round(score * 1e4) / 1e4,
          distinctThreshold: distinctThreshold ?? null,
        },
      };
    },
  };
}
