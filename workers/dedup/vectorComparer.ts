import { compareMeaning, type MeaningRule, textLanguage } from "@/lib/meaning/compare";
import type { RegisteredModel } from "@/workers/embed/models";
import type { ItemText } from "./lookup";
import type { MeaningComparer, MeaningVerdict } from "./meaning";

/**
 * The stage-4 rule of a registered model: its calibrated thresholds and the weight of the cosine
 * against stage 3's score (lib/meaning). Null when it has none (an operator's model not measured
 * yet, the shipped model whose measurement gave no rule, the lexical fallback).
 */
export function meaningRuleOf(model: RegisteredModel): MeaningRule | null {
  const { info } = model;
  if (info.kind !== "meaning") return null;
  if (info.meaningThreshold === undefined || info.distinctThreshold === undefined) return null;
  const weight = info.calibration?.cosineWeight;
  return {
    model: info.model,
    languages: info.languages,
    cosineWeight: typeof weight === "number" ? weight : 1,
    meaningThreshold: info.meaningThreshold,
    distinctThreshold: info.distinctThreshold,
  };
}

const textOf = (t: ItemText) => `${t.title ?? ""} ${t.summary ?? ""}`;

/**
 * Stage 4 from stored vectors: the two items' vectors by one model, judged by lib/meaning's rule
 * with that model's calibration (the cosine, maybe blended with stage 3's score; a guarded pair
 * never linked; a language the model does not read, no verdict). Reads inside the decision's
 * transaction and calls no model: the meaning stage (meaningStage.ts) embeds what is missing
 * before it decides. Null (no verdict, the pair stays in review) without a rule, a vector of
 * either side, or with the item's vector of an older text.
 */
export function storedVectorComparer(model: RegisteredModel): MeaningComparer {
  const rule = meaningRuleOf(model);
  return {
    async compare(
      item,
      candidate,
      { tx, itemVersion, near, guard },
    ): Promise<MeaningVerdict | null> {
      if (!rule) return null;
      const rows = await tx.$queryRaw<
        { entry_key: string; item_version: number; embedding: number[] }[]
      >`
        SELECT entry_key, item_version, embedding FROM item_vectors
        WHERE model_id = ${model.id}
          AND entry_key = ANY(${[item.entryKey, candidate.entryKey]}::text[])`;
      const own = rows.find((r) => r.entry_key === item.entryKey);
      const other = rows.find((r) => r.entry_key === candidate.entryKey);
      if (!own || !other || own.item_version < itemVersion) return null;
      const decision = compareMeaning(
        {
          a: own.embedding,
          b: other.embedding,
          model: model.info.model,
          nearScore: Math.min(1, Math.max(0, near)),
          languages: [textLanguage(textOf(item)), textLanguage(textOf(candidate))],
          guard,
        },
        rule,
      );
      if (decision.outcome === "unjudged") return null;
      return {
        duplicate: decision.duplicate,
        distinct: decision.distinct,
        score: decision.score,
        threshold: decision.threshold,
        evidence: { ...decision.evidence },
      };
    },
  };
}
