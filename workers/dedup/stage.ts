import type { Database } from "@/lib/db";
import {
  analyze,
  anchors as anchorsOf,
  type DedupThresholds,
  fromSigned64,
  type ItemKeys,
  itemKeys,
  itemText,
  type Judgement,
  judge,
} from "@/lib/dedup";
import { emit } from "@/lib/events";
import { Prisma } from "@/lib/generated/prisma/client";
import type { ItemJob, Stage, StageVerdict } from "@/workers/line/stage";
import { PermanentJobError } from "@/workers/queue/queueWorker";
import { anchorCandidates, writeAnchors } from "./anchors";
import { linkItem, removeItem, type Tx, unlinkItem } from "./clusters";
import { current, finish, openReview, writeKeys } from "./decision";
import { lockAll, lockNames } from "./locks";
import { byKeys, type ItemText, nearCandidates, type Probe, texts } from "./lookup";
import type { MeaningComparer } from "./meaning";
import { ThresholdsCache } from "./settings";
import { inTransaction } from "./transaction";

export const DEDUP_STAGE = "dedup";

export interface DedupStageOptions {
  /** The meaning comparison for grey-band pairs (the next issue); none: they go to review. */
  meaning?: MeaningComparer;
  /** Stages survivors are handed on to (none yet: embed, extract, index come later). */
  handsOn?: readonly string[];
  concurrency?: number;
  /** The job's lease (default 30 s; heartbeats keep a slow decision's). */
  leaseSeconds?: number;
}

interface NewsItem extends ItemText {
  version: number;
  firstSeenAt: Date;
  deletedAt: Date | null;
}

/** What the cascade settled for an item. */
interface Decision {
  outcome: "unique" | "duplicate" | "review" | "removed";
  stage: string | null;
  verdict: StageVerdict;
}

const SURVIVES = new Set(["unique", "review"]);

/**
 * The dedup stage of the line: for item@version, the cascade in order of cost (URL key, content
 * key, SimHash bands, then the meaning hook for the grey band), across all sources (an outlet
 * re-posting its own story is a duplicate too), linking a match into its cluster through
 * clusters.ts. One transaction per decision, serialised with every decision that could find
 * this one by advisory locks on its keys (locks.ts), so two copies of one story decided at once
 * end as one cluster, not two uniques. Survivors (unique, canonical, or waiting for review) go
 * on; duplicates and tombstones stop here.
 */
export function dedupStage(db: Database, options: DedupStageOptions = {}): Stage {
  const settings = new ThresholdsCache();
  return {
    name: DEDUP_STAGE,
    handsOn: options.handsOn ?? [],
    // PGlite runs one transaction at a time on its one connection: more handlers there would
    // only queue, holding the writer's statements behind them.
    concurrency: options.concurrency ?? (db.kind === "pglite" ? 1 : 4),
    leaseSeconds: options.leaseSeconds ?? 30,
    retry: { baseDelaySeconds: 2, maxDelaySeconds: 10 * 60 },
    handle: (job) => decide(db, job, settings, options.meaning),
    // Every version of every stored item, backfill included (it never notifies), that has no
    // decision of the stage at that version. A row clusters.ts made for an operator's link
    // before the stage saw the item has no decision_ms: it is still the stage's to key.
    pending: (since) => Prisma.sql`
      SELECT n.entry_key, n.version, n.source_id, n.updated_at AS at
      FROM news n LEFT JOIN dedup_items d ON d.entry_key = n.entry_key
      WHERE n.updated_at > ${since}
        AND (d.entry_key IS NULL OR d.version < n.version OR d.decision_ms IS NULL)`,
    horizon: () => Prisma.sql`SELECT max(updated_at) FROM news`,
  };
}

