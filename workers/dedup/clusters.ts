import type { Prisma } from "@/lib/generated/prisma/client";

/**
 * The cluster operations: every change to who is a duplicate of whom goes through here, in the
 * caller's transaction (`db.prisma.$transaction(async (tx) => …)`), so the link row, the news
 * mirror, the cluster's counts and its events commit together or not at all.
 *
 * Locking: each operation first locks the dedup_items rows it is about (in key order), then the
 * clusters those rows name (in id order), and only then reads the links and members it changes.
 * Two stage workers linking into one cluster therefore queue on the cluster row and the second
 * sees the first's member; two linking onto one lone item queue on that item's row, so it never
 * gets two clusters. Dissolving or electing also writes other members' rows without holding their
 * item locks first; a worker holding such a row while waiting for the cluster is a deadlock
 * PostgreSQL detects, aborting one transaction, whose job the queue retries.
 *
 * news.updated_at is not touched: the line's catch-up sweep reads it, and a link is the stage's
 * own output, not a change of the item that should run the stages again.
 */

export type Tx = Prisma.TransactionClient;

/** Why a link ended (dedup_links.ended_reason). */
export type EndReason =
  | "undone"
  | "edited"
  | "retracted"
  | "empty"
  | "rerun"
  | "relinked"
  | "dissolved"
  | "review"
  | (string & {});

export interface LinkDecision {
  entryKey: string;
  /** The item it was judged against: any member of the target cluster, or a lone item. */
  matchedKey: string;
  stage: string;
  score: number;
  threshold: number;
  settingsRevision: number;
  itemVersion: number;
  evidence: unknown;
  /** 'dedup' (the stage) unless an operator decided (review confirm). */
  decidedBy?: string;
}

export interface LinkResult {
  clusterId: string;
  canonicalKey: string;
  /** The live link row of the entry (the existing one when nothing changed). */
  linkId: string;
  /** False when the entry was already linked this way (an at-least-once re-run). */
  changed: boolean;
}

export interface LeaveResult {
  clusterId: string;
  /** The live link ended, if the item had one (a canonical has none). */
  endedLinkId: string | null;
  wasCanonical: boolean;
  /** The new canonical when the leaving one was the canonical and the cluster lives on. */
  elected: string | null;
  dissolved: boolean;
}

interface ItemRow {
  entry_key: string;
  cluster_id: bigint | null;
}

interface ClusterRow {
  id: bigint;
  canonical_key: string;
  dissolved_at: Date | null;
}

interface LiveLink {
  id: bigint;
  entry_key: string;
  duplicate_of: string;
  matched_key: string;
  cluster_id: bigint;
  stage: string;
  score: number;
  threshold: number;
  settings_revision: number;
  item_version: number;
  evidence: unknown;
  decided_at: Date;
  decided_by: string;
}

export class DedupItemMissingError extends Error {
  constructor(readonly entryKey: string) {
    super(`dedup: no news row ${entryKey}`);
    this.name = "DedupItemMissingError";
  }
}

/**
 * Locks the items' dedup_items rows, creating a bare one from news for an item the stage has not
 * keyed yet (an operator may link two items the stage never saw; such a row has no keys, so no
 * lookup finds it until the stage writes them).
 */
async function lockItems(tx: Tx, keys: string[]): Promise<Map<string, ItemRow>> {
  const sorted = [...new Set(keys)].sort();
  await tx.$executeRaw`
    INSERT INTO dedup_items (entry_key, version, source_id, first_seen_at, live, outcome)
    SELECT n.entry_key, n.version, n.source_id, n.first_seen_at, n.deleted_at IS NULL, 'unique'
    FROM news n WHERE n.entry_key = ANY(${sorted}::text[])
    ON CONFLICT (entry_key) DO NOTHING`;
  const rows = await tx.$queryRaw<ItemRow[]>`
    SELECT entry_key, cluster_id FROM dedup_items
    WHERE entry_key = ANY(${sorted}::text[])
    ORDER BY entry_key FOR UPDATE`;
  const byKey = new Map(rows.map((r) => [r.entry_key, r]));
  for (const key of sorted) if (!byKey.has(key)) throw new DedupItemMissingError(key);
  return byKey;
}

