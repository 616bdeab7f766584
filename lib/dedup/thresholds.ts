import { z } from "zod";

/**
 * The thresholds in force, stored in dedup_settings.thresholds (jsonb) and validated by this
 * schema whenever read or changed. Each bound says what breaks outside it.
 */
export const dedupThresholdsSchema = z
  .object({
    /** Only items first seen within this many hours of each other are compared (stages 2-3). */
    windowHours: z
      .number({ error: "windowHours must be a number of hours" })
      .int("windowHours must be a whole number of hours")
      .min(1, "windowHours must be at least 1")
      .max(24 * 30, "windowHours must be at most 720 (30 days)"),
    retrieval: z.object({
      /**
       * Bits a SimHash band may differ by and still be looked up (0: exact band match, 4
       * probes; 1: 68; 2: 548). Above 2 the lookup reads thousands of rows per item.
       */
      radius: z
        .number({ error: "retrieval.radius must be a number" })
        .int("retrieval.radius must be a whole number")
        .min(0, "retrieval.radius must be 0, 1 or 2")
        .max(2, "retrieval.radius must be 0, 1 or 2"),
      /** Candidates further than this Hamming distance are dropped before they are scored. */
      maxHamming: z
        .number({ error: "retrieval.maxHamming must be a number" })
        .int("retrieval.maxHamming must be a whole number")
        .min(0, "retrieval.maxHamming must be between 0 and 64")
        .max(64, "retrieval.maxHamming must be between 0 and 64"),
      /**
       * Anchors kept per item (lib/dedup/anchors.ts): 0 turns the anchor lookup off. Defaulted,
       * so thresholds stored before anchors existed still parse (and get the lookup).
       */
      anchors: z
        .number({ error: "retrieval.anchors must be a number" })
        .int("retrieval.anchors must be a whole number")
        .min(0, "retrieval.anchors must be between 0 and 16")
        .max(16, "retrieval.anchors must be between 0 and 16")
        .default(6),
      /** Anchors two items must share to be looked up by them (1 finds 4 % of unrelated pairs). */
      minShared: z
        .number({ error: "retrieval.minShared must be a number" })
        .int("retrieval.minShared must be a whole number")
        .min(1, "retrieval.minShared must be between 1 and 16")
        .max(16, "retrieval.minShared must be between 1 and 16")
        .default(2),
      /**
       * Rows read per anchor at most, the most recent in the window: anchors × this bounds the
       * rows one anchor lookup reads (6 × 256 = 1,536, the banded lookup's ~1,400).
       */
      postingCap: z
        .number({ error: "retrieval.postingCap must be a number" })
        .int("retrieval.postingCap must be a whole number")
        .min(1, "retrieval.postingCap must be between 1 and 4096")
        .max(4096, "retrieval.postingCap must be between 1 and 4096")
        .default(256),
    }),
    near: z.object({
      /** Score at or above which a retrieved pair is linked (stage "near"). */
      duplicate: z
        .number({ error: "near.duplicate must be a number" })
        .gt(0, "near.duplicate must be above 0")
        .max(1, "near.duplicate must be at most 1"),
      /** Score at or above which (and below near.duplicate) a pair goes to review, unlinked. */
      review: z
        .number({ error: "near.review must be a number" })
        .gt(0, "near.review must be above 0")
        .max(1, "near.review must be at most 1"),
    }),
  })
  .refine((t) => t.retrieval.anchors === 0 || t.retrieval.minShared <= t.retrieval.anchors, {
    path: ["retrieval", "minShared"],
    message: "retrieval.minShared must not be above retrieval.anchors (nothing could be found)",
  })
  .refine((t) => t.near.review <= t.near.duplicate, {
    path: ["near", "review"],
    message: "near.review must not be above near.duplicate (the grey band lies below it)",
  });

export type DedupThresholds = z.infer<typeof dedupThresholdsSchema>;

export const DEFAULT_THRESHOLDS: DedupThresholds = Object.freeze({
  windowHours: 72,
  retrieval: Object.freeze({
    radius: 1,
    maxHamming: 22,
    anchors: 6,
    minShared: 2,
    postingCap: 256,
  }),
  near: Object.freeze({ duplicate: 0.5, review: 0.4 }),
}) as DedupThresholds;
