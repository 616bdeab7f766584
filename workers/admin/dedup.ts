import { DEDUP_AUDIT_ACTIONS } from "@/lib/dashboard/audit";
import type { Database } from "@/lib/db";
import { DEFAULT_THRESHOLDS, type DedupThresholds, dedupThresholdsSchema } from "@/lib/dedup";
import { Prisma } from "@/lib/generated/prisma/client";
import { linkItem, type Tx, unlinkItem } from "@/workers/dedup/clusters";
import { auditInsertSql } from "./audit";

/**
 * The Dedup page's admin actions: undo a link, confirm or reject a review, change the
 * thresholds (the re-run with new thresholds is in ./dedupRerun.ts). Each runs in one
 * transaction with its admin_audit row, so the change and its record commit together.
 * Errors the routes turn into answers: DedupNotFoundError → 404, DedupConflictError → 409,
 * DedupInvalidError → 400 naming the field.
 */

export class DedupNotFoundError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DedupNotFoundError";
  }
}

export class DedupConflictError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "DedupConflictError";
  }
}

export class DedupInvalidError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`);
    this.name = "DedupInvalidError";
  }
}

/** One audit row inside the action's transaction. */
async function audit(
  tx: Tx,
  row: {
    actor: string;
    action: string;
    target: Record<string, unknown>;
    affected: number;
    detail: unknown;
  },
): Promise<string> {
  const insert = auditInsertSql({
    actor: row.actor,
    action: row.action,
    target: row.target,
    dryRun: false,
    affected: Prisma.sql`${row.affected}::int`,
    detail: Prisma.sql`${JSON.stringify(row.detail)}::jsonb`,
  });
  const [made] = await tx.$queryRaw<{ id: bigint }[]>`WITH a AS (${insert}) SELECT id FROM a`;
  if (!made) throw new Error("dedup: the audit row was not written");
  return String(made.id);
}

/** A pair in key order, as dedup_reviews stores it. */
export const pairOf = (x: string, y: string): [string, string] => (x < y ? [x, y] : [y, x]);

// --- thresholds -------------------------------------------------------------------------------

export interface ThresholdsView {
  thresholds: DedupThresholds;
  revision: number;
  updatedAt: string | null;
  updatedBy: string | null;
  /** "settings" (the row) or "default" (no row yet: DEFAULT_THRESHOLDS, revision 1). */
  origin: "settings" | "default";
}

/** The thresholds in force; a stored row that no longer validates falls back to the defaults. */
export async function readThresholds(db: Database | Tx): Promise<ThresholdsView> {
  const client = "prisma" in db ? db.prisma : db;
  const [row] = await client.$queryRaw<
    { thresholds: unknown; revision: number; updated_at: Date; updated_by: string | null }[]
  >`SELECT thresholds, revision, updated_at, updated_by FROM dedup_settings WHERE id = 1`;
  if (!row) {
    return {
      thresholds: DEFAULT_THRESHOLDS,
      revision: 1,
      updatedAt: null,
      updatedBy: null,
      origin: "default",
    };
  }
  const parsed = dedupThresholdsSchema.safeParse(row.thresholds);
  return {
    thresholds: parsed.success ? parsed.data : DEFAULT_THRESHOLDS,
    revision: row.revision,
    updatedAt: row.updated_at.toISOString(),
    updatedBy: row.updated_by,
    origin: "settings",
  };
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** `patch` over `base`, object by object: a form may send only the fields it changed. */
function mergeDeep(base: unknown, patch: unknown): unknown {
  if (!isObject(base) || !isObject(patch)) return patch;
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(patch)) {
    // JSON.parse makes "__proto__" an own key; assigning it would swap out's prototype.
    if (k === "__proto__" || k === "constructor" || k === "prototype") continue;
    out[k] = mergeDeep(base[k], v);
  }
  return out;
}

/** Validates thresholds (whole or a part, laid over `base`), naming the first bad field. */
export function validateThresholds(input: unknown, base: DedupThresholds): DedupThresholds {
  const parsed = dedupThresholdsSchema.safeParse(mergeDeep(base, input));
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new DedupInvalidError(
    ["thresholds", ...(issue?.path ?? [])].join("."),
    issue?.message ?? "invalid",
  );
}

/** Writes the thresholds row (revision + 1) inside tx; the caller audits. */
export async function writeThresholds(
  tx: Tx,
  thresholds: DedupThresholds,
  actor: string,
): Promise<number> {
  const [row] = await tx.$queryRaw<{ revision: number }[]>`
    INSERT INTO dedup_settings (id, thresholds, revision, updated_at, updated_by)
    VALUES (1, ${JSON.stringify(thresholds)}::jsonb, 2, now(), ${actor})
    ON CONFLICT (id) DO UPDATE SET thresholds = excluded.thresholds,
      revision = dedup_settings.revision + 1, updated_at = now(), updated_by = excluded.updated_by
    RETURNING revision`;
  if (!row) throw new Error("dedup: the settings row was not written");
  return row.revision;
}

/**
 * Changes the thresholds (a whole object or the fields that change). `expectedRevision`, when
 * given, must be the revision in force (409 otherwise): two operators editing at once cannot
 * silently overwrite each other. The first write is revision 2 (the defaults are revision 1).
 */
export async function updateThresholds(
  db: Database,
  input: { thresholds: unknown; expectedRevision?: number },
  actor: string,
): Promise<ThresholdsView & { auditId: string }> {
  return db.prisma.$transaction(async (tx) => {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext('dedup_settings'))`;
    const before = await readThresholds(tx);
    if (input.expectedRevision !== undefined && input.expectedRevision !== before.revision) {
      throw new DedupConflictError(
        "stale_revision",
        `the thresholds are at revision ${before.revision}, not ${input.expectedRevision}: reload them`,
      );
    }
    const thresholds = validateThresholds(input.thresholds, before.thresholds);
    const revision = await writeThresholds(tx, thresholds, actor);
    const auditId = await audit(tx, {
      actor,
      action: DEDUP_AUDIT_ACTIONS.thresholds,
      target: { revision },
      affected: 1,
      detail: { before: before.thresholds, after: thresholds, fromRevision: before.revision },
    });
    const after = await readThresholds(tx);
    return { ...after, auditId };
  });
}

