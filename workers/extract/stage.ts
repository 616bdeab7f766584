import type { Database } from "@/lib/db";
import { ExtractionFailedError, type Extractor, type ExtractResult } from "@/lib/extract/types";
import { Prisma } from "@/lib/generated/prisma/client";
import type { ItemJob, Stage, StageContext, StageVerdict } from "@/workers/line/stage";
import { PermanentJobError } from "@/workers/queue/queueWorker";
import type { JobRetryPolicy } from "@/workers/queue/retryPolicy";
import { extractJobError } from "./failure";
import { storeExtraction } from "./store";

/** The extract stage's name: its queue and its line_cursors row. */
export const EXTRACT_STAGE = "extract";

export interface ExtractStageOptions {
  /** The configured chain (lib/extract configuredExtractor). */
  extractor: Extractor;
  /**
   * Stage 4 (meaning) runs before this stage: an item dedup left in review waits for its verdict,
   * which may still make it a duplicate, and a duplicate is never sent to a provider.
   */
  afterMeaning?: boolean;
  /** Stages survivors are handed on to (the read model, later). */
  handsOn?: readonly string[];
  /** Jobs at once per process (default 8: each waits seconds on a chat server, little on us). */
  concurrency?: number;
  retry?: JobRetryPolicy;
  maxAttempts?: number;
}

interface Row {
  entry_key: string;
  source_id: string;
  version: number;
  title: string | null;
  summary: string | null;
  language: string | null;
  deleted_at: Date | null;
  decided_version: number | null;
  outcome: string | null;
  live: boolean | null;
  meaning_version: number | null;
  extracted_version: number | null;
  extractor: string | null;
}

/**
 * Where the extract stage's work is: canonical items (dedup decided them unique or left them in
 * review, live, at their version) and, when stage 4 runs, not waiting for its verdict. The sweep,
 * the backfill and the coverage count all ask this, so they agree on what "every item" means.
 */
export function extractable(afterMeaning: boolean): Prisma.Sql {
  return Prisma.sql`d.live AND d.decision_ms IS NOT NULL AND d.outcome IN ('unique', 'review')
    AND (NOT ${afterMeaning} OR d.outcome <> 'review' OR coalesce(d.meaning_version, 0) >= d.version)`;
}

/**
 * The extract stage (seed 002: an `extract` stage after dedup; "only canonical items are
 * extracted"): for item@version that is canonical at that version, the configured chain's
 * extraction (lib/extract: validated, corrected, failed over, every attempt costed), stored in
 * item_extractions with who made it and what it cost. A duplicate is never sent to a provider: its
 * story is read through its canonical's extraction (news.duplicate_of). A retraction is not
 * extracted. When every provider failed, the job fails with each attempt's raw answer and errors
 * attached: retried with growing delay, then a dead letter an operator requeues.
 *
 * Safe to run twice: an extraction already stored at the version by the same chain is not asked
 * for again (a rerun after a crash calls no provider), and the store is one statement that only
 * replaces an older version's row, or the same version's by another chain (a backfill).
 */
export function extractStage(db: Database, options: ExtractStageOptions): Stage {
  const afterMeaning = options.afterMeaning ?? false;
  return {
    name: EXTRACT_STAGE,
    handsOn: options.handsOn ?? [],
    concurrency: options.concurrency ?? 8,
    // Heartbeats keep a slow chain's lease: a 30 s chat timeout, a correction, the next provider.
    leaseSeconds: 60,
    // As embed (decision 027): a chat server down for minutes is retried for about an hour
    // (5 s doubling to 15 min, 10 attempts: 5+10+…+640+900+900 s ≈ 58 min) before a dead letter.
    retry: options.retry ?? { baseDelaySeconds: 5, maxDelaySeconds: 15 * 60 },
    maxAttempts: options.maxAttempts ?? 10,
    handle: (job, ctx) => extractOne(db, job, ctx, options.extractor, afterMeaning),
    // Canonical items decided since `since`, within the last hour, with no extraction at their
    // version (by any chain). Older ones are the backfill's (backfill.ts), at priority −10 and
    // never more than 2,000 waiting: on a first start over a database of 100,000 items, the
    // sweep from its epoch cursor would otherwise enqueue them all at the line's own priority,
    // 5,000 a sweep, ahead of new news and straight into the paid provider's budget. An hour is
    // 720 sweeps: a hand-on lost in a running line is found long before.
    pending: (since) => Prisma.sql`
      SELECT d.entry_key, d.version, d.source_id, d.decided_at AS at
      FROM dedup_items d
      WHERE d.decided_at > ${since} AND d.decided_at > now() - interval '1 hour'
        AND ${extractable(afterMeaning)}
        AND NOT EXISTS (SELECT 1 FROM item_extractions x
                        WHERE x.entry_key = d.entry_key AND x.item_version >= d.version)`,
    horizon: () => Prisma.sql`SELECT max(decided_at) FROM dedup_items`,
  };
}

