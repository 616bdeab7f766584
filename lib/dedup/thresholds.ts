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
  .refine((t) => t.near.review <= t.near.duplicate, {
    path: ["near", "review"],
    message: "near.review must not be above near.duplicate (the grey band lies below it)",
  });

export type DedupThresholds = z.infer<typeof dedupThresholdsSchema>;

export const DEFAULT_THRESHOLDS: DedupThresholds = Object.freeze({
  windowHours: 72,
  retrieval: Object.freeze({ radius: 1, maxHamming: 22 }),
  near: Object.freeze({ duplicate: 0.55, review: 0.45 }),
}) as DedupThresholds;