// --- undo -------------------------------------------------------------------------------------

interface LinkRow {
  id: bigint;
  entry_key: string;
  duplicate_of: string;
  matched_key: string;
  cluster_id: bigint;
  stage: string;
  score: number;
  threshold: number;
  item_version: number;
  evidence: unknown;
  decided_by: string;
  ended_at: Date | null;
}

export interface UndoResult {
  linkId: string;
  entryKey: string;
  clusterId: string;
  dissolved: boolean;
  elected: string | null;
  /** The rejected reviews that keep the stage from merging the pair again. */
  rejectedReviewIds: string[];
  auditId: string;
}

/**
 * Undoes one link, named by its id or by the item (its live link): the item leaves the cluster
 * ('undone', by the actor), and the pair it was linked on (the matched item, and the canonical
 * when that is another) is recorded as a rejected review for the link's stage, which the stage
 * and a re-run consult, so the same stage never merges that pair again. 404 for no such link (or
 * an item with no live link); 409 when the link has already ended.
 */
export async function undoLink(
  db: Database,
  which: { linkId: string } | { entryKey: string },
  actor: string,
): Promise<UndoResult> {
  return db.prisma.$transaction(async (tx) => {
    const [link] =
      "linkId" in which
        ? await tx.$queryRaw<LinkRow[]>`
            SELECT id, entry_key, duplicate_of, matched_key, cluster_id, stage, score, threshold,
                   item_version, evidence, decided_by, ended_at
            FROM dedup_links WHERE id = ${BigInt(which.linkId)}`
        : await tx.$queryRaw<LinkRow[]>`
            SELECT id, entry_key, duplicate_of, matched_key, cluster_id, stage, score, threshold,
                   item_version, evidence, decided_by, ended_at
            FROM dedup_links WHERE entry_key = ${which.entryKey} AND ended_at IS NULL`;
    if (!link) {
      throw new DedupNotFoundError(
        "linkId" in which ? `no link ${which.linkId}` : "this item has no live link",
      );
    }
    if (link.ended_at) {
      throw new DedupConflictError("link_ended", `link ${link.id} has already ended`);
    }
    const left = await unlinkItem(tx, link.entry_key, "undone", actor);
    // unlinkItem locked the item: a link that ended between our read and the lock is not ours.
    if (!left || left.endedLinkId !== String(link.id)) {
      throw new DedupConflictError("link_ended", `link ${link.id} ended meanwhile`);
    }
    const others = [...new Set([link.matched_key, link.duplicate_of])].filter(
      (k) => k !== link.entry_key,
    );
    const rejectedReviewIds: string[] = [];
    for (const other of others) {
      const [a, b] = pairOf(link.entry_key, other);
      const [row] = await tx.$queryRaw<{ id: bigint }[]>`
        INSERT INTO dedup_reviews (entry_key, candidate_key, pair_a, pair_b, stage, score,
                                   threshold, item_version, evidence, state, decided_at, decided_by)
        VALUES (${link.entry_key}, ${other}, ${a}, ${b}, ${link.stage}, ${link.score},
                ${link.threshold}, ${link.item_version},
                ${link.evidence === null ? null : JSON.stringify(link.evidence)}::jsonb,
                'rejected', now(), ${actor})
        ON CONFLICT (pair_a, pair_b, stage) DO UPDATE
          SET state = 'rejected', decided_at = now(), decided_by = excluded.decided_by
        RETURNING id`;
      if (row) rejectedReviewIds.push(String(row.id));
      // The operator has now said "not the same story": a pending review of the pair (another
      // stage's grey band) or the confirmation this link came from is rejected with it.
      const earlier = await tx.$queryRaw<{ id: bigint }[]>`
        UPDATE dedup_reviews SET state = 'rejected', decided_at = now(), decided_by = ${actor}
        WHERE pair_a = ${a} AND pair_b = ${b} AND state IN ('pending', 'confirmed')
        RETURNING id`;
      for (const o of earlier) rejectedReviewIds.push(String(o.id));
    }
    const auditId = await audit(tx, {
      actor,
      action: DEDUP_AUDIT_ACTIONS.undo,
      target: { linkId: String(link.id), entryKey: link.entry_key },
      affected: 1,
      detail: {
        before: {
          clusterId: String(link.cluster_id),
          duplicateOf: link.duplicate_of,
          matchedKey: link.matched_key,
          stage: link.stage,
          score: link.score,
          threshold: link.threshold,
          decidedBy: link.decided_by,
        },
        after: {
          clusterId: null,
          dissolved: left.dissolved,
          elected: left.elected,
          rejectedReviewIds,
        },
      },
    });
    return {
      linkId: String(link.id),
      entryKey: link.entry_key,
      clusterId: String(link.cluster_id),
      dissolved: left.dissolved,
      elected: left.elected,
      rejectedReviewIds,
      auditId,
    };
  });
}

