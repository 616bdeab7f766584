import type { DedupThresholds } from "@/lib/dedup";
import type { Tx } from "./clusters";
import type { ItemText } from "./lookup";

/** What a meaning comparison made of a grey-band pair. */
export interface MeaningVerdict {
  duplicate: boolean;
  /**
   * Not a duplicate, clearly (below the model's distinct threshold): the pair goes to no review.
   * Neither duplicate nor distinct: still grey, it goes to review.
   */
  distinct?: boolean;
  /** E.g. the cosine similarity of the two items' vectors. */
  score: number;
  threshold: number;
  /** Shown with the link: the model that compared, what it saw. */
  evidence?: Record<string, unknown>;
}

/**
 * The cascade's fourth stage (seed 002: "meaning comparison, vector search"). The dedup stage
 * asks it about pairs inside stage 3's grey band only, inside the decision's transaction (`tx`:
 * it reads what is stored, it calls no model there); null means it cannot tell (no vector for
 * one side, no calibrated threshold), and the pair goes to the review queue as it does while no
 * comparer is configured.
 */
export interface MeaningComparer {
  compare(
    item: ItemText,
    candidate: ItemText,
    context: {
      tx: Tx;
      /** The version of `item` being decided: a vector of an older text is no answer. */
      itemVersion: number;
      /** Stage 3's score of the pair, and a lexical guard that holds it (lib/dedup polarity, swaps). */
      near: number;
      guard: "opposed" | "swapped" | null;
      thresholds: DedupThresholds;
      settingsRevision: number;
    },
  ): Promise<MeaningVerdict | null>;
}