async function lockClusters(tx: Tx, ids: (bigint | null)[]): Promise<Map<string, ClusterRow>> {
  const wanted = [...new Set(ids.filter((id): id is bigint => id !== null).map(String))];
  if (wanted.length === 0) return new Map();
  const rows = await tx.$queryRaw<ClusterRow[]>`
    SELECT id, canonical_key, dissolved_at FROM dedup_clusters
    WHERE id = ANY(${wanted}::bigint[]) ORDER BY id FOR UPDATE`;
  return new Map(rows.map((r) => [String(r.id), r]));
}

async function liveLink(tx: Tx, entryKey: string): Promise<LiveLink | null> {
  const [row] = await tx.$queryRaw<LiveLink[]>`
    SELECT id, entry_key, duplicate_of, matched_key, cluster_id, stage, score, threshold,
           settings_revision, item_version, evidence, decided_at, decided_by
    FROM dedup_links WHERE entry_key = ${entryKey} AND ended_at IS NULL`;
  return row ?? null;
}

async function endLink(tx: Tx, id: bigint, reason: string, by: string | null): Promise<void> {
  await tx.$executeRaw`
    UPDATE dedup_links SET ended_at = now(), ended_reason = ${reason}, ended_by = ${by}
    WHERE id = ${id} AND ended_at IS NULL`;
}

async function event(
  tx: Tx,
  clusterId: bigint,
  kind: string,
  entryKey: string | null,
  detail: Record<string, unknown>,
): Promise<void> {
  await tx.$executeRaw`
    INSERT INTO dedup_cluster_events (cluster_id, kind, entry_key, detail)
    VALUES (${clusterId}, ${kind}, ${entryKey}, ${JSON.stringify(detail)}::jsonb)`;
}

/** members / outlets / first_seen_at from the rows that name the cluster: never drifts by ±1. */
async function recount(tx: Tx, clusterId: bigint): Promise<number> {
  const [row] = await tx.$queryRaw<{ members: number }[]>`
    UPDATE dedup_clusters c SET
      members = m.members, outlets = m.outlets,
      first_seen_at = COALESCE(m.first_seen_at, c.first_seen_at), updated_at = now()
    FROM (SELECT count(*)::int AS members, count(DISTINCT source_id)::int AS outlets,
                 min(first_seen_at) AS first_seen_at
          FROM dedup_items WHERE cluster_id = ${clusterId}) m
    WHERE c.id = ${clusterId}
    RETURNING m.members`;
  return row?.members ?? 0;
}

async function clearNews(tx: Tx, entryKey: string): Promise<void> {
  await tx.$executeRaw`
    UPDATE news SET duplicate_of = NULL, dedup_stage = NULL, dedup_score = NULL,
                    dedup_threshold = NULL, dedup_at = now()
    WHERE entry_key = ${entryKey}`;
}

async function writeLink(
  tx: Tx,
  l: Omit<LiveLink, "id" | "decided_at"> & { decided_at?: Date },
): Promise<bigint> {
  const [row] = await tx.$queryRaw<{ id: bigint }[]>`
    INSERT INTO dedup_links (entry_key, duplicate_of, matched_key, cluster_id, stage, score,
                             threshold, settings_revision, item_version, evidence, decided_at,
                             decided_by)
    VALUES (${l.entry_key}, ${l.duplicate_of}, ${l.matched_key}, ${l.cluster_id}, ${l.stage},
            ${l.score}, ${l.threshold}, ${l.settings_revision}, ${l.item_version},
            ${l.evidence === undefined || l.evidence === null ? null : JSON.stringify(l.evidence)}::jsonb,
            COALESCE(${l.decided_at ?? null}::timestamptz, now()), ${l.decided_by})
    RETURNING id`;
  if (!row) throw new Error("dedup: the link row was not written");
  await tx.$executeRaw`
    UPDATE news SET duplicate_of = ${l.duplicate_of}, dedup_stage = ${l.stage},
                    dedup_score = ${l.score}, dedup_threshold = ${l.threshold}, dedup_at = now()
    WHERE entry_key = ${l.entry_key}`;
  return row.id;
}

/**
 * Links entryKey into matchedKey's cluster (one is made, matchedKey its canonical, when
 * matchedKey is alone). An entry in another cluster leaves that one first (electing or
 * dissolving there as needed): the newest decision wins. Linking an item already linked the
 * same way (same cluster, matched item, stage, score, threshold and version) changes nothing,
 * so a job run twice writes one link; an entry already in matchedKey's cluster as its canonical
 * stays as it is (they are together already).
 */