// --- reviews ----------------------------------------------------------------------------------

export type ReviewState = "pending" | "confirmed" | "rejected" | "superseded";

export interface ReviewSide {
  entryKey: string;
  sourceId: string | null;
  title: string | null;
  summary: string | null;
  link: string | null;
  version: number | null;
  deleted: boolean;
}

export interface ReviewView {
  id: string;
  entryKey: string;
  candidateKey: string;
  stage: string;
  score: number;
  threshold: number;
  itemVersion: number;
  evidence: unknown;
  state: ReviewState;
  createdAt: string;
  decidedAt: string | null;
  decidedBy: string | null;
  entry: ReviewSide;
  candidate: ReviewSide;
}

interface ReviewRow {
  id: bigint;
  entry_key: string;
  candidate_key: string;
  stage: string;
  score: number;
  threshold: number;
  item_version: number;
  evidence: unknown;
  state: ReviewState;
  created_at: Date;
  decided_at: Date | null;
  decided_by: string | null;
  e_source: string | null;
  e_title: string | null;
  e_summary: string | null;
  e_link: string | null;
  e_version: number | null;
  e_deleted: boolean | null;
  c_source: string | null;
  c_title: string | null;
  c_summary: string | null;
  c_link: string | null;
  c_version: number | null;
  c_deleted: boolean | null;
}

