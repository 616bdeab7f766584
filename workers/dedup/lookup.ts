import {
  bandProbes,
  type DedupThresholds,
  fromSigned64,
  type ItemKeys,
  toSigned64,
} from "@/lib/dedup";
import { Prisma } from "@/lib/generated/prisma/client";
import type { Tx } from "./clusters";

/** The item being decided, as the lookups need it. */
export interface Probe {
  entryKey: string;
  firstSeenAt: Date;
  keys: ItemKeys;
  /**
   * Items no lookup returns for this probe: the rest of a batch being decided together, whose
   * stored keys are about to change (the stage compares the batch among itself in memory).
   */
  exclude?: readonly string[];
}

export interface Candidate {
  entryKey: string;
  /** Hamming distance of the SimHashes (near lookups only). */
  distance?: number;
}

/** Candidates a near lookup reads at most, nearest first: what gets scored per item. */
export const NEAR_CANDIDATES = 8;

/**
 * What no lookup ever returns: the item itself, items not live (tombstoned, without text), and
 * any item the pair of which an operator rejected (a rejected review, which undoing a link also
 * records). A rejected pair is kept apart by every automatic stage, not only the one it was
 * rejected at: an undone exact link would otherwise come straight back as a near one (score 1).
 */
export function eligible(p: Probe): Prisma.Sql {
  return Prisma.sql`d.live AND ${eligibleOf(p)}`;
}

/** eligible() but for `live`, on a row set `d` with an entry key (the band lookup's union). */
function eligibleOf(p: Probe): Prisma.Sql {
  return Prisma.sql`d.entry_key <> ${p.entryKey} ${excluded(p, "d")}
    AND NOT EXISTS (
      SELECT 1 FROM dedup_reviews r
      WHERE r.pair_a = least(d.entry_key, ${p.entryKey}) AND r.pair_b = greatest(d.entry_key, ${p.entryKey})
        AND r.state = 'rejected')`;
}

/** `AND <alias>.entry_key <> ALL(batch)` when the probe is decided in a batch. */
export function excluded(p: Probe, alias: string): Prisma.Sql {
  if (!p.exclude || p.exclude.length === 0) return Prisma.empty;
  return Prisma.sql`AND ${Prisma.raw(alias)}.entry_key <> ALL(${[...p.exclude]}::text[])`;
}

function inWindow(p: Probe, t: DedupThresholds): Prisma.Sql {
  return Prisma.sql`d.first_seen_at BETWEEN ${p.firstSeenAt}::timestamptz - make_interval(hours => ${t.windowHours}::int)
                        AND ${p.firstSeenAt}::timestamptz + make_interval(hours => ${t.windowHours}::int)`;
}

/** Stage 1 alone (the re-run's dry run asks stage by stage). */
export async function byUrl(tx: Tx, p: Probe): Promise<Candidate | null> {
  if (p.keys.urlKey === null) return null;
  const [row] = await tx.$queryRaw<{ entry_key: string }[]>`
    SELECT d.entry_key FROM dedup_items d
    WHERE d.url_key = ${p.keys.urlKey} AND ${eligible(p)}
    ORDER BY d.first_seen_at, d.entry_key LIMIT 1`;
  return row ? { entryKey: row.entry_key } : null;
}

/** Stage 2 alone. */
export async function byContent(tx: Tx, p: Probe, t: DedupThresholds): Promise<Candidate | null> {
  if (p.keys.contentKey === null) return null;
  const [row] = await tx.$queryRaw<{ entry_key: string }[]>`
    SELECT d.entry_key FROM dedup_items d
    WHERE d.content_key = ${p.keys.contentKey} AND ${inWindow(p, t)} AND ${eligible(p)}
    ORDER BY d.first_seen_at, d.entry_key LIMIT 1`;
  return row ? { entryKey: row.entry_key } : null;
}

