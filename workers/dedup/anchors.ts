import { type DedupThresholds, toSigned64 } from "@/lib/dedup";
import { Prisma } from "@/lib/generated/prisma/client";
import type { Tx } from "./clusters";
import { type Candidate, eligible, excluded, NEAR_CANDIDATES, type Probe } from "./lookup";

/**
 * Stage 3's second lookup, by anchors (lib/dedup/anchors.ts; table dedup_anchors, migration
 * 20261215010000_dedup_anchors): the rewrites the SimHash bands miss, bounded however crowded the
 * window is. Both functions run inside the stage's decision transaction, after its advisory
 * locks (locks.ts), so two decisions that could find each other are serialised and each sees the
 * other's rows once it commits.
 */

const INT32_MIN = -(2 ** 31);
/** Candidates ranked before the eligibility checks, per candidate kept. */
const ELIGIBILITY_SLACK = 4;
const INT32_MAX = 2 ** 31 - 1;

/** The anchors as the INTEGER column takes them: distinct signed 32-bit integers. */
function checked(anchors: readonly number[]): number[] {
  for (const a of anchors) {
    if (!Number.isInteger(a) || a < INT32_MIN || a > INT32_MAX) {
      throw new RangeError(`dedup anchors: ${a} is not a signed 32-bit integer`);
    }
  }
  return [...new Set(anchors)];
}

/**
 * Makes `anchors` the item's rows, in one statement: the old rows not among them go, the new
 * ones come, the rows both have stay (an edit that keeps most of the words rewrites little).
 * Null or empty: no rows (a tombstoned or text-less item is nobody's candidate). The DELETE and
 * the INSERT touch disjoint rows, so running them in one snapshot is safe; a replay of the same
 * call changes nothing (ON CONFLICT), so a job run twice leaves the same rows.
 */
export async function writeAnchors(
  tx: Tx,
  entryKey: string,
  firstSeenAt: Date,
  anchors: readonly number[] | null,
): Promise<{ removed: number; added: number }> {
  const next = checked(anchors ?? []);
  const [row] = await tx.$queryRaw<{ removed: number; added: number }[]>`
    WITH removed AS (
      DELETE FROM dedup_anchors
      WHERE entry_key = ${entryKey} AND NOT (anchor = ANY(${next}::int[]))
      RETURNING anchor
    ),
    added AS (
      INSERT INTO dedup_anchors (entry_key, anchor, first_seen_at)
      SELECT ${entryKey}, a, ${firstSeenAt}::timestamptz FROM unnest(${next}::int[]) AS a
      ON CONFLICT (entry_key, anchor) DO UPDATE SET first_seen_at = excluded.first_seen_at
        WHERE dedup_anchors.first_seen_at <> excluded.first_seen_at
      RETURNING anchor
    )
    SELECT (SELECT count(*) FROM removed)::int AS removed, (SELECT count(*) FROM added)::int AS added`;
  return { removed: row?.removed ?? 0, added: row?.added ?? 0 };
}

/** A candidate of the anchor lookup: how many anchors it shares with the probe. */
export interface AnchorCandidate extends Candidate {
  shared: number;
}

/**
 * The statement anchorCandidates runs (exported so a test can EXPLAIN ANALYZE it). Per anchor,
 * the `postingCap` newest rows in the probe's window (dedup_anchors_lookup_idx, a range scan that
 * stops at the LIMIT): at most anchors × postingCap rows read (6 × 256 = 1,536 by default)
 * however many items share an anchor; a duplicate is usually seen within hours of its original,
 * so it is among an anchor's newest rows. Grouped by item, kept when sharing ≥ minShared,
 * the most shared (then earliest) ELIGIBILITY_SLACK × NEAR_CANDIDATES of them checked against
 * dedup_items (live, not rejected: lookup.ts's eligible) only then, and the first
 * NEAR_CANDIDATES of those kept. A row's first_seen_at is its item's, so the order needs no
 * join; the checks join a few dozen rows, not every item sharing two anchors (~190 in a crowded
 * window). The caps come before the checks on purpose: a tombstoned row still costs a read but
 * the read stays bounded (writeAnchors removes a removed item's rows, so there are few). The
 * index holds the entry key (migration 20261216000000), so the posting reads are index-only.
 */
