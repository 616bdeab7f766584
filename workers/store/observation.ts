import { z } from "zod";
import { canonicalId, entryKey } from "@/lib/canonical";
import { ORIGINS, type Origin, type WriteResult } from "@/lib/codes";

export type { Origin, WriteResult };

export type WriteKind = "observe" | "edit" | "retract";

// Limits that keep one hostile item from bloating every read of the table. A real headline is
// far under 1,000 characters; summaries are trimmed teasers, not article bodies.
export const LIMITS = {
  id: 2_048,
  title: 2_000,
  link: 4_096,
  summary: 20_000,
  category: 200,
  language: 35,
  instruments: 100,
  instrument: 64,
} as const;

const text = (max: number) =>
  z
    .string()
    .max(max)
    .refine((s) => s.isWellFormed(), "is not valid Unicode (unpaired surrogate)")
    .refine((s) => !s.includes("\u0000"), "contains a NUL character")
    .transform((s) => s.trim())
    .optional()
    .nullable();

const instant = z.union([z.date(), z.string().min(1).max(64)]).transform((v, ctx) => {
  const d = v instanceof Date ? v : new Date(v);
  if (Number.isNaN(d.getTime())) {
    ctx.addIssue({ code: "custom", message: "is not a valid date" });
    return z.NEVER;
  }
  return d;
});

// A source's own revision: its version number, or an updated timestamp (stored as epoch ms).
const revision = z.union([
  z
    .number()
    .int()
    .min(0)
    .max(Number.MAX_SAFE_INTEGER - 2),
  instant.transform((d) => d.getTime()),
]);

export const observationSchema = z.object({
  sourceId: z
    .string()
    .min(1)
    .max(200)
    .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]*$/, "must be letters, digits and . _ : -"),
  collector: z.string().min(1).max(100),
  origin: z.enum(ORIGINS),
  guid: text(LIMITS.id),
  atomId: text(LIMITS.id),
  link: text(LIMITS.link),
  baseUrl: text(LIMITS.link),
  title: text(LIMITS.title),
  summary: text(LIMITS.summary),
  category: text(LIMITS.category),
  language: text(LIMITS.language),
  breaking: z.boolean().optional().nullable(),
  instruments: z.array(text(LIMITS.instrument)).max(LIMITS.instruments).optional().nullable(),
  publishedAt: instant.optional().nullable(),
  revision: revision.optional().nullable(),
  observedAt: instant.optional(),
});

export type ObservationInput = z.input<typeof observationSchema>;

export class RejectedObservation extends Error {
  constructor(
    public readonly code:
      | "invalid_observation"
      | "no_identifier"
      | "unknown_source"
      | "not_allowed",
    message: string,
  ) {
    super(message);
    this.name = "RejectedObservation";
  }

  get reason(): string {
    return `${this.code}: ${this.message}`;
  }
}

/** A validated observation, shaped as the row it proposes (news's column names) for the SQL. */
export interface NormalizedObservation {
  kind: WriteKind;
  origin: Origin;
  collector: string;
  observedAt: Date;
  entryKey: string;
  revision: number | null;
  /** Stored in news_events.payload and read back by jsonb_populate_record(NULL::news, …). */
  row: Record<string, unknown>;
}

/**
 * Validates raw input and turns it into the row it proposes. Throws RejectedObservation with a
 * reason naming the bad field. An edit without a source revision is ordered by its observation
 * time, the best order there is.
 */
export function normalize(input: unknown, kind: WriteKind): NormalizedObservation {
  const parsed = observationSchema.safeParse(input);
  if (!parsed.success) {
    const detail = parsed.error.issues
      .slice(0, 5)
      .map((i) => `${i.path.join(".") || "observation"} ${i.message}`)
      .join("; ");
    throw new RejectedObservation("invalid_observation", detail);
  }
  const o = parsed.data;
  const nonEmpty = (s: string | null | undefined) => (s ? s : null);
  const title = nonEmpty(o.title);
  const link = nonEmpty(o.link);
  const published = o.publishedAt ? o.publishedAt.toISOString() : null;
  const canonical = canonicalId({
    guid: o.guid,
    atomId: o.atomId,
    link,
    baseUrl: o.baseUrl,
    title,
    published,
  });
  if (!canonical) {
    throw new RejectedObservation(
      "no_identifier",
      "needs a guid, an atom id, a link or a title to identify the item",
    );
  }
  if (kind !== "observe" && o.origin === "fallback") {
    throw new RejectedObservation(
      "not_allowed",
      `the fallback observer cannot ${kind}: it sees too little to be trusted with changes`,
    );
  }

  const observedAt = o.observedAt ?? new Date();
  const rev = o.revision ?? (kind === "edit" ? observedAt.getTime() : null);
  const stamp = o.origin === "fallback" ? 0 : rev === null ? 1 : rev + 2;
  const stamped = (value: string | null) => (value === null ? null : stamp);
  const fallback = o.origin === "fallback";
  // The page observer sees title and link only; anything else it claims is ignored.
  const summary = fallback ? null : nonEmpty(o.summary);
  const category = fallback ? null : nonEmpty(o.category);
  const instruments = fallback
    ? []
    : [...new Set((o.instruments ?? []).filter((x): x is string => !!x))].sort();
  const key = entryKey(o.sourceId, canonical);
  // A retraction proposes no content: only the identity and the tombstone.
  const content =
    kind === "retract"
      ? { breaking: false, instruments: [] }
      : {
          title,
          title_stamp: stamped(title),
          link,
          link_stamp: stamped(link),
          summary,
          summary_stamp: stamped(summary),
          category,
          category_stamp: stamped(category),
          language: nonEmpty(o.language)?.toLowerCase() ?? null,
          published_at: published,
          breaking: !fallback && o.breaking === true,
          instruments,
        };

  return {
    kind,
    origin: o.origin,
    collector: o.collector,
    observedAt,
    entryKey: key,
    revision: rev,
    row: {
      entry_key: key,
      source_id: o.sourceId,
      canonical_id: canonical,
      quality: fallback ? "fallback" : "authoritative",
      ...content,
      revision: rev,
      first_seen_at: observedAt.toISOString(),
      first_source: o.sourceId,
      first_collector: o.collector,
      // the delivery itself, kept in the audit payload (not columns of news)
      kind,
      origin: o.origin,
      collector: o.collector,
      observed_at: observedAt.toISOString(),
      guid: nonEmpty(o.guid),
      atom_id: nonEmpty(o.atomId),
    },
  };
}