export async function linkItem(tx: Tx, d: LinkDecision): Promise<LinkResult> {
  if (d.entryKey === d.matchedKey) throw new Error(`dedup: ${d.entryKey} cannot duplicate itself`);
  const items = await lockItems(tx, [d.entryKey, d.matchedKey]);
  const entry = items.get(d.entryKey) as ItemRow;
  const matched = items.get(d.matchedKey) as ItemRow;
  const clusters = await lockClusters(tx, [entry.cluster_id, matched.cluster_id]);
  const decidedBy = d.decidedBy ?? "dedup";

  const current = await liveLink(tx, d.entryKey);
  const target = matched.cluster_id === null ? null : clusters.get(String(matched.cluster_id));
  if (target && entry.cluster_id === target.id) {
    if (target.canonical_key === d.entryKey) {
      return { clusterId: String(target.id), canonicalKey: d.entryKey, linkId: "", changed: false };
    }
    if (
      current &&
      current.matched_key === d.matchedKey &&
      current.stage === d.stage &&
      current.score === d.score &&
      current.threshold === d.threshold &&
      current.item_version === d.itemVersion
    ) {
      return {
        clusterId: String(target.id),
        canonicalKey: target.canonical_key,
        linkId: String(current.id),
        changed: false,
      };
    }
    // Same cluster, a new decision (another matched item, stage or version): the old row ends.
    if (current) await endLink(tx, current.id, "relinked", decidedBy);
    const id = await writeLink(tx, {
      entry_key: d.entryKey,
      duplicate_of: target.canonical_key,
      matched_key: d.matchedKey,
      cluster_id: target.id,
      stage: d.stage,
      score: d.score,
      threshold: d.threshold,
      settings_revision: d.settingsRevision,
      item_version: d.itemVersion,
      evidence: d.evidence,
      decided_by: decidedBy,
    });
    await markDuplicate(tx, d);
    await event(tx, target.id, "relinked", d.entryKey, {
      matchedKey: d.matchedKey,
      stage: d.stage,
      score: d.score,
      linkId: String(id),
    });
    await tx.$executeRaw`UPDATE dedup_clusters SET updated_at = now() WHERE id = ${target.id}`;
    return {
      clusterId: String(target.id),
      canonicalKey: target.canonical_key,
      linkId: String(id),
      changed: true,
    };
  }

  if (entry.cluster_id !== null) {
    await leave(tx, d.entryKey, entry.cluster_id, current, {
      reason: "relinked",
      by: decidedBy,
      outcome: null,
    });
  }

  let clusterId: bigint;
  let canonicalKey: string;
  if (target && target.dissolved_at === null) {
    clusterId = target.id;
    canonicalKey = target.canonical_key;
  } else {
    const [made] = await tx.$queryRaw<{ id: bigint }[]>`
      INSERT INTO dedup_clusters (canonical_key, members, outlets, first_seen_at)
      SELECT entry_key, 1, 1, first_seen_at FROM dedup_items WHERE entry_key = ${d.matchedKey}
      RETURNING id`;
    if (!made) throw new DedupItemMissingError(d.matchedKey);
    clusterId = made.id;
    canonicalKey = d.matchedKey;
    await tx.$executeRaw`UPDATE dedup_items SET cluster_id = ${clusterId} WHERE entry_key = ${d.matchedKey}`;
    await event(tx, clusterId, "created", d.matchedKey, { canonicalKey });
  }

  const id = await writeLink(tx, {
    entry_key: d.entryKey,
    duplicate_of: canonicalKey,
    matched_key: d.matchedKey,
    cluster_id: clusterId,
    stage: d.stage,
    score: d.score,
    threshold: d.threshold,
    settings_revision: d.settingsRevision,
    item_version: d.itemVersion,
    evidence: d.evidence,
    decided_by: decidedBy,
  });
  await tx.$executeRaw`UPDATE dedup_items SET cluster_id = ${clusterId} WHERE entry_key = ${d.entryKey}`;
  await markDuplicate(tx, d);
  await recount(tx, clusterId);
  await event(tx, clusterId, "joined", d.entryKey, {
    matchedKey: d.matchedKey,
    stage: d.stage,
    score: d.score,
    threshold: d.threshold,
    linkId: String(id),
    by: decidedBy,
  });
  return { clusterId: String(clusterId), canonicalKey, linkId: String(id), changed: true };
}