async function decide(
  db: Database,
  job: ItemJob,
  settings: ThresholdsCache,
  meaning: MeaningComparer | undefined,
): Promise<StageVerdict> {
  const started = performance.now();
  const item = await readItem(db, job.entryKey);
  if (!item) throw new PermanentJobError(`dedup: no news row ${job.entryKey}`, "no_item");
  if (item.version > job.version) return "superseded";
  if (item.version < job.version) {
    throw new PermanentJobError(
      `dedup: job for version ${job.version} of ${job.entryKey}, which is at ${item.version}`,
      "bad_version",
    );
  }
  // Keys and shingles are CPU work: done before the transaction, so locks are held for I/O only.
  const analyzed = analyze(itemText(item));
  const keys = itemKeys(item, analyzed);
  const removal = item.deletedAt !== null ? "retracted" : keys.contentKey === null ? "empty" : null;
  const before = await storedKeys(db, job.entryKey);

  const decision = await inTransaction(
    db,
    async (tx): Promise<Decision | "stale" | StageVerdict> => {
      const { thresholds, revision } = await settings.read(tx);
      const radius = thresholds.retrieval.radius;
      const anchors = removal === null ? anchorsOf(analyzed, thresholds.retrieval.anchors) : [];
      // The old keys too: a decision that found this item by them waits for this change.
      const names = lockNames(job.entryKey, keys, radius, anchors);
      if (before) names.push(...lockNames(job.entryKey, before.keys, radius, before.anchors));
      await lockAll(tx, names);

      // Under the lock: a newer version written meanwhile has its own job, and a decision
      // already stored for this version (the job ran before) is not made twice.
      const { newsVersion, stored } = await current(tx, job.entryKey);
      if (newsVersion === null || newsVersion > job.version) return "stale";
      if (stored?.decided && stored.version >= job.version) {
        if (stored.version > job.version) return "stale";
        return SURVIVES.has(stored.outcome) ? "survived" : "dropped";
      }

      const written = await writeKeys(tx, {
        entryKey: job.entryKey,
        version: job.version,
        sourceId: item.sourceId,
        firstSeenAt: item.firstSeenAt,
        live: removal === null,
        keys,
      });
      if (!written) return "stale";
      await writeAnchors(tx, job.entryKey, item.firstSeenAt, removal === null ? anchors : null);
      const d =
        removal !== null
          ? await remove(tx, job.entryKey, removal)
          : await cascade(tx, {
              job,
              item,
              keys,
              anchors,
              analyzed,
              thresholds,
              revision,
              inCluster: stored?.clusterId != null,
              meaning,
            });
      await finish(tx, job.entryKey, {
        outcome: d.outcome,
        stage: d.stage,
        settingsRevision: revision,
        ms: performance.now() - started,
      });
      return d;
    },
    // Lock waits behind other decisions and, on PGlite, behind every other transaction (one
    // connection): Prisma's defaults (2 s to start, 5 s to finish) would fail busy moments.
    { timeoutMs: 25_000 },
  );
  if (decision === "stale") return "superseded";
  if (typeof decision === "string") return decision;
  emit("dedup:decided", {
    stage: decision.stage,
    outcome: decision.outcome,
    ms: performance.now() - started,
  });
  return decision.verdict;
}

async function remove(tx: Tx, entryKey: string, why: "retracted" | "empty"): Promise<Decision> {
  await removeItem(tx, entryKey, why);
  return { outcome: "removed", stage: null, verdict: "dropped" };
}

interface CascadeInput {
  job: ItemJob;
  item: NewsItem;
  keys: ItemKeys;
  anchors: number[];
  analyzed: ReturnType<typeof analyze>;
  thresholds: DedupThresholds;
  revision: number;
  /** The item was in a cluster before this decision (an edit of a member or a canonical). */
  inCluster: boolean;
  meaning: MeaningComparer | undefined;
}

interface Match {
  matchedKey: string;
  stage: string;
  score: number;
  threshold: number;
  evidence: unknown;
  /** Who decided, when not the stage (an operator's confirmed review). */
  decidedBy?: string;
}

interface Grey {
  candidate: ItemText;
  judgement: Judgement;
}

/** Of `candidates`, those whose pair with `entryKey` an operator confirmed, with who did. */
async function confirmedPair(
  tx: Tx,
  entryKey: string,
  candidates: string[],
): Promise<Map<string, string | null>> {
  const rows = await tx.$queryRaw<{ other: string; decided_by: string | null }[]>`
    SELECT CASE WHEN r.pair_a = ${entryKey} THEN r.pair_b ELSE r.pair_a END AS other, r.decided_by
    FROM dedup_reviews r, unnest(${candidates}::text[]) AS c(key)
    WHERE r.pair_a = least(${entryKey}, c.key) AND r.pair_b = greatest(${entryKey}, c.key)
      AND r.state = 'confirmed'`;
  return new Map(rows.map((r) => [r.other, r.decided_by]));
}