const reviewSelect = Prisma.sql`
  SELECT r.id, r.entry_key, r.candidate_key, r.stage, r.score, r.threshold, r.item_version,
         r.evidence, r.state, r.created_at, r.decided_at, r.decided_by,
         e.source_id AS e_source, e.title AS e_title, e.summary AS e_summary, e.link AS e_link,
         e.version AS e_version, e.deleted_at IS NOT NULL AS e_deleted,
         c.source_id AS c_source, c.title AS c_title, c.summary AS c_summary, c.link AS c_link,
         c.version AS c_version, c.deleted_at IS NOT NULL AS c_deleted
  FROM dedup_reviews r
  LEFT JOIN news e ON e.entry_key = r.entry_key
  LEFT JOIN news c ON c.entry_key = r.candidate_key`;

const side = (
  key: string,
  p: {
    source: string | null;
    title: string | null;
    summary: string | null;
    link: string | null;
    version: number | null;
    deleted: boolean | null;
  },
): ReviewSide => ({
  entryKey: key,
  sourceId: p.source,
  title: p.title,
  summary: p.summary,
  link: p.link,
  version: p.version,
  deleted: p.version === null || p.deleted === true,
});

const toReview = (r: ReviewRow): ReviewView => ({
  id: String(r.id),
  entryKey: r.entry_key,
  candidateKey: r.candidate_key,
  stage: r.stage,
  score: r.score,
  threshold: r.threshold,
  itemVersion: r.item_version,
  evidence: r.evidence,
  state: r.state,
  createdAt: r.created_at.toISOString(),
  decidedAt: r.decided_at?.toISOString() ?? null,
  decidedBy: r.decided_by,
  entry: side(r.entry_key, {
    source: r.e_source,
    title: r.e_title,
    summary: r.e_summary,
    link: r.e_link,
    version: r.e_version,
    deleted: r.e_deleted,
  }),
  candidate: side(r.candidate_key, {
    source: r.c_source,
    title: r.c_title,
    summary: r.c_summary,
    link: r.c_link,
    version: r.c_version,
    deleted: r.c_deleted,
  }),
});

/** Reviews in one state (pending by default), newest first, keyset-paged by id. */
export async function listReviews(
  db: Database,
  {
    state = "pending",
    before,
    limit = 50,
  }: { state?: ReviewState; before?: string; limit?: number } = {},
): Promise<{ reviews: ReviewView[]; nextBefore: string | null; pending: number }> {
  const take = Math.max(1, Math.min(200, Math.trunc(limit)));
  const rows = await db.prisma.$queryRaw<ReviewRow[]>`
    ${reviewSelect}
    WHERE r.state = ${state} ${before ? Prisma.sql`AND r.id < ${BigInt(before)}` : Prisma.empty}
    ORDER BY r.id DESC LIMIT ${take + 1}`;
  const [count] = await db.prisma.$queryRaw<{ n: number }[]>`
    SELECT count(*)::int AS n FROM dedup_reviews WHERE state = 'pending'`;
  const page = rows.slice(0, take).map(toReview);
  return {
    reviews: page,
    nextBefore: rows.length > take ? (page[page.length - 1]?.id ?? null) : null,
    pending: count?.n ?? 0,
  };
}

export async function getReview(db: Database, id: string): Promise<ReviewView | null> {
  const [row] = await db.prisma.$queryRaw<ReviewRow[]>`${reviewSelect} WHERE r.id = ${BigInt(id)}`;
  return row ? toReview(row) : null;
}

/** Why a pending review can no longer be decided as it was asked, or null. */
function supersededBy(r: ReviewRow): string | null {
  if (r.e_version === null || r.e_deleted) return "the item was retracted or is gone";
  if (r.c_version === null || r.c_deleted) return "the candidate was retracted or is gone";
  if (r.e_version !== r.item_version) {
    return `the item changed (version ${r.item_version} was reviewed, it is at ${r.e_version})`;
  }
  return null;
}

