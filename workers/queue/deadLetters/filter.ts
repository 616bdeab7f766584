import { z } from "zod";
import { Prisma } from "@/lib/generated/prisma/client";
import { isId, text } from "@/lib/validation";

/** A job id as text (jobs.id is a bigint); numbers are accepted and turned into text. */
const jobId = z
  .union([z.string(), z.number()])
  .transform((v) => String(v).trim())
  .refine(isId, { message: "must be a job id (a positive integer)" });

const when = z.union([z.date(), z.string(), z.number()]).transform((v, ctx) => {
  const d = v instanceof Date ? v : new Date(v);
  if (Number.isNaN(d.getTime())) {
    ctx.addIssue({ code: "custom", message: `not a date: ${JSON.stringify(String(v))}` });
    return z.NEVER;
  }
  return d;
});

/** Which dead letters an operation is about. Every criterion given must hold (AND). */
export const deadLetterFilterSchema = z
  .strictObject({
    /** These dead letters (at most 10,000 at once). */
    ids: z.array(jobId).min(1, "must list at least one id").max(10_000).optional(),
    /** The stage (queue name). */
    queue: text(200, { min: 1 }).optional(),
    sourceId: text(200, { min: 1 }).optional(),
    /** last_error.code, exactly. */
    code: text(200, { min: 1 }).optional(),
    /** The failure's fingerprint: 16 hex digits (see jobError.ts). */
    fingerprint: z
      .string()
      .trim()
      .toLowerCase()
      .regex(/^[0-9a-f]{16}$/, "must be 16 hex digits")
      .optional(),
    /** Died at or after this time. */
    from: when.optional(),
    /** Died before this time. */
    to: when.optional(),
  })
  .refine((f) => !f.from || !f.to || f.from < f.to, {
    message: "from must be before to",
    path: ["from"],
  });

/** What callers pass (ids as numbers or text, dates as Date, ISO text or epoch ms). */
export type DeadLetterFilterInput = z.input<typeof deadLetterFilterSchema>;
/** A validated filter. */
export type DeadLetterFilter = z.output<typeof deadLetterFilterSchema>;

/** A filter that does not validate: the message names each bad field and why. */
export class InvalidDeadLetterFilterError extends Error {
  constructor(readonly issues: { path: string; message: string }[]) {
    super(`invalid dead-letter filter: ${issues.map((i) => `${i.path}: ${i.message}`).join("; ")}`);
    this.name = "InvalidDeadLetterFilterError";
  }
}

/** Validates a filter; throws InvalidDeadLetterFilterError with every problem at once. */
export function parseDeadLetterFilter(input: unknown): DeadLetterFilter {
  const parsed = deadLetterFilterSchema.safeParse(input ?? {});
  if (parsed.success) return parsed.data;
  throw new InvalidDeadLetterFilterError(
    parsed.error.issues.map((i) => ({
      path: i.path.length > 0 ? i.path.join(".") : "filter",
      message: i.message,
    })),
  );
}

/** No criterion at all: it matches every dead letter. */
export function isEmptyFilter(filter: DeadLetterFilter): boolean {
  return Object.values(filter).every((v) => v === undefined);
}

/** The filter as plain JSON (dates as ISO text), for the audit trail and --json output. */
export function filterJson(filter: DeadLetterFilter): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(filter)) {
    if (v !== undefined) out[k] = v instanceof Date ? v.toISOString() : v;
  }
  return out;
}

/**
 * The filter as one SQL condition on `jobs j`: always `j.state = 'dead'` (archived ones are out
 * of every dead-letter view), and each criterion given. Values are bound parameters.
 */
export function deadLetterWhere(filter: DeadLetterFilter): Prisma.Sql {
  const parts: Prisma.Sql[] = [Prisma.sql`j.state = 'dead'`];
  if (filter.ids) parts.push(Prisma.sql`j.id = ANY(${filter.ids}::bigint[])`);
  if (filter.queue !== undefined) parts.push(Prisma.sql`j.queue = ${filter.queue}`);
  if (filter.sourceId !== undefined) parts.push(Prisma.sql`j.source_id = ${filter.sourceId}`);
  if (filter.code !== undefined) parts.push(Prisma.sql`j.last_error->>'code' = ${filter.code}`);
  if (filter.fingerprint !== undefined)
    parts.push(Prisma.sql`j.fingerprint = ${filter.fingerprint}`);
  if (filter.from) parts.push(Prisma.sql`j.dead_at >= ${filter.from.toISOString()}::timestamptz`);
  if (filter.to) parts.push(Prisma.sql`j.dead_at < ${filter.to.toISOString()}::timestamptz`);
  return Prisma.join(parts, " AND ");
}
