import { DEDUP_AUDIT_ACTIONS } from "@/lib/dashboard/audit";
import type { Database } from "@/lib/db";
import {
  analyze,
  anchors as anchorsOf,
  bands,
  type DedupThresholds,
  dedupThresholdsSchema,
  fromSigned64,
  itemText,
  type Judgement,
  judge,
} from "@/lib/dedup";
import { Prisma } from "@/lib/generated/prisma/client";
import { logger } from "@/lib/logger";
import { anchorCandidates } from "@/workers/dedup/anchors";
import { linkItem, unlinkItem } from "@/workers/dedup/clusters";
import { openReview } from "@/workers/dedup/decision";
import { byContent, byUrl, nearCandidates, type Probe, texts } from "@/workers/dedup/lookup";
import { completeAudit, writeAudit } from "./audit";
import {
  DedupConflictError,
  DedupNotFoundError,
  readThresholds,
  validateThresholds,
  writeThresholds,
} from "./dedup";

/**
 * Re-running the cascade with new thresholds, like a repair (workers/admin/repairs.ts): a dry
 * run re-judges every live item in the window and records which links would appear, go or
 * change (dedup_run_changes); an apply makes exactly those changes in batches, with progress on
 * dedup_runs, then puts the thresholds in force. It wakes nothing: no NOTIFY, no jobs, no
 * news.updated_at (the old items are settled; only their links move).
 *
 * Each item is judged as the stage judges it, through the stage's own lookups on its stored
 * keys (workers/dedup/lookup.ts: same URL key, same content key in the window, SimHash bands
 * confirmed by Hamming distance; pairs an operator rejected never come back) and lib/dedup's
 * judge on the news text, in the stage's order (url, exact, then the best near candidate),
 * against the items first seen before it (see earlier()). A
 * link an operator confirmed (stage 'review') or the meaning stage made is not re-judged: the
 * thresholds do not decide those. One run at a time per process.
 */

export interface LinkSide {
  matchedKey: string;
  stage: string;
  score: number;
  threshold: number;
  duplicateOf?: string;
  evidence?: unknown;
}

export type RunChangeKind = "appear" | "go" | "change";

export interface RunChange {
  entryKey: string;
  change: RunChangeKind;
  before: LinkSide | null;
  /** The link the new thresholds make (null for 'go'); after an apply also `applied`, `skipped`. */
  after:
    | (LinkSide & { applied?: boolean; skipped?: string })
    | { applied?: boolean; skipped?: string }
    | null;
}

export interface DedupRunView {
  id: string;
  thresholds: unknown;
  dryRun: boolean;
  state: "running" | "finished" | "failed";
  actor: string;
  startedAt: string;
  endedAt: string | null;
  total: number;
  scanned: number;
  appear: number;
  go: number;
  change: number;
  applied: number;
  error: string | null;
  active: boolean;
}

export class DedupRunBusyError extends Error {
  constructor(readonly runId: string | null) {
    super(`a dedup re-run is already running${runId ? ` (run ${runId})` : ""}; one at a time`);
    this.name = "DedupRunBusyError";
  }
}

const slot = globalThis as unknown as { wirewatchDedupRun?: { runId: string | null } };

export function activeDedupRunId(): string | null {
  return slot.wirewatchDedupRun?.runId ?? null;
}

export interface RunHooks {
  /** Awaited after each batch (tests hold a run here to watch its progress). */
  afterBatch?: (phase: "scan" | "apply", runId: string) => Promise<void>;
}

export interface StartRunOptions {
  /** Whole or partial thresholds over those in force; ignored with fromRun (its own are used). */
  thresholds?: unknown;
  dryRun: boolean;
  actor: string;
  /** Apply this finished dry run's diff instead of scanning again. */
  fromRun?: string;
  batchSize?: number;
  hooks?: RunHooks;
}

