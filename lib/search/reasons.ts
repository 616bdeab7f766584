import type { SearchHit } from "./hybrid";

/** One reason a hit matched, as a chip shows it: a short label and a longer explanation. */
export interface ReasonChip {
  kind: "lexical" | "meaning" | "lexical-vector";
  label: string;
  explanation: string;
}

/**
 * Why a hit matched (the Items page's chips, the CLI's "why:" line):
 * "lexical #3 (0.42)" — third among the full-text matches, ts_rank_cd 0.42;
 * "meaning 0.81 · shipped:use-lite@0.2.0" — cosine by a sentence model;
 * "lexical-vector 0.77 · lexical:char3-hash-512@1" — cosine by the lexical fallback, which
 * measures shared spelling and is never called meaning.
 * Pure, for server and browser alike.
 */
export function reasonChips(reasons: SearchHit["reasons"]): ReasonChip[] {
  const chips: ReasonChip[] = [];
  const { lexical, vector } = reasons;
  if (lexical) {
    chips.push({
      kind: "lexical",
      label: `lexical #${lexical.rank} (${lexical.score.toFixed(2)})`,
      explanation: `Its words match: number ${lexical.rank} among the full-text matches (ts_rank_cd ${lexical.score.toFixed(2)})`,
    });
  }
  if (vector) {
    const similarity = vector.similarity.toFixed(2);
    chips.push({
      kind: vector.label,
      label: `${vector.label} ${similarity} · ${vector.model}`,
      explanation:
        vector.label === "meaning"
          ? `Close in meaning: cosine similarity ${similarity} to the query by the sentence model ${vector.model}`
          : `Close in spelling, not meaning: cosine similarity ${similarity} of character 3-grams by the lexical fallback ${vector.model}`,
    });
  }
  return chips;
}

export const reasonLabels = (reasons: SearchHit["reasons"]): string[] =>
  reasonChips(reasons).map((c) => c.label);