async function lockReview(tx: Tx, id: string): Promise<ReviewRow> {
  const [row] = await tx.$queryRaw<
    ReviewRow[]
  >`${reviewSelect} WHERE r.id = ${BigInt(id)} FOR UPDATE OF r`;
  if (!row) throw new DedupNotFoundError(`no review ${id}`);
  if (row.state !== "pending") {
    throw new DedupConflictError("review_decided", `review ${id} is already ${row.state}`);
  }
  return row;
}

export interface ReviewDecision {
  review: ReviewView;
  auditId: string;
  link?: { clusterId: string; canonicalKey: string; linkId: string };
}

/**
 * Confirms a pending review: the item is linked to the candidate with stage 'review', decided
 * by the actor. A review whose item changed version, or whose item or candidate was retracted,
 * is marked 'superseded' (that commits) and refused with 409 review_superseded: the operator
 * judged text that is no longer there.
 */
export async function confirmReview(
  db: Database,
  id: string,
  actor: string,
): Promise<ReviewDecision> {
  const outcome = await db.prisma.$transaction(async (tx) => {
    const r = await lockReview(tx, id);
    const why = supersededBy(r);
    if (why) {
      await tx.$executeRaw`
        UPDATE dedup_reviews SET state = 'superseded', decided_at = now() WHERE id = ${r.id}`;
      return { superseded: why } as const;
    }
    const { revision } = await readThresholds(tx);
    const linked = await linkItem(tx, {
      entryKey: r.entry_key,
      matchedKey: r.candidate_key,
      stage: "review",
      score: r.score,
      threshold: r.threshold,
      settingsRevision: revision,
      itemVersion: r.item_version,
      evidence: r.evidence,
      decidedBy: actor,
    });
    await tx.$executeRaw`
      UPDATE dedup_reviews SET state = 'confirmed', decided_at = now(), decided_by = ${actor}
      WHERE id = ${r.id}`;
    const auditId = await audit(tx, {
      actor,
      action: DEDUP_AUDIT_ACTIONS.reviewConfirm,
      target: { reviewId: id, entryKey: r.entry_key, candidateKey: r.candidate_key },
      affected: 1,
      detail: {
        before: { state: "pending", stage: r.stage, score: r.score, threshold: r.threshold },
        after: { state: "confirmed", ...linked },
      },
    });
    return {
      auditId,
      link: {
        clusterId: linked.clusterId,
        canonicalKey: linked.canonicalKey,
        linkId: linked.linkId,
      },
    } as const;
  });
  if ("superseded" in outcome) {
    throw new DedupConflictError(
      "review_superseded",
      `review ${id} is superseded: ${outcome.superseded}`,
    );
  }
  const review = await getReview(db, id);
  if (!review) throw new DedupNotFoundError(`no review ${id}`);
  return { review, auditId: outcome.auditId, link: outcome.link };
}

/** Rejects a pending review: the pair is never merged by that stage (the stage reads it). */
export async function rejectReview(
  db: Database,
  id: string,
  actor: string,
): Promise<ReviewDecision> {
  const auditId = await db.prisma.$transaction(async (tx) => {
    const r = await lockReview(tx, id);
    await tx.$executeRaw`
      UPDATE dedup_reviews SET state = 'rejected', decided_at = now(), decided_by = ${actor}
      WHERE id = ${r.id}`;
    return audit(tx, {
      actor,
      action: DEDUP_AUDIT_ACTIONS.reviewReject,
      target: { reviewId: id, entryKey: r.entry_key, candidateKey: r.candidate_key },
      affected: 1,
      detail: {
        before: { state: "pending", stage: r.stage, score: r.score, threshold: r.threshold },
        after: { state: "rejected" },
      },
    });
  });
  const review = await getReview(db, id);
  if (!review) throw new DedupNotFoundError(`no review ${id}`);
  return { review, auditId };
}