/**
 * Starts a re-run in the background once its row exists; returns its id and the audit row
 * (dedup.rerun_dry_run / dedup.rerun_apply), which gets the counts when the run ends.
 * DedupRunBusyError (→ 409) while one runs; DedupInvalidError (→ 400) for bad thresholds;
 * fromRun: DedupNotFoundError (→ 404), DedupConflictError (→ 409) unless a finished dry run.
 */
export async function startDedupRun(
  db: Database,
  options: StartRunOptions,
): Promise<{ runId: string; auditId: string }> {
  if (slot.wirewatchDedupRun) throw new DedupRunBusyError(slot.wirewatchDedupRun.runId);
  const mine: { runId: string | null } = { runId: null };
  slot.wirewatchDedupRun = mine;
  try {
    const current = await readThresholds(db);
    let thresholds: DedupThresholds;
    let fromRun: bigint | null = null;
    if (options.fromRun) {
      const [source] = await db.prisma.$queryRaw<
        { id: bigint; thresholds: unknown; dry_run: boolean; state: string }[]
      >`SELECT id, thresholds, dry_run, state FROM dedup_runs WHERE id = ${BigInt(options.fromRun)}`;
      if (!source) throw new DedupNotFoundError(`no dedup run ${options.fromRun}`);
      if (!source.dry_run || source.state !== "finished") {
        throw new DedupConflictError(
          "not_a_finished_dry_run",
          `run ${options.fromRun} is ${source.dry_run ? `a dry run, ${source.state}` : "an apply"}: only a finished dry run's diff can be applied`,
        );
      }
      thresholds = dedupThresholdsSchema.parse(source.thresholds);
      fromRun = source.id;
    } else {
      thresholds = validateThresholds(options.thresholds ?? {}, current.thresholds);
    }
    const dryRun = fromRun === null ? options.dryRun : false;
    const [row] = await db.prisma.$queryRaw<{ id: bigint }[]>`
      INSERT INTO dedup_runs (thresholds, dry_run, actor, total)
      SELECT ${JSON.stringify(thresholds)}::jsonb, ${dryRun}, ${options.actor},
             ${
               fromRun === null
                 ? Prisma.sql`(SELECT count(*)::int FROM dedup_items WHERE live
                     AND first_seen_at >= now() - make_interval(hours => ${thresholds.windowHours}))`
                 : Prisma.sql`(SELECT count(*)::int FROM dedup_run_changes WHERE run_id = ${fromRun})`
             }
      RETURNING id`;
    if (!row) throw new Error("dedup re-run: the run row was not written");
    mine.runId = String(row.id);
    const auditId = await writeAudit(db, {
      actor: options.actor,
      action: dryRun ? DEDUP_AUDIT_ACTIONS.rerunDryRun : DEDUP_AUDIT_ACTIONS.rerunApply,
      target: { runId: mine.runId, ...(fromRun ? { fromRun: String(fromRun) } : {}) },
      dryRun,
      affected: 0,
      detail: { status: "running", before: current.thresholds, after: thresholds },
    });
    const runId = row.id;
    void run(db, runId, { thresholds, dryRun, fromRun, actor: options.actor, options })
      .then(
        (counts) =>
          completeAudit(db, auditId, {
            affected: dryRun ? counts.appear + counts.go + counts.change : counts.applied,
            detail: {
              status: "finished",
              ...counts,
              before: current.thresholds,
              after: thresholds,
            },
          }),
        async (err: unknown) => {
          const message = String((err as Error)?.message ?? err);
          logger().error({ err, runId: String(runId) }, "dedup re-run failed");
          await db.prisma.$executeRaw`
            UPDATE dedup_runs SET state = 'failed', error = ${message}, ended_at = now()
            WHERE id = ${runId}`;
          await completeAudit(db, auditId, {
            affected: 0,
            detail: { status: "failed", error: message },
          });
        },
      )
      .catch((err) => logger().error({ err }, "dedup re-run: audit row not updated"))
      .finally(() => {
        if (slot.wirewatchDedupRun === mine) slot.wirewatchDedupRun = undefined;
      });
    return { runId: mine.runId, auditId };
  } catch (err) {
    if (slot.wirewatchDedupRun === mine) slot.wirewatchDedupRun = undefined;
    throw err;
  }
}

