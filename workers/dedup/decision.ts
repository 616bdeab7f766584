import { type ItemKeys, toSigned64 } from "@/lib/dedup";
import type { Tx } from "./clusters";

/** What the stage last decided for an item (dedup_items), or null when it never did. */
export interface StoredDecision {
  version: number;
  /** False for a row an operator's link created before the stage saw the item (no keys). */
  decided: boolean;
  clusterId: bigint | null;
  outcome: string;
  stage: string | null;
  /** The version stage 4's own pass last decided (meaningStage.ts), if it did. */
  meaningVersion: number | null;
}

export interface KeysRow {
  entryKey: string;
  version: number;
  sourceId: string;
  firstSeenAt: Date;
  live: boolean;
  keys: ItemKeys;
}

/**
 * A grey-band pair for an operator, unless the pair was decided already (confirmed or
 * rejected: kept as it is); a superseded one is opened again with the new score.
 */
export async function openReview(
  tx: Tx,
  r: {
    entryKey: string;
    candidateKey: string;
    stage: string;
    score: number;
    threshold: number;
    itemVersion: number;
    evidence: unknown;
  },
): Promise<void> {
  const [a, b] =
    r.entryKey < r.candidateKey ? [r.entryKey, r.candidateKey] : [r.candidateKey, r.entryKey];
  await tx.$executeRaw`
    INSERT INTO dedup_reviews (entry_key, candidate_key, pair_a, pair_b, stage, score, threshold,
                               item_version, evidence)
    VALUES (${r.entryKey}, ${r.candidateKey}, ${a}, ${b}, ${r.stage}, ${r.score}, ${r.threshold},
            ${r.itemVersion}, ${JSON.stringify(r.evidence ?? null)}::jsonb)
    ON CONFLICT (pair_a, pair_b, stage) DO UPDATE SET
      entry_key = excluded.entry_key, candidate_key = excluded.candidate_key,
      score = excluded.score, threshold = excluded.threshold,
      item_version = excluded.item_version, evidence = excluded.evidence,
      state = 'pending', created_at = now(), decided_at = NULL, decided_by = NULL
    WHERE dedup_reviews.state = 'superseded'`;
}

/**
 * Each item's current version in news and its stored decision (row-locked, in key order), in one
 * statement. Run after the advisory locks: a statement's snapshot is taken when it starts, so this
 * one sees every decision that held a shared lock and committed before this one got it.
 */
export async function currentAll(
  tx: Tx,
  entryKeys: readonly string[],
): Promise<Map<string, { newsVersion: number | null; stored: StoredDecision | null }>> {
  const sorted = [...new Set(entryKeys)].sort();
  const rows = await tx.$queryRaw<
    {
      entry_key: string;
      news_version: number | null;
      version: number | null;
      decided: boolean | null;
      cluster_id: bigint | null;
      outcome: string | null;
      stage: string | null;
      meaning_version: number | null;
    }[]
  >`
    SELECT k.entry_key,
           (SELECT n.version FROM news n WHERE n.entry_key = k.entry_key) AS news_version,
           d.version, d.decision_ms IS NOT NULL AS decided, d.cluster_id, d.outcome, d.stage,
           d.meaning_version
    FROM unnest(${sorted}::text[]) AS k(entry_key)
    LEFT JOIN LATERAL (
      SELECT version, decision_ms, cluster_id, outcome, stage, meaning_version FROM dedup_items
      WHERE entry_key = k.entry_key FOR UPDATE
    ) AS d ON true`;
  const out = new Map<string, { newsVersion: number | null; stored: StoredDecision | null }>();
  for (const row of rows) {
    const newsVersion = row.news_version == null ? null : Number(row.news_version);
    out.set(row.entry_key, {
      newsVersion,
      stored:
        row.version === null
          ? null
          : {
              version: Number(row.version),
              decided: row.decided === true,
              clusterId: row.cluster_id,
              outcome: row.outcome ?? "unique",
              stage: row.stage,
              meaningVersion: row.meaning_version == null ? null : Number(row.meaning_version),
            },
    });
  }
  return out;
}