/**
 * Stage 3's retrieval: items sharing a SimHash band within `retrieval.radius` bits, in the window,
 * confirmed by the Hamming distance (≤ retrieval.maxHamming), nearest first, at most
 * NEAR_CANDIDATES. Scoring them is the caller's (lib/dedup judge, on title + summary).
 */
export async function nearCandidates(tx: Tx, p: Probe, t: DedupThresholds): Promise<Candidate[]> {
  if (p.keys.simhash === null) return [];
  const rows = await tx.$queryRaw<{ entry_key: string; distance: number }[]>(nearQuery(p, t));
  return rows.map((r) => ({ entryKey: r.entry_key, distance: r.distance }));
}

/**
 * nearCandidates' statement (the probe must have a SimHash): per band, the items whose band is
 * one of the probe's values within the radius, in the window, read from that band's index alone
 * (dedup_items_band<i>_idx holds the first sight, SimHash and entry key: an index-only scan, no
 * heap page per row; migration 20261216010000), the four as one UNION; then the distance, the
 * eligibility checks and the order.
 */
export function nearQuery(p: Probe, t: DedupThresholds): Prisma.Sql {
  if (p.keys.simhash === null) throw new Error("dedup: a near lookup needs a SimHash");
  const probes = bandProbes(p.keys.simhash, t.retrieval.radius);
  const h = toSigned64(p.keys.simhash);
  const band = (i: number) => Prisma.sql`
    SELECT d.entry_key, d.first_seen_at, d.simhash FROM dedup_items d
    WHERE d.${Prisma.raw(`band${i}`)} = ANY(${probes[i]}::int[]) AND d.live AND ${inWindow(p, t)}`;
  return Prisma.sql`
    SELECT entry_key, distance FROM (
      SELECT d.entry_key, d.first_seen_at,
             bit_count((d.simhash # ${h}::bigint)::bit(64))::int AS distance
      FROM (${band(0)} UNION ${band(1)} UNION ${band(2)} UNION ${band(3)}) d
      WHERE d.simhash IS NOT NULL AND ${eligibleOf(p)}
    ) c
    WHERE distance <= ${t.retrieval.maxHamming}
    ORDER BY distance, first_seen_at, entry_key
    LIMIT ${NEAR_CANDIDATES}`;
}

export interface ItemText {
  entryKey: string;
  sourceId: string;
  title: string | null;
  summary: string | null;
  link: string | null;
}

/**
 * The candidates' title, summary and link, for scoring (read from news: the text of record). A
 * candidate retracted since it was keyed (its own job not run yet) is left out.
 */
export async function texts(tx: Tx, keys: string[]): Promise<Map<string, ItemText>> {
  if (keys.length === 0) return new Map();
  const rows = await tx.$queryRaw<
    {
      entry_key: string;
      source_id: string;
      title: string | null;
      summary: string | null;
      link: string | null;
    }[]
  >`
    SELECT entry_key, source_id, title, summary, link FROM news
    WHERE entry_key = ANY(${keys}::text[]) AND deleted_at IS NULL`;
  return new Map(
    rows.map((r) => [
      r.entry_key,
      {
        entryKey: r.entry_key,
        sourceId: r.source_id,
        title: r.title,
        summary: r.summary,
        link: r.link,
      },
    ]),
  );
}

/**
 * Stages 1 and 2 for a batch of probes in one round trip (one UNION ALL branch per probe), each an
 * index lookup: the same normalised URL (dedup_items_url_idx; not held to the window: a re-visit
 * of one article is the same article whenever it comes), and the same normalised text within the
 * window (dedup_items_content_idx). The earliest of each; the caller takes the URL match first.
 * Keyed by the probe's entry key.
 */