interface Counts {
  scanned: number;
  appear: number;
  go: number;
  change: number;
  applied: number;
  skipped: number;
}

async function run(
  db: Database,
  runId: bigint,
  r: {
    thresholds: DedupThresholds;
    dryRun: boolean;
    fromRun: bigint | null;
    actor: string;
    options: StartRunOptions;
  },
): Promise<Counts> {
  const batch = Math.max(1, r.options.batchSize ?? 200);
  const counts: Counts = { scanned: 0, appear: 0, go: 0, change: 0, applied: 0, skipped: 0 };
  if (r.fromRun === null) {
    await scan(db, runId, r.thresholds, batch, counts, r.options.hooks);
  } else {
    await db.prisma.$executeRaw`
      INSERT INTO dedup_run_changes (run_id, entry_key, change, before, after)
      SELECT ${runId}, entry_key, change, before, after FROM dedup_run_changes WHERE run_id = ${r.fromRun}`;
    const [c] = await db.prisma.$queryRaw<
      { appear: number; go: number; change: number; n: number }[]
    >`
      SELECT count(*) FILTER (WHERE change = 'appear')::int AS appear,
             count(*) FILTER (WHERE change = 'go')::int AS go,
             count(*) FILTER (WHERE change = 'change')::int AS change, count(*)::int AS n
      FROM dedup_run_changes WHERE run_id = ${runId}`;
    Object.assign(counts, { appear: c?.appear ?? 0, go: c?.go ?? 0, change: c?.change ?? 0 });
    counts.scanned = c?.n ?? 0;
    await db.prisma.$executeRaw`
      UPDATE dedup_runs SET scanned = ${counts.scanned}, appear = ${counts.appear}, go = ${counts.go}
      WHERE id = ${runId}`;
  }
  if (!r.dryRun) await apply(db, runId, r, batch, counts);
  await db.prisma.$transaction(async (tx) => {
    if (!r.dryRun) await writeThresholds(tx, r.thresholds, r.actor);
    await tx.$executeRaw`
      UPDATE dedup_runs SET state = 'finished', ended_at = now(), scanned = ${counts.scanned},
             appear = ${counts.appear}, go = ${counts.go}, applied = ${counts.applied}
      WHERE id = ${runId}`;
  });
  return counts;
}

interface ScanRow {
  entry_key: string;
  first_seen_at: Date;
  url_key: string | null;
  content_key: string | null;
  simhash: bigint | null;
  cluster_id: bigint | null;
  title: string | null;
  summary: string | null;
  link: string | null;
  l_matched: string | null;
  l_duplicate_of: string | null;
  l_stage: string | null;
  l_score: number | null;
  l_threshold: number | null;
  l_cluster: bigint | null;
}