/** Stages 1–4, each only for what the earlier ones could not settle. */
async function cascade(tx: Tx, c: CascadeInput): Promise<Decision> {
  const probe: Probe = { entryKey: c.job.entryKey, firstSeenAt: c.item.firstSeenAt, keys: c.keys };
  let match: Match | null = null;
  let greys: Grey[] = [];

  const { url, exact } = await byKeys(tx, probe, c.thresholds);
  if (url) {
    match = {
      matchedKey: url.entryKey,
      stage: "url",
      score: 1,
      threshold: 1,
      evidence: { urlKey: c.keys.urlKey },
    };
  } else if (exact) {
    match = {
      matchedKey: exact.entryKey,
      stage: "exact",
      score: 1,
      threshold: 1,
      evidence: { contentKey: c.keys.contentKey },
    };
  }
  if (!match) {
    // Stage 3's two lookups (SimHash bands, anchors), one candidate list, judged alike.
    const byBands = await nearCandidates(tx, probe, c.thresholds);
    const byAnchors = await anchorCandidates(tx, probe, c.anchors, c.thresholds);
    const near = [...new Set([...byBands, ...byAnchors].map((n) => n.entryKey))];
    const candidates = await texts(tx, near);
    const judged: Grey[] = [];
    for (const key of near) {
      const candidate = candidates.get(key);
      if (!candidate) continue;
      const judgement = judge(
        { ...c.item, keys: c.keys, analyzed: c.analyzed, anchors: c.anchors },
        candidate,
        c.thresholds,
      );
      if (judgement.stage !== null) judged.push({ candidate, judgement });
    }
    // Highest score first; on a tie, the nearer SimHash (the lookup's order).
    judged.sort((x, y) => y.judgement.score - x.judgement.score);
    const best = judged.find((j) => j.judgement.duplicate);
    if (best) {
      match = {
        matchedKey: best.candidate.entryKey,
        stage: best.judgement.stage ?? "near",
        score: best.judgement.score,
        threshold: best.judgement.threshold,
        evidence: { hamming: best.judgement.hamming, ...best.judgement.evidence },
      };
    } else {
      greys = judged;
    }
  }

  // A grey pair an operator confirmed stays linked through an edit that keeps it grey.
  if (!match && greys.length > 0) {
    const confirmed = await confirmedPair(
      tx,
      c.job.entryKey,
      greys.map((g) => g.candidate.entryKey),
    );
    const g = greys.find((x) => confirmed.has(x.candidate.entryKey));
    if (g) {
      match = {
        matchedKey: g.candidate.entryKey,
        stage: "review",
        score: g.judgement.score,
        threshold: g.judgement.threshold,
        evidence: { hamming: g.judgement.hamming, ...g.judgement.evidence },
        decidedBy: confirmed.get(g.candidate.entryKey) ?? undefined,
      };
    }
  }

  if (!match && c.meaning) {
    for (const g of greys) {
      const verdict = await c.meaning.compare(c.item, g.candidate, {
        thresholds: c.thresholds,
        settingsRevision: c.revision,
      });
      if (verdict?.duplicate) {
        match = {
          matchedKey: g.candidate.entryKey,
          stage: "meaning",
          score: verdict.score,
          threshold: verdict.threshold,
          evidence: verdict.evidence ?? null,
        };
        break;
      }
    }
  }

  if (match) {
    const linked = await linkItem(tx, {
      entryKey: c.job.entryKey,
      matchedKey: match.matchedKey,
      stage: match.stage,
      score: match.score,
      threshold: match.threshold,
      settingsRevision: c.revision,
      itemVersion: c.job.version,
      evidence: match.evidence,
      decidedBy: match.decidedBy,
    });
    // Matched inside its own cluster, whose canonical it is: it stays the canonical.
    if (linked.canonicalKey === c.job.entryKey) {
      return { outcome: "unique", stage: null, verdict: "survived" };
    }
    return { outcome: "duplicate", stage: match.stage, verdict: "dropped" };
  }

  // No match any more: an edited member leaves its cluster; an edited canonical hands it over
  // (clusters.ts elects the earliest live member, or dissolves a cluster left with one).
  if (c.inCluster) await unlinkItem(tx, c.job.entryKey, "edited");
  // Every grey pair goes to the review queue (one row per pair; a pair decided already stays).
  for (const g of greys) {
    await openReview(tx, {
      entryKey: c.job.entryKey,
      candidateKey: g.candidate.entryKey,
      stage: "near",
      score: g.judgement.score,
      threshold: g.judgement.threshold,
      itemVersion: c.job.version,
      evidence: { hamming: g.judgement.hamming, ...g.judgement.evidence },
    });
  }
  if (greys.length > 0) return { outcome: "review", stage: "near", verdict: "survived" };
  return { outcome: "unique", stage: null, verdict: "survived" };
}

async function readItem(db: Database, entryKey: string): Promise<NewsItem | null> {
  const [row] = await db.prisma.$queryRaw<
    {
      entry_key: string;
      source_id: string;
      title: string | null;
      summary: string | null;
      link: string | null;
      version: number;
      first_seen_at: Date;
      deleted_at: Date | null;
    }[]
  >`
    SELECT entry_key, source_id, title, summary, link, version, first_seen_at, deleted_at
    FROM news WHERE entry_key = ${entryKey}`;
  if (!row) return null;
  return {
    entryKey: row.entry_key,
    sourceId: row.source_id,
    title: row.title,
    summary: row.summary,
    link: row.link,
    version: Number(row.version),
    firstSeenAt: row.first_seen_at,
    deletedAt: row.deleted_at,
  };
}

/** The keys and anchors the item was last decided with (null: never keyed). */
async function storedKeys(
  db: Database,
  entryKey: string,
): Promise<{ keys: ItemKeys; anchors: number[] } | null> {
  const [row] = await db.prisma.$queryRaw<
    {
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
    SELECT url_key, content_key, simhash, band0, band1, band2, band3,
           (SELECT array_agg(a.anchor) FROM dedup_anchors a WHERE a.entry_key = d.entry_key) AS anchors
    FROM dedup_items d WHERE d.entry_key = ${entryKey}`;
  if (!row) return null;
  const banded =
    row.band0 !== null && row.band1 !== null && row.band2 !== null && row.band3 !== null;
  return {
    keys: {
      urlKey: row.url_key,
      contentKey: row.content_key,
      simhash: row.simhash === null ? null : fromSigned64(row.simhash),
      bands: banded
        ? [row.band0 as number, row.band1 as number, row.band2 as number, row.band3 as number]
        : null,
    },
    anchors: row.anchors ?? [],
  };
}
