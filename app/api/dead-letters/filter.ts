import { z } from "zod";
import { apiError } from "@/lib/api/respond";
import { id, text } from "@/lib/validation";
import {
  type DeadLetterFilterInput,
  InvalidDeadLetterFilterError,
  SelectionError,
} from "@/workers/queue/deadLetters";

/** The dead-letter filter as query parameters (stage, source, code, fingerprint, from, to). */
export const FilterQuery = z.object({
  stage: text(200, { min: 1 }).optional(),
  source: text(200, { min: 1 }).optional(),
  code: text(200, { min: 1 }).optional(),
  fingerprint: text(64, { min: 1 }).optional(),
  from: text(40, { min: 1 }).optional(),
  to: text(40, { min: 1 }).optional(),
});

export function toFilter(q: z.infer<typeof FilterQuery>): DeadLetterFilterInput {
  return {
    ...(q.stage ? { queue: q.stage } : {}),
    ...(q.source ? { sourceId: q.source } : {}),
    ...(q.code ? { code: q.code } : {}),
    ...(q.fingerprint ? { fingerprint: q.fingerprint } : {}),
    ...(q.from ? { from: q.from } : {}),
    ...(q.to ? { to: q.to } : {}),
  };
}

/** A filter or selection the dead-letter library refused, as a 400; anything else rethrown. */
export function badSelection(err: unknown): Response {
  if (
    err instanceof InvalidDeadLetterFilterError ||
    err instanceof SelectionError ||
    err instanceof RangeError
  ) {
    return apiError(400, "bad_request", err.message);
  }
  throw err;
}

/** The body of requeue and discard: what to act on (a filter, ids, or all) and how. */
export const SelectionBody = z.strictObject({
  filter: z
    .strictObject({
      ids: z.array(id("a job id")).min(1).max(10_000).optional(),
      ...FilterQuery.shape,
    })
    .default({}),
  all: z.boolean().optional(),
  dryRun: z.boolean().default(false),
  cap: z.number().int().min(1).max(100_000).optional(),
});

export function bodyFilter(f: z.infer<typeof SelectionBody>["filter"]): DeadLetterFilterInput {
  return { ...toFilter(f), ...(f.ids ? { ids: f.ids } : {}) };
}