async function scan(
  db: Database,
  runId: bigint,
  thresholds: DedupThresholds,
  batch: number,
  counts: Counts,
  hooks: RunHooks | undefined,
): Promise<void> {
  let cursor: { at: Date; key: string } | null = null;
  // The items the run counted as its total: those in the window at the run's start, not the ones
  // ingestion adds while it runs (they were judged by the line under the current thresholds, and
  // scanning them made a run report 240 of 238 items). Items sighted before the start that the
  // line decides only while the run goes (its backlog) are in that window too, though not in the
  // count made at the start: the total grows to take them in ("301 of 299" otherwise).
  const [run] = await db.prisma.$queryRaw<{ started_at: Date }[]>`
    SELECT started_at FROM dedup_runs WHERE id = ${runId}`;
  const startedAt = run?.started_at ?? new Date();
  for (;;) {
    const rows: ScanRow[] = await db.prisma.$queryRaw<ScanRow[]>`
      SELECT d.entry_key, d.first_seen_at, d.url_key, d.content_key, d.simhash, d.cluster_id,
             n.title, n.summary, n.link,
             l.matched_key AS l_matched, l.duplicate_of AS l_duplicate_of, l.stage AS l_stage,
             l.score AS l_score, l.threshold AS l_threshold, l.cluster_id AS l_cluster
      FROM dedup_items d
      JOIN news n ON n.entry_key = d.entry_key AND n.deleted_at IS NULL
      LEFT JOIN dedup_links l ON l.entry_key = d.entry_key AND l.ended_at IS NULL
      WHERE d.live
        AND d.first_seen_at >= ${startedAt}::timestamptz - make_interval(hours => ${thresholds.windowHours})
        AND d.first_seen_at <= ${startedAt}
        ${cursor ? Prisma.sql`AND (d.first_seen_at, d.entry_key) > (${cursor.at}, ${cursor.key})` : Prisma.empty}
      ORDER BY d.first_seen_at, d.entry_key
      LIMIT ${batch}`;
    if (rows.length === 0) break;
    for (const row of rows) {
      const diff = await rejudge(db, row, thresholds);
      if (diff) {
        await db.prisma.$executeRaw`
          INSERT INTO dedup_run_changes (run_id, entry_key, change, before, after)
          VALUES (${runId}, ${row.entry_key}, ${diff.change},
                  ${diff.before === null ? null : JSON.stringify(diff.before)}::jsonb,
                  ${diff.after === null ? null : JSON.stringify(diff.after)}::jsonb)
          ON CONFLICT (run_id, entry_key) DO NOTHING`;
        counts[diff.change]++;
      }
    }
    counts.scanned += rows.length;
    await db.prisma.$executeRaw`
      UPDATE dedup_runs SET scanned = ${counts.scanned}, total = greatest(total, ${counts.scanned}),
             appear = ${counts.appear}, go = ${counts.go}
      WHERE id = ${runId}`;
    const last = rows[rows.length - 1] as ScanRow;
    cursor = { at: last.first_seen_at, key: last.entry_key };
    await hooks?.afterBatch?.("scan", String(runId));
    if (rows.length < batch) break;
  }
}

/** What the cascade with `thresholds` makes of one item, compared with its live link. */
async function rejudge(
  db: Database,
  row: ScanRow,
  thresholds: DedupThresholds,
): Promise<{ change: RunChangeKind; before: LinkSide | null; after: LinkSide | null } | null> {
  // An operator's confirmation is not the thresholds' to undo, and a meaning link needs the
  // meaning comparison, which a re-run does not make.
  if (row.l_stage === "review" || row.l_stage === "meaning") return null;
  const before: LinkSide | null =
    row.l_matched && row.l_stage
      ? {
          matchedKey: row.l_matched,
          duplicateOf: row.l_duplicate_of ?? undefined,
          stage: row.l_stage,
          score: row.l_score ?? 0,
          threshold: row.l_threshold ?? 0,
        }
      : null;
  const found = await cascadeMatch(db, row, thresholds);
  const match = found?.duplicate ? found : null;
  const together = match !== null && row.cluster_id !== null && match.clusterId === row.cluster_id;
  if (!before) {
    // Matched inside its own cluster, whose canonical it is: it stays the canonical.
    if (!match || together) return null;
    return { change: "appear", before, after: match.side };
  }
  if (!match) return { change: "go", before, after: found?.side ?? null };
  if (together && match.side.stage === before.stage) return null;
  return { change: "change", before, after: match.side };
}

/**
 * The stage's cascade (workers/dedup/stage.ts) for one stored item, through the stage's own
 * lookups (workers/dedup/lookup.ts: the same eligibility, window and candidate limit): the same
 * URL key, else the same content key, else the best-scored near candidate; a near candidate in
 * the grey band comes back as `duplicate: false` with stage 'review' (an apply opens a review
 * for it, as the stage would).
 */