/**
 * Writes each item's keys for its version, only over an older version (or a row the stage never
 * decided): a version-N result arriving after N+1 changes nothing. The items' pending reviews are
 * superseded with them (an operator should not judge text that changed; the cascade opens them
 * again if still grey). The cluster, outcome and stage stay as they are until the cascade has
 * decided (finishAll); a new row starts 'unique'. Returns the entry keys written.
 */
export async function writeKeysAll(
  tx: Tx,
  /** Stage 4's pass: an item left in review is decided again at the same version, once. */
  meaningPass: boolean,
  rows: readonly KeysRow[],
): Promise<Set<string>> {
  if (rows.length === 0) return new Set();
  const col = <T>(f: (r: KeysRow) => T) => rows.map(f);
  const band = (i: number) => col((r) => r.keys.bands?.[i] ?? null);
  const written = await tx.$queryRaw<{ entry_key: string }[]>`
    WITH written AS (
      INSERT INTO dedup_items (entry_key, version, source_id, first_seen_at, live, url_key,
                               content_key, simhash, band0, band1, band2, band3, outcome)
      SELECT k, v, s, f, l, u, c, h, b0, b1, b2, b3, CASE WHEN l THEN 'unique' ELSE 'removed' END
      FROM unnest(${col((r) => r.entryKey)}::text[], ${col((r) => r.version)}::int[],
                  ${col((r) => r.sourceId)}::text[],
                  ${col((r) => r.firstSeenAt.toISOString())}::timestamptz[],
                  ${col((r) => r.live)}::boolean[], ${col((r) => r.keys.urlKey)}::text[],
                  ${col((r) => r.keys.contentKey)}::text[],
                  ${col((r) => (r.keys.simhash === null ? null : toSigned64(r.keys.simhash).toString()))}::bigint[],
                  ${band(0)}::int[], ${band(1)}::int[], ${band(2)}::int[], ${band(3)}::int[])
           AS x(k, v, s, f, l, u, c, h, b0, b1, b2, b3)
      ON CONFLICT (entry_key) DO UPDATE SET
        version = excluded.version, source_id = excluded.source_id,
        first_seen_at = excluded.first_seen_at, live = excluded.live,
        url_key = excluded.url_key, content_key = excluded.content_key,
        simhash = excluded.simhash, band0 = excluded.band0, band1 = excluded.band1,
        band2 = excluded.band2, band3 = excluded.band3
      WHERE dedup_items.version < excluded.version
         OR (dedup_items.version = excluded.version AND dedup_items.decision_ms IS NULL)
         OR (${meaningPass} AND dedup_items.version = excluded.version
             AND dedup_items.outcome = 'review'
             AND coalesce(dedup_items.meaning_version, 0) < excluded.version)
      RETURNING entry_key
    ),
    superseded AS (
      UPDATE dedup_reviews r SET state = 'superseded', decided_at = now()
      WHERE r.state = 'pending'
        AND (r.entry_key = ANY(${col((x) => x.entryKey)}::text[])
             OR r.candidate_key = ANY(${col((x) => x.entryKey)}::text[]))
        AND EXISTS (SELECT 1 FROM written w
                    WHERE w.entry_key = r.entry_key OR w.entry_key = r.candidate_key)
      RETURNING id
    )
    SELECT entry_key FROM written`;
  return new Set(written.map((r) => r.entry_key));
}

/** The decisions' end: outcome, stage, the settings they were made under, how long they took. */
export async function finishAll(
  tx: Tx,
  rows: readonly { entryKey: string; outcome: string; stage: string | null; ms: number }[],
  settingsRevision: number,
  /** Stage 4's pass: the model it compared with, recorded with the version it decided. */
  meaningModelId?: number,
): Promise<void> {
  if (rows.length === 0) return;
  const keys = rows.map((r) => r.entryKey);
  const model = meaningModelId ?? null;
  // `entry_key = ANY` as well as the join: the rows are found by the primary key, never by a
  // hash join over the whole table (which the planner picks for an unnest it cannot size).
  await tx.$executeRaw`
    UPDATE dedup_items d SET outcome = x.o, stage = x.s, settings_revision = ${settingsRevision},
           decided_at = now(), decision_ms = x.ms,
           meaning_version = CASE WHEN ${model}::int IS NULL THEN d.meaning_version ELSE d.version END,
           meaning_model_id = coalesce(${model}::int, d.meaning_model_id)
    FROM unnest(${keys}::text[], ${rows.map((r) => r.outcome)}::text[],
                ${rows.map((r) => r.stage)}::text[], ${rows.map((r) => r.ms)}::float8[])
         AS x(k, o, s, ms)
    WHERE d.entry_key = x.k AND d.entry_key = ANY(${keys}::text[])`;
}