async function extractOne(
  db: Database,
  job: ItemJob,
  ctx: StageContext,
  extractor: Extractor,
  afterMeaning: boolean,
): Promise<StageVerdict> {
  const [r] = await db.prisma.$queryRaw<Row[]>`
    SELECT n.entry_key, n.source_id, n.version, n.title, n.summary, n.language, n.deleted_at,
           d.version AS decided_version, d.outcome, d.live, d.meaning_version,
           x.item_version AS extracted_version, x.extractor
    FROM news n
    LEFT JOIN dedup_items d ON d.entry_key = n.entry_key
    LEFT JOIN item_extractions x ON x.entry_key = n.entry_key
    WHERE n.entry_key = ${job.entryKey}`;
  if (!r) throw new PermanentJobError(`extract: no news row ${job.entryKey}`, "no_item");
  if (r.version > job.version || (r.decided_version ?? 0) > job.version) return "superseded";
  if (r.version < job.version) {
    throw new PermanentJobError(
      `extract: job for version ${job.version} of ${job.entryKey}, which is at ${r.version}`,
      "bad_version",
    );
  }
  // Handed on after the stage before committed, so this is a sweep or a backfill racing dedup
  // (or stage 4): retried shortly.
  if (r.decided_version !== job.version) {
    throw new Error(`extract: dedup has not decided ${job.entryKey}@${job.version} yet`);
  }
  if (r.deleted_at !== null || !r.live || (r.outcome !== "unique" && r.outcome !== "review")) {
    return "dropped";
  }
  if (afterMeaning && r.outcome === "review" && (r.meaning_version ?? 0) < job.version) {
    throw new Error(`extract: stage 4 has not decided ${job.entryKey}@${job.version} yet`);
  }
  if ((r.extracted_version ?? 0) >= job.version && r.extractor === extractor.id) return "survived";

  const input = extractInput(r);
  if (!input) return "dropped"; // no text at all: nothing a provider could say anything about

  let result: ExtractResult;
  try {
    result = await extractor.extract(input, {
      signal: ctx.signal,
      subject: { entryKey: r.entry_key, itemVersion: job.version, sourceId: r.source_id },
    });
  } catch (err) {
    if (err instanceof ExtractionFailedError) throw extractJobError(err);
    throw err;
  }
  await storeExtraction(db, {
    entryKey: r.entry_key,
    itemVersion: job.version,
    sourceId: r.source_id,
    extractor: extractor.id,
    result,
  });
  return "survived";
}

/**
 * What a provider is asked: the title, and the head of the summary. Past 4,000 characters a
 * summary is a whole article (content:encoded); its head says what the story is about, and every
 * character after it is paid for in tokens (about 1,000 tokens of input at most, $0.00015 on a
 * $0.15 per million model). An item with no title is asked by its summary's first 300 characters.
 */
function extractInput(
  r: Row,
): { title: string; summary: string | null; languageHint: string | null } | null {
  const summary = (r.summary ?? "").trim();
  const title = (r.title ?? "").trim() || summary.slice(0, 300);
  if (!title) return null;
  return {
    title,
    summary: summary ? summary.slice(0, 4_000) : null,
    languageHint: r.language,
  };
}