async function cascadeMatch(
  db: Database,
  row: ScanRow,
  thresholds: DedupThresholds,
): Promise<{ duplicate: boolean; clusterId: bigint | null; side: LinkSide } | null> {
  const simhash = row.simhash === null ? null : fromSigned64(row.simhash);
  const probe: Probe = {
    entryKey: row.entry_key,
    firstSeenAt: row.first_seen_at,
    keys: {
      urlKey: row.url_key,
      contentKey: row.content_key,
      simhash,
      bands: simhash === null ? null : bands(simhash),
    },
  };
  const tx = db.prisma;
  const url = await byUrl(tx, probe);
  if (url && (await earlier(db, row, [url.entryKey])).size > 0) {
    return found(db, url.entryKey, true, {
      stage: "url",
      score: 1,
      threshold: 1,
      evidence: { urlKey: row.url_key },
    });
  }
  const exact = await byContent(tx, probe, thresholds);
  if (exact && (await earlier(db, row, [exact.entryKey])).size > 0) {
    return found(db, exact.entryKey, true, {
      stage: "exact",
      score: 1,
      threshold: 1,
      evidence: { contentKey: row.content_key },
    });
  }
  // Stage 3's two lookups, as the stage makes them: the SimHash bands and the shared anchors
  // (computed with the thresholds under test; the stored postings are the in-force anchors).
  const self = { title: row.title, summary: row.summary, link: row.link, keys: probe.keys };
  const analyzed = analyze(itemText(self));
  const anchors = anchorsOf(analyzed, thresholds.retrieval.anchors);
  const byBands = await nearCandidates(tx, probe, thresholds);
  const byAnchors = await anchorCandidates(tx, probe, anchors, thresholds);
  const retrieved = [
    ...new Map([...byAnchors, ...byBands].map((c) => [c.entryKey, c] as const)).values(),
  ];
  const before = await earlier(
    db,
    row,
    retrieved.map((c) => c.entryKey),
  );
  const near = retrieved.filter((c) => before.has(c.entryKey));
  const candidates = await texts(
    tx,
    near.map((c) => c.entryKey),
  );
  const rank = (j: Judgement) => (j.duplicate ? 2 : 1) + j.score;
  let best: { key: string; judgement: Judgement } | null = null;
  for (const c of near) {
    const text = candidates.get(c.entryKey);
    if (!text) continue;
    const judgement = judge({ ...self, analyzed, anchors }, text, thresholds);
    if (judgement.stage === null) continue;
    if (!best || rank(judgement) > rank(best.judgement)) best = { key: c.entryKey, judgement };
  }
  if (!best) return null;
  const j = best.judgement;
  return found(db, best.key, j.duplicate, {
    stage: j.duplicate ? (j.stage ?? "near") : "review",
    score: j.score,
    threshold: j.duplicate ? j.threshold : thresholds.near.review,
    evidence: { hamming: j.hamming, ...j.evidence },
  });
}

/**
 * The keys first seen before the item. The stage decides an item when it arrives, so what it
 * could match was there before it; replaying the window in first-seen order against earlier
 * items only rebuilds the clusters the stage would have built (a later copy matches the item
 * when its own turn comes), with the earliest item as canonical. byUrl and byContent return
 * the earliest eligible item, so a later one means no earlier one exists.
 */
async function earlier(db: Database, row: ScanRow, keys: string[]): Promise<Set<string>> {
  if (keys.length === 0) return new Set();
  const rows = await db.prisma.$queryRaw<{ entry_key: string }[]>`
    SELECT entry_key FROM dedup_items
    WHERE entry_key = ANY(${keys}::text[])
      AND (first_seen_at, entry_key) < (${row.first_seen_at}::timestamptz, ${row.entry_key}::text)`;
  return new Set(rows.map((r) => r.entry_key));
}

