import { z } from "zod";

/**
 * Schema pieces for what a request (or a CLI flag) hands to PostgreSQL, so bad input is refused
 * at the boundary with the parameter's name instead of failing inside a query as a 500.
 *
 * PostgreSQL text cannot hold U+0000 ("invalid byte sequence for encoding UTF8: 0x00"), jsonb
 * refuses it too, and a lone UTF-16 surrogate is not Unicode at all: the JSON it ends up in (an
 * audit row's target, a filter) is refused as invalid, and elsewhere it turns into U+FFFD on the
 * way out, matching nothing. Ids are bigint columns: 9223372036854775808 (2^63) overflows them.
 */

/** Matches a high surrogate not followed by a low one, or a low one not preceded by a high. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why PostgreSQL would refuse this text, or null when it stores it as it is. */
export function textProblem(value: string): string | null {
  if (value.includes("\u0000")) return "must not contain a NUL character (U+0000)";
  if (LONE_SURROGATE.test(value)) return "must be valid Unicode (it has a lone surrogate)";
  return null;
}

/**
 * Text of at most `max` characters that PostgreSQL can store, trimmed unless `trim` is false (an
 * id in a path is taken as it is); `min` counts after the trim. Use it for every free-text
 * parameter and body field.
 */
export function text(max: number, { min = 0, trim = true }: { min?: number; trim?: boolean } = {}) {
  const base = trim ? z.string().trim() : z.string();
  return base
    .superRefine((value, ctx) => {
      const problem = textProblem(value);
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    })
    .max(max)
    .min(min);
}

/** The largest bigint: ids above it cannot be in any table. */
export const MAX_INT64 = 9223372036854775807n;

/** A positive bigint id as decimal text (1 … 9223372036854775807, no sign, no leading zero). */
export function isId(value: string): boolean {
  return /^[1-9]\d{0,18}$/.test(value) && BigInt(value) <= MAX_INT64;
}

/** A bigint id (a job, an audit row, a repair run, an observation) as text. */
export function id(what = "an id") {
  return z.string().refine(isId, { message: `must be ${what} (1 to ${MAX_INT64})` });
}
