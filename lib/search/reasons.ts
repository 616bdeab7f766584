import type { SearchHit } from "./hybrid";

/**
 * Why a hit matched, as short labels (the Items page's chips, the CLI's "why:" line):
 * "lexical #3 (0.42)" — third among the full-text matches, ts_rank_cd 0.42;
 * "meaning 0.81 · shipped:use-lite@0.2.0" — cosine by a sentence model;
 * "lexical-vector 0.77 · lexical:char3-hash-512@1" — cosine by the lexical fallback, which
 * measures shared spelling and is never called meaning.
 * Pure, for server and browser alike.
 */
export function reasonLabels(reasons: SearchHit["reasons"]): string[] {
  const labels: string[] = [];
  if (reasons.lexical) {
    labels.push(`lexical #${reasons.lexical.rank} (${reasons.lexical.score.toFixed(2)})`);
  }
  if (reasons.vector) {
    labels.push(
      `${reasons.vector.label} ${reasons.vector.similarity.toFixed(2)} · ${reasons.vector.model}`,
    );
  }
  return labels;
}