async function found(
  db: Database,
  matchedKey: string,
  duplicate: boolean,
  side: Omit<LinkSide, "matchedKey">,
): Promise<{ duplicate: boolean; clusterId: bigint | null; side: LinkSide }> {
  const [row] = await db.prisma.$queryRaw<{ cluster_id: bigint | null }[]>`
    SELECT cluster_id FROM dedup_items WHERE entry_key = ${matchedKey}`;
  return { duplicate, clusterId: row?.cluster_id ?? null, side: { matchedKey, ...side } };
}

interface ChangeRow {
  entry_key: string;
  change: RunChangeKind;
  before: LinkSide | null;
  after: LinkSide | null;
  item_version: number;
}

/**
 * Makes the run's changes, oldest item first (so clusters form in the order the stage would
 * have formed them), one transaction per change. A change whose item's live link is no longer
 * the `before` the run saw (the stage or an operator moved it meanwhile) is skipped, and says
 * so on its row; the next run sees it again.
 */
async function apply(
  db: Database,
  runId: bigint,
  r: { thresholds: DedupThresholds; actor: string; options: StartRunOptions },
  batch: number,
  counts: Counts,
): Promise<void> {
  const revision = (await readThresholds(db)).revision + 1;
  let cursor: { at: Date; key: string } | null = null;
  for (;;) {
    const rows: (ChangeRow & { first_seen_at: Date })[] = await db.prisma.$queryRaw`
      SELECT c.entry_key, c.change, c.before, c.after, d.first_seen_at, d.version AS item_version
      FROM dedup_run_changes c JOIN dedup_items d ON d.entry_key = c.entry_key
      WHERE c.run_id = ${runId}
        ${cursor ? Prisma.sql`AND (d.first_seen_at, c.entry_key) > (${cursor.at}, ${cursor.key})` : Prisma.empty}
      ORDER BY d.first_seen_at, c.entry_key
      LIMIT ${batch}`;
    if (rows.length === 0) break;
    for (const c of rows) {
      const skipped = await db.prisma.$transaction(async (tx) => {
        const [live] = await tx.$queryRaw<{ matched_key: string; stage: string }[]>`
          SELECT matched_key, stage FROM dedup_links WHERE entry_key = ${c.entry_key} AND ended_at IS NULL`;
        const now = live ? { matched: live.matched_key, stage: live.stage } : null;
        const was = c.before ? { matched: c.before.matchedKey, stage: c.before.stage } : null;
        if (JSON.stringify(now) !== JSON.stringify(was))
          return "its link changed since the run saw it";
        if (c.change === "go") {
          await unlinkItem(tx, c.entry_key, "rerun", r.actor);
          if (c.after?.stage === "review") {
            await openReview(tx, {
              entryKey: c.entry_key,
              candidateKey: c.after.matchedKey,
              stage: "near",
              score: c.after.score,
              threshold: c.after.threshold,
              itemVersion: c.item_version,
              evidence: c.after.evidence ?? null,
            });
          }
        } else if (c.after) {
          await linkItem(tx, {
            entryKey: c.entry_key,
            matchedKey: c.after.matchedKey,
            stage: c.after.stage,
            score: c.after.score,
            threshold: c.after.threshold,
            settingsRevision: revision,
            itemVersion: c.item_version,
            evidence: c.after.evidence ?? null,
            decidedBy: "dedup",
          });
        }
        return null;
      });
      const mark = skipped ? { applied: false, skipped } : { applied: true };
      await db.prisma.$executeRaw`
        UPDATE dedup_run_changes SET after = COALESCE(after, '{}'::jsonb) || ${JSON.stringify(mark)}::jsonb
        WHERE run_id = ${runId} AND entry_key = ${c.entry_key}`;
      if (skipped) counts.skipped++;
      else counts.applied++;
    }
    await db.prisma
      .$executeRaw`UPDATE dedup_runs SET applied = ${counts.applied} WHERE id = ${runId}`;
    const last = rows[rows.length - 1] as ChangeRow & { first_seen_at: Date };
    cursor = { at: last.first_seen_at, key: last.entry_key };
    await r.options.hooks?.afterBatch?.("apply", String(runId));
    if (rows.length < batch) break;
  }
}