async function markDuplicate(tx: Tx, d: LinkDecision): Promise<void> {
  await tx.$executeRaw`
    UPDATE dedup_items SET outcome = 'duplicate', stage = ${d.stage},
                           settings_revision = ${d.settingsRevision}, decided_at = now()
    WHERE entry_key = ${d.entryKey}`;
}

interface LeaveHow {
  reason: string;
  by: string | null;
  /** The item's outcome afterwards; null leaves outcome/stage to the caller (a relink). */
  outcome: "unique" | "removed" | null;
}

/** Takes a locked item out of its (locked) cluster: ends its link, elects or dissolves. */
async function leave(
  tx: Tx,
  entryKey: string,
  clusterId: bigint,
  link: LiveLink | null,
  how: LeaveHow,
): Promise<LeaveResult> {
  const [cluster] = await tx.$queryRaw<ClusterRow[]>`
    SELECT id, canonical_key, dissolved_at FROM dedup_clusters WHERE id = ${clusterId}`;
  const wasCanonical = cluster?.canonical_key === entryKey;
  if (link) await endLink(tx, link.id, how.reason, how.by);
  await clearNews(tx, entryKey);
  await tx.$executeRaw`
    UPDATE dedup_items SET cluster_id = NULL,
      outcome = COALESCE(${how.outcome}::text, outcome),
      stage = CASE WHEN ${how.outcome}::text IS NULL THEN stage ELSE NULL END,
      live = CASE WHEN ${how.outcome}::text = 'removed' THEN false ELSE live END,
      decided_at = now()
    WHERE entry_key = ${entryKey}`;
  await event(tx, clusterId, "left", entryKey, {
    reason: how.reason,
    by: how.by,
    wasCanonical,
    linkId: link ? String(link.id) : null,
  });
  const left = await recount(tx, clusterId);
  const result: LeaveResult = {
    clusterId: String(clusterId),
    endedLinkId: link ? String(link.id) : null,
    wasCanonical,
    elected: null,
    dissolved: false,
  };
  if (left <= 1) {
    await dissolve(tx, clusterId, how.reason);
    result.dissolved = true;
  } else if (wasCanonical) {
    result.elected = await elect(tx, clusterId, how.reason);
    if (result.elected === null) result.dissolved = true;
  }
  return result;
}

/** A cluster down to one member (or none) ends: the last member is alone again. */
async function dissolve(tx: Tx, clusterId: bigint, why: string): Promise<void> {
  const rest = await tx.$queryRaw<{ entry_key: string }[]>`
    SELECT entry_key FROM dedup_items WHERE cluster_id = ${clusterId} ORDER BY entry_key`;
  for (const { entry_key } of rest) {
    const link = await liveLink(tx, entry_key);
    if (link) await endLink(tx, link.id, "dissolved", null);
    await clearNews(tx, entry_key);
    await tx.$executeRaw`
      UPDATE dedup_items SET cluster_id = NULL,
        outcome = CASE WHEN outcome = 'removed' THEN outcome ELSE 'unique' END,
        stage = NULL, decided_at = now()
      WHERE entry_key = ${entry_key}`;
  }
  await tx.$executeRaw`
    UPDATE dedup_clusters SET members = 0, outlets = 0, dissolved_at = now(), updated_at = now()
    WHERE id = ${clusterId}`;
  await event(tx, clusterId, "dissolved", rest[0]?.entry_key ?? null, { why });
}

/**
 * Ends entryKey's live link and takes it out of its cluster (why: 'undone' by an operator,
 * 'edited' away, 'rerun' under new thresholds …); the item stays a live lookup candidate, alone.
 * A canonical leaving hands the cluster to a new one (elect); a cluster left with one member is
 * dissolved. Null when the item was in no cluster (nothing to undo: at-least-once safe).
 */
export async function unlinkItem(
  tx: Tx,
  entryKey: string,
  reason: EndReason,
  by?: string,
): Promise<LeaveResult | null> {
  const items = await lockItems(tx, [entryKey]);
  const item = items.get(entryKey) as ItemRow;
  if (item.cluster_id === null) {
    const stray = await liveLink(tx, entryKey);
    if (stray) await endLink(tx, stray.id, reason, by ?? null);
    return null;
  }
  await lockClusters(tx, [item.cluster_id]);
  return leave(tx, entryKey, item.cluster_id, await liveLink(tx, entryKey), {
    reason,
    by: by ?? null,
    outcome: "unique",
  });
}