export function anchorQuery(p: Probe, anchors: readonly number[], t: DedupThresholds): Prisma.Sql {
  const r = t.retrieval;
  const h = p.keys.simhash === null ? null : toSigned64(p.keys.simhash);
  return Prisma.sql`
    SELECT c.entry_key, c.shared,
           CASE WHEN ${h}::bigint IS NULL OR d.simhash IS NULL THEN NULL
                ELSE bit_count((d.simhash # ${h}::bigint)::bit(64))::int END AS distance
    FROM (
      SELECT posting.entry_key, count(*)::int AS shared, min(posting.first_seen_at) AS first_seen_at
      FROM unnest(${[...anchors]}::int[]) AS q(anchor)
      CROSS JOIN LATERAL (
        SELECT x.entry_key, x.first_seen_at FROM dedup_anchors x
        WHERE x.anchor = q.anchor AND x.entry_key <> ${p.entryKey} ${excluded(p, "x")}
          AND x.first_seen_at BETWEEN ${p.firstSeenAt}::timestamptz - make_interval(hours => ${t.windowHours}::int)
                                  AND ${p.firstSeenAt}::timestamptz + make_interval(hours => ${t.windowHours}::int)
        ORDER BY x.first_seen_at DESC
        LIMIT ${r.postingCap}
      ) AS posting
      GROUP BY posting.entry_key
      HAVING count(*) >= ${r.minShared}
      ORDER BY shared DESC, first_seen_at, posting.entry_key
      LIMIT ${NEAR_CANDIDATES * ELIGIBILITY_SLACK}
    ) c
    JOIN dedup_items d ON d.entry_key = c.entry_key
    WHERE ${eligible(p)}
    ORDER BY c.shared DESC, c.first_seen_at, c.entry_key
    LIMIT ${NEAR_CANDIDATES}`;
}

/**
 * Items sharing at least `retrieval.minShared` of `anchors` (the probe's, lib/dedup anchors with
 * `retrieval.anchors`), in the window: what lib/dedup's retrievedBy calls "anchors", as far as the
 * posting cap lets the lookup see. At most NEAR_CANDIDATES, with their SimHash distance when both
 * have one (for the evidence; it does not filter: a rewrite's SimHash is far). [] when the lookup
 * is off (retrieval.anchors 0) or the probe has fewer anchors than minShared.
 */
export async function anchorCandidates(
  tx: Tx,
  p: Probe,
  anchors: readonly number[],
  t: DedupThresholds,
): Promise<AnchorCandidate[]> {
  const r = t.retrieval;
  const mine = checked(anchors).slice(0, r.anchors);
  if (r.anchors === 0 || mine.length < r.minShared) return [];
  const rows = await tx.$queryRaw<{ entry_key: string; shared: number; distance: number | null }[]>(
    anchorQuery(p, mine, t),
  );
  return rows.map((row) => ({
    entryKey: row.entry_key,
    shared: row.shared,
    ...(row.distance === null ? {} : { distance: row.distance }),
  }));
}

/**
 * writeAnchors for a batch in one statement: each item's rows become its anchors (null or
 * empty: none), rows both have stay.
 */
export async function writeAnchorsAll(
  tx: Tx,
  items: readonly { entryKey: string; firstSeenAt: Date; anchors: readonly number[] | null }[],
): Promise<void> {
  if (items.length === 0) return;
  const flat = items.flatMap((i) =>
    checked(i.anchors ?? []).map((a) => [i.entryKey, a, i.firstSeenAt.toISOString()] as const),
  );
  await tx.$queryRaw`
    WITH next AS (
      SELECT * FROM unnest(${flat.map((f) => f[0])}::text[], ${flat.map((f) => f[1])}::int[],
                           ${flat.map((f) => f[2])}::timestamptz[]) AS x(k, a, f)
    ),
    removed AS (
      DELETE FROM dedup_anchors d
      WHERE d.entry_key = ANY(${items.map((i) => i.entryKey)}::text[])
        AND NOT EXISTS (SELECT 1 FROM next WHERE next.k = d.entry_key AND next.a = d.anchor)
      RETURNING 1
    ),
    added AS (
      INSERT INTO dedup_anchors (entry_key, anchor, first_seen_at)
      SELECT k, a, f FROM next
      ON CONFLICT (entry_key, anchor) DO UPDATE SET first_seen_at = excluded.first_seen_at
        WHERE dedup_anchors.first_seen_at <> excluded.first_seen_at
      RETURNING 1
    )
    SELECT (SELECT count(*) FROM removed)::int AS removed, (SELECT count(*) FROM added)::int AS added`;
}
