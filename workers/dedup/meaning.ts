import type { DedupThresholds } from "@/lib/dedup";
import type { ItemText } from "./lookup";

/** What a meaning comparison made of a grey-band pair. */
export interface MeaningVerdict {
  duplicate: boolean;
  /** E.g. the cosine similarity of the two items' vectors. */
  score: number;
  threshold: number;
  /** Shown with the link: the model that compared, what it saw. */
  evidence?: Record<string, unknown>;
}

/**
 * The cascade's fourth stage (seed 002: "meaning comparison, vector search"), filled by the
 * next issue (embeddings). The dedup stage asks it about pairs inside stage 3's grey band only,
 * inside the decision's transaction; null means it cannot tell yet (no vector for one side),
 * and the pair goes to the review queue as it does while no comparer is configured.
 */
export interface MeaningComparer {
  compare(
    item: ItemText,
    candidate: ItemText,
    context: { thresholds: DedupThresholds; settingsRevision: number },
  ): Promise<MeaningVerdict | null>;
}