export interface ReviewRow {
  entryKey: string;
  candidateKey: string;
  stage: string;
  score: number;
  threshold: number;
  itemVersion: number;
  evidence: unknown;
}

/** openReview for many pairs in one statement (each pair once: the first row given wins). */
export async function openReviews(tx: Tx, reviews: readonly ReviewRow[]): Promise<void> {
  const seen = new Set<string>();
  const rows = reviews.filter((r) => {
    const [a, b] =
      r.entryKey < r.candidateKey ? [r.entryKey, r.candidateKey] : [r.candidateKey, r.entryKey];
    const key = `${a}\t${b}\t${r.stage}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  if (rows.length === 0) return;
  const col = <T>(f: (r: ReviewRow) => T) => rows.map(f);
  await tx.$executeRaw`
    INSERT INTO dedup_reviews (entry_key, candidate_key, pair_a, pair_b, stage, score, threshold,
                               item_version, evidence)
    SELECT e, c, least(e, c), greatest(e, c), s, sc, th, v, ev::jsonb
    FROM unnest(${col((r) => r.entryKey)}::text[], ${col((r) => r.candidateKey)}::text[],
                ${col((r) => r.stage)}::text[], ${col((r) => r.score)}::float8[],
                ${col((r) => r.threshold)}::float8[], ${col((r) => r.itemVersion)}::int[],
                ${col((r) => JSON.stringify(r.evidence ?? null))}::text[])
         AS x(e, c, s, sc, th, v, ev)
    ON CONFLICT (pair_a, pair_b, stage) DO UPDATE SET
      entry_key = excluded.entry_key, candidate_key = excluded.candidate_key,
      score = excluded.score, threshold = excluded.threshold,
      item_version = excluded.item_version, evidence = excluded.evidence,
      state = 'pending', created_at = now(), decided_at = NULL, decided_by = NULL
    WHERE dedup_reviews.state = 'superseded'`;
}

/**
 * The operators' decisions on pairs among `keys` × `others`: rejected pairs (never linked by the
 * stage) and confirmed ones (linked while they stay grey), as "a\tb" with a < b.
 */
export async function decidedPairs(
  tx: Tx,
  pairs: readonly (readonly [string, string])[],
): Promise<{ rejected: Set<string>; confirmed: Map<string, string | null> }> {
  const rejected = new Set<string>();
  const confirmed = new Map<string, string | null>();
  if (pairs.length === 0) return { rejected, confirmed };
  const rows = await tx.$queryRaw<
    { pair_a: string; pair_b: string; state: string; decided_by: string | null }[]
  >`
    SELECT r.pair_a, r.pair_b, r.state, r.decided_by
    FROM unnest(${pairs.map((p) => p[0])}::text[], ${pairs.map((p) => p[1])}::text[]) AS x(a, b)
    CROSS JOIN LATERAL (
      SELECT pair_a, pair_b, state, decided_by FROM dedup_reviews
      WHERE pair_a = least(x.a, x.b) AND pair_b = greatest(x.a, x.b)
        AND state IN ('rejected', 'confirmed')
      OFFSET 0 -- an index probe per pair, never flattened into a join over the table
    ) r`;
  for (const r of rows) {
    const key = pairKey(r.pair_a, r.pair_b);
    if (r.state === "rejected") rejected.add(key);
    else confirmed.set(key, r.decided_by);
  }
  return { rejected, confirmed };
}

export function pairKey(a: string, b: string): string {
  return a < b ? `${a}\t${b}` : `${b}\t${a}`;
}