/**
 * Takes an item out of dedup altogether ('retracted', 'empty' text): it leaves its cluster, is
 * no longer a lookup candidate (live false, outcome 'removed'), and, if it was the canonical,
 * the cluster elects another. Null when it was in no cluster (it is still marked removed).
 */
export async function removeItem(
  tx: Tx,
  entryKey: string,
  reason: EndReason,
  by?: string,
): Promise<LeaveResult | null> {
  const items = await lockItems(tx, [entryKey]);
  const item = items.get(entryKey) as ItemRow;
  if (item.cluster_id === null) {
    const stray = await liveLink(tx, entryKey);
    if (stray) await endLink(tx, stray.id, reason, by ?? null);
    await tx.$executeRaw`
      UPDATE dedup_items SET live = false, outcome = 'removed', stage = NULL, decided_at = now()
      WHERE entry_key = ${entryKey}`;
    return null;
  }
  await lockClusters(tx, [item.cluster_id]);
  return leave(tx, entryKey, item.cluster_id, await liveLink(tx, entryKey), {
    reason,
    by: by ?? null,
    outcome: "removed",
  });
}

/**
 * Chooses the cluster's canonical among its live members: the earliest first seen (ties: the
 * smaller entry key, so two runs agree). When it is not the current one, the new canonical's
 * own link ends ('relinked'), every other member's live link is ended and written again pointing
 * at it (same stage, score, threshold, evidence and decision time: re-pointing is not a new
 * decision), and an `elected` event records the old and new canonical and why. A current
 * canonical still in the cluster (elect called on a healthy cluster) gets a link to the new one
 * carrying the decision that joined the two. Returns the canonical, or null when fewer than two
 * live members were left and the cluster was dissolved. The caller holds the cluster's lock
 * (every export here takes it first); called on its own, it takes it.
 */
export async function elect(
  tx: Tx,
  clusterId: bigint | string,
  why: string,
): Promise<string | null> {
  const id = BigInt(clusterId);
  const locked = await lockClusters(tx, [id]);
  const cluster = locked.get(String(id));
  if (!cluster || cluster.dissolved_at !== null) return null;
  const members = await tx.$queryRaw<{ entry_key: string }[]>`
    SELECT entry_key FROM dedup_items WHERE cluster_id = ${id} AND live
    ORDER BY first_seen_at, entry_key`;
  if (members.length < 2) {
    await dissolve(tx, id, why);
    return null;
  }
  const next = (members[0] as { entry_key: string }).entry_key;
  const old = cluster.canonical_key;
  if (next === old) return old;

  const nextLink = await liveLink(tx, next);
  if (nextLink) await endLink(tx, nextLink.id, "relinked", null);
  await clearNews(tx, next);
  await tx.$executeRaw`
    UPDATE dedup_items SET outcome = 'unique', stage = NULL WHERE entry_key = ${next}`;

  const links = await tx.$queryRaw<LiveLink[]>`
    SELECT id, entry_key, duplicate_of, matched_key, cluster_id, stage, score, threshold,
           settings_revision, item_version, evidence, decided_at, decided_by
    FROM dedup_links WHERE cluster_id = ${id} AND ended_at IS NULL AND entry_key <> ${next}
    ORDER BY entry_key`;
  for (const l of links) {
    await endLink(tx, l.id, "relinked", null);
    await writeLink(tx, { ...l, duplicate_of: next });
  }
  const oldStays = members.some((m) => m.entry_key === old);
  if (oldStays && nextLink) {
    await writeLink(tx, {
      ...nextLink,
      entry_key: old,
      matched_key: next,
      duplicate_of: next,
      cluster_id: id,
      decided_by: "elect",
    });
    await tx.$executeRaw`
      UPDATE dedup_items SET outcome = 'duplicate', stage = ${nextLink.stage} WHERE entry_key = ${old}`;
  }
  await tx.$executeRaw`
    UPDATE dedup_clusters SET canonical_key = ${next}, updated_at = now() WHERE id = ${id}`;
  await event(tx, id, "elected", next, { from: old, to: next, why });
  return next;
}