// --- reads ------------------------------------------------------------------------------------

interface RunRow {
  id: bigint;
  thresholds: unknown;
  dry_run: boolean;
  state: DedupRunView["state"];
  actor: string;
  started_at: Date;
  ended_at: Date | null;
  total: number;
  scanned: number;
  appear: number;
  go: number;
  change: number;
  applied: number;
  error: string | null;
}

const toRun = (r: RunRow): DedupRunView => ({
  id: String(r.id),
  thresholds: r.thresholds,
  dryRun: r.dry_run,
  state: r.state,
  actor: r.actor,
  startedAt: r.started_at.toISOString(),
  endedAt: r.ended_at?.toISOString() ?? null,
  total: r.total,
  scanned: r.scanned,
  appear: r.appear,
  go: r.go,
  change: r.change,
  applied: r.applied,
  error: r.error,
  active: activeDedupRunId() === String(r.id),
});

const runSelect = Prisma.sql`
  SELECT r.id, r.thresholds, r.dry_run, r.state, r.actor, r.started_at, r.ended_at, r.total,
         r.scanned, r.appear, r.go, r.applied, r.error,
         (SELECT count(*)::int FROM dedup_run_changes c
          WHERE c.run_id = r.id AND c.change = 'change') AS change
  FROM dedup_runs r`;

/** Runs newest first, keyset-paged by id. */
export async function listDedupRuns(
  db: Database,
  { before, limit = 20 }: { before?: string; limit?: number } = {},
): Promise<{ runs: DedupRunView[]; nextBefore: string | null; activeRunId: string | null }> {
  const take = Math.max(1, Math.min(100, Math.trunc(limit)));
  const rows = await db.prisma.$queryRaw<RunRow[]>`
    ${runSelect} ${before ? Prisma.sql`WHERE r.id < ${BigInt(before)}` : Prisma.empty}
    ORDER BY r.id DESC LIMIT ${take + 1}`;
  const page = rows.slice(0, take).map(toRun);
  return {
    runs: page,
    nextBefore: rows.length > take ? (page[page.length - 1]?.id ?? null) : null,
    activeRunId: activeDedupRunId(),
  };
}

/** One run and a page of its changes (by entry key), optionally of one kind. */
export async function getDedupRun(
  db: Database,
  id: string,
  { after, limit = 100, change }: { after?: string; limit?: number; change?: RunChangeKind } = {},
): Promise<{ run: DedupRunView; changes: RunChange[]; nextAfter: string | null } | null> {
  const [row] = await db.prisma.$queryRaw<RunRow[]>`${runSelect} WHERE r.id = ${BigInt(id)}`;
  if (!row) return null;
  const take = Math.max(1, Math.min(500, Math.trunc(limit)));
  const rows = await db.prisma.$queryRaw<
    {
      entry_key: string;
      change: RunChangeKind;
      before: RunChange["before"];
      after: RunChange["after"];
    }[]
  >`
    SELECT entry_key, change, before, after FROM dedup_run_changes
    WHERE run_id = ${row.id}
      ${after ? Prisma.sql`AND entry_key > ${after}` : Prisma.empty}
      ${change ? Prisma.sql`AND change = ${change}` : Prisma.empty}
    ORDER BY entry_key LIMIT ${take + 1}`;
  const page = rows.slice(0, take).map((c) => ({
    entryKey: c.entry_key,
    change: c.change,
    before: c.before,
    after: c.after,
  }));
  return {
    run: toRun(row),
    changes: page,
    nextAfter: rows.length > take ? (page[page.length - 1]?.entryKey ?? null) : null,
  };
}