export async function byKeysAll(
  tx: Tx,
  probes: readonly Probe[],
  t: DedupThresholds,
): Promise<Map<string, { url: Candidate | null; exact: Candidate | null }>> {
  const asked = probes.filter((p) => p.keys.urlKey !== null || p.keys.contentKey !== null);
  const found = new Map<string, { url: Candidate | null; exact: Candidate | null }>();
  if (asked.length === 0) return found;
  const branches = asked.map(
    (p, i) => Prisma.sql`
    SELECT ${i}::int AS ord,
           (SELECT d.entry_key FROM dedup_items d
            WHERE d.url_key = ${p.keys.urlKey} AND ${eligible(p)}
            ORDER BY d.first_seen_at, d.entry_key LIMIT 1) AS by_url,
           (SELECT d.entry_key FROM dedup_items d
            WHERE d.content_key = ${p.keys.contentKey} AND ${inWindow(p, t)} AND ${eligible(p)}
            ORDER BY d.first_seen_at, d.entry_key LIMIT 1) AS by_content`,
  );
  const rows = await tx.$queryRaw<
    { ord: number; by_url: string | null; by_content: string | null }[]
  >`${Prisma.join(branches, " UNION ALL ")}`;
  for (const r of rows) {
    const p = asked[r.ord] as Probe;
    found.set(p.entryKey, {
      url: r.by_url ? { entryKey: r.by_url } : null,
      exact: r.by_content ? { entryKey: r.by_content } : null,
    });
  }
  return found;
}

/** A candidate's text with the keys and anchors its stored decision was made with. */
export interface CandidateText extends ItemText {
  /** Null when the stored keys are of another version than the text (an edit not decided yet). */
  keys: ItemKeys | null;
  /** Null unless also decided under `settingsRevision` (retrieval.anchors says how many). */
  anchors: number[] | null;
}

/**
 * texts, with each candidate's stored keys and anchors (dedup_items, dedup_anchors) when they
 * were made from this very text, so judging it needs no SimHash or anchors computed again.
 */
export async function candidateTexts(
  tx: Tx,
  keys: string[],
  settingsRevision: number,
): Promise<Map<string, CandidateText>> {
  if (keys.length === 0) return new Map();
  const rows = await tx.$queryRaw<
    {
      entry_key: string;
      source_id: string;
      title: string | null;
      summary: string | null;
      link: string | null;
      same: boolean;
      same_settings: boolean;
      url_key: string | null;
      content_key: string | null;
      simhash: bigint | null;
      band0: number | null;
      band1: number | null;
      band2: number | null;
      band3: number | null;
      anchors: number[] | null;
    }[]
  >`
    SELECT n.entry_key, n.source_id, n.title, n.summary, n.link,
           d.version IS NOT DISTINCT FROM n.version AND d.decision_ms IS NOT NULL AS same,
           d.settings_revision IS NOT DISTINCT FROM ${settingsRevision}::int AS same_settings,
           d.url_key, d.content_key, d.simhash, d.band0, d.band1, d.band2, d.band3,
           (SELECT array_agg(a.anchor) FROM dedup_anchors a WHERE a.entry_key = n.entry_key) AS anchors
    FROM news n
    LEFT JOIN LATERAL (
      -- LIMIT keeps the planner from flattening this into a join it may hash over the table.
      SELECT * FROM dedup_items x WHERE x.entry_key = n.entry_key LIMIT 1
    ) d ON true
    WHERE n.entry_key = ANY(${keys}::text[]) AND n.deleted_at IS NULL`;
  return new Map(
    rows.map((r) => {
      const banded = r.band0 !== null && r.band1 !== null && r.band2 !== null && r.band3 !== null;
      return [
        r.entry_key,
        {
          entryKey: r.entry_key,
          sourceId: r.source_id,
          title: r.title,
          summary: r.summary,
          link: r.link,
          keys: r.same
            ? {
                urlKey: r.url_key,
                contentKey: r.content_key,
                simhash: r.simhash === null ? null : fromSigned64(r.simhash),
                bands: banded
                  ? [r.band0 as number, r.band1 as number, r.band2 as number, r.band3 as number]
                  : null,
              }
            : null,
          anchors: r.same && r.same_settings ? (r.anchors ?? []) : null,
        },
      ];
    }),
  );
}
