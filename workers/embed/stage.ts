import type { Database } from "@/lib/db";
import { EmbeddingError } from "@/lib/embed/types";
import { emit } from "@/lib/events";
import { Prisma } from "@/lib/generated/prisma/client";
import { detectLanguage, removeSearchDocs, storeSearchDocs } from "@/lib/search/docs";
import { storeVectors } from "@/lib/search/vectors";
import { Batcher } from "@/workers/dedup/batcher";
import type { ItemJob, Stage, StageVerdict } from "@/workers/line/stage";
import { PermanentJobError } from "@/workers/queue/queueWorker";
import type { ModelRegistry } from "./models";
import { EMBED_STAGE, type EmbedTarget, type EmbedTargets, passageText } from "./targets";

export { EMBED_STAGE };

export interface EmbedStageOptions {
  targets: EmbedTargets;
  registry: ModelRegistry;
  /** Stages survivors are handed on to (meaning). */
  handsOn?: readonly string[];
  /** Texts embedded in one call at most (default 32: USE-lite's best batch, decision 025). */
  maxBatch?: number;
  concurrency?: number;
}

interface Row {
  entry_key: string;
  source_id: string;
  version: number;
  title: string | null;
  summary: string | null;
  language: string | null;
  first_seen_at: Date;
  deleted_at: Date | null;
  decided_version: number | null;
  outcome: string | null;
}

type Answer = StageVerdict | Error;

/**
 * The embed stage (seed 002: "only items that survive dedup are embedded"): for item@version
 * decided unique or left in review by dedup, its vector by each target model (targets.ts) and its
 * full-text document; a duplicate or a removed item is not embedded (its document, if it had one
 * as a survivor, goes: search finds the story through its canonical). Jobs handed over together
 * are embedded in one call per model (batcher.ts), the provider's cost per text falling with the
 * batch. Idempotent: vectors are stored per (model, item) only over an older version.
 */
export function embedStage(db: Database, options: EmbedStageOptions): Stage {
  const batcher = new Batcher<ItemJob, StageVerdict>((jobs) => embedBatch(db, jobs, options), {
    maxBatch: options.maxBatch ?? 32,
    maxInFlight: 1,
  });
  return {
    name: EMBED_STAGE,
    handsOn: options.handsOn ?? [],
    concurrency: options.concurrency ?? 32,
    leaseSeconds: 60,
    // A supplier down for minutes (its breaker open, no fallback) is retried for about an hour
    // before the job is a dead letter an operator can requeue.
    retry: { baseDelaySeconds: 5, maxDelaySeconds: 15 * 60 },
    maxAttempts: 10,
    handle: (job) => batcher.submit(job),
    // Survivors decided since `since` that lack a current vector of a target model. The
    // backfill (backfill.ts) walks the older ones when a model is new.
    pending: (since) => Prisma.sql`
      SELECT d.entry_key, d.version, d.source_id, d.decided_at AS at
      FROM dedup_items d
      WHERE d.decided_at > ${since} AND d.decision_ms IS NOT NULL AND d.live
        AND d.outcome IN ('unique', 'review')
        AND EXISTS (
          SELECT 1 FROM unnest(${options.targets.ids()}::int[]) AS m(id)
          WHERE NOT EXISTS (SELECT 1 FROM item_vectors v
                            WHERE v.model_id = m.id AND v.entry_key = d.entry_key
                              AND v.item_version >= d.version))`,
    horizon: () => Prisma.sql`SELECT max(decided_at) FROM dedup_items`,
  };
}

async function embedBatch(
  db: Database,
  jobs: ItemJob[],
  options: EmbedStageOptions,
): Promise<Answer[]> {
  const started = performance.now();
  const keys = [...new Set(jobs.map((j) => j.entryKey))];
  const rows = await db.prisma.$queryRaw<Row[]>`
    SELECT n.entry_key, n.source_id, n.version, n.title, n.summary, n.language, n.first_seen_at,
           n.deleted_at, d.version AS decided_version, d.outcome
    FROM news n LEFT JOIN dedup_items d ON d.entry_key = n.entry_key
    WHERE n.entry_key = ANY(${keys}::text[])`;
  const byKey = new Map(rows.map((r) => [r.entry_key, r]));
  const answers: Answer[] = [];
  const embed: Row[] = [];
  const gone: string[] = [];
  for (const job of jobs) {
    const r = byKey.get(job.entryKey);
    if (!r) {
      answers.push(new PermanentJobError(`embed: no news row ${job.entryKey}`, "no_item"));
    } else if (r.version > job.version || (r.decided_version ?? 0) > job.version) {
      answers.push("superseded");
    } else if (r.version < job.version) {
      answers.push(
        new PermanentJobError(
          `embed: job for version ${job.version} of ${job.entryKey}, which is at ${r.version}`,
          "bad_version",
        ),
      );
    } else if (r.decided_version !== job.version) {
      // Handed on after dedup's commit, so this is a sweep racing dedup: retried shortly.
      answers.push(new Error(`embed: dedup has not decided ${job.entryKey}@${job.version} yet`));
    } else if (r.deleted_at !== null || (r.outcome !== "unique" && r.outcome !== "review")) {
      gone.push(r.entry_key);
      answers.push("dropped");
    } else {
      if (!embed.includes(r)) embed.push(r);
      answers.push("survived");
    }
  }
  if (gone.length > 0) await removeSearchDocs(db, gone);
  if (embed.length === 0) return answers;

  await storeSearchDocs(
    db,
    embed.map((r) => ({
      entryKey: r.entry_key,
      itemVersion: r.version,
      sourceId: r.source_id,
      lang: r.language ?? detectLanguage(`${r.title ?? ""} ${r.summary ?? ""}`),
      firstSeenAt: r.first_seen_at,
      title: r.title,
      summary: r.summary,
    })),
  );
  const failed = new Map<string, Error>();
  for (const target of options.targets.current()) {
    const missing = await lacking(db, target.model.id, embed);
    const texts = missing.map((r) => passageText(r.title, r.summary));
    const withText = missing.filter((_, i) => texts[i] !== "");
    if (withText.length === 0) continue;
    try {
      const batch = await target.embedder.embed(
        texts.filter((t) => t !== ""),
        { purpose: "passage" },
      );
      // A failover answers with its fallback's model: stored under that model, never mixed.
      const model =
        batch.model.model === target.model.info.model
          ? target.model
          : await options.registry.register(batch.model);
      await storeVectors(
        db,
        withText.map((r, i) => ({
          modelId: model.id,
          entryKey: r.entry_key,
          itemVersion: r.version,
          vector: batch.vectors[i] as Float32Array,
          lang: r.language ?? detectLanguage(`${r.title ?? ""} ${r.summary ?? ""}`),
          sourceId: r.source_id,
          firstSeenAt: r.first_seen_at,
        })),
      );
      emit("embed:done", {
        model: model.info.model,
        items: withText.length,
        seconds: (performance.now() - started) / 1000,
      });
    } catch (err) {
      const error =
        err instanceof EmbeddingError && err.code === "bad_input"
          ? new PermanentJobError(`embed: ${err.message}`, "bad_input")
          : err instanceof Error
            ? err
            : new Error(String(err));
      emit("embed:failed", {
        model: target.model.info.model,
        items: withText.length,
        code: err instanceof EmbeddingError ? err.code : "error",
      });
      for (const r of withText) failed.set(r.entry_key, error);
    }
  }
  return jobs.map((job, i) => failed.get(job.entryKey) ?? (answers[i] as Answer));
}

/** Of `rows`, those without a vector of `modelId` at their version. */
async function lacking(db: Database, modelId: number, rows: Row[]): Promise<Row[]> {
  const have = await db.prisma.$queryRaw<{ entry_key: string }[]>`
    SELECT x.k AS entry_key
    FROM unnest(${rows.map((r) => r.entry_key)}::text[], ${rows.map((r) => r.version)}::int[])
         AS x(k, v)
    JOIN item_vectors iv ON iv.model_id = ${modelId} AND iv.entry_key = x.k
                        AND iv.item_version >= x.v`;
  const current = new Set(have.map((h) => h.entry_key));
  return rows.filter((r) => !current.has(r.entry_key));
}

/**
 * For stage 4: embeds and stores, by `target`'s model, the current text of every live item of
 * `entryKeys` that has no current vector of it (a candidate that is a duplicate was never
 * embedded). A failover's fallback answer is not stored here: stage 4 compares one model's
 * vectors, and the pair waits in review instead.
 */
export function vectorEnsurer(db: Database, target: EmbedTarget) {
  return async (entryKeys: string[]): Promise<void> => {
    const rows = await db.prisma.$queryRaw<Row[]>`
      SELECT n.entry_key, n.source_id, n.version, n.title, n.summary, n.language, n.first_seen_at,
             n.deleted_at, NULL::int AS decided_version, NULL::text AS outcome
      FROM news n WHERE n.entry_key = ANY(${[...new Set(entryKeys)]}::text[])
        AND n.deleted_at IS NULL`;
    const missing = (await lacking(db, target.model.id, rows)).filter(
      (r) => passageText(r.title, r.summary) !== "",
    );
    if (missing.length === 0) return;
    const batch = await target.embedder.embed(
      missing.map((r) => passageText(r.title, r.summary)),
      { purpose: "passage" },
    );
    if (batch.model.model !== target.model.info.model) return;
    await storeVectors(
      db,
      missing.map((r, i) => ({
        modelId: target.model.id,
        entryKey: r.entry_key,
        itemVersion: r.version,
        vector: batch.vectors[i] as Float32Array,
        lang: r.language ?? detectLanguage(`${r.title ?? ""} ${r.summary ?? ""}`),
        sourceId: r.source_id,
        firstSeenAt: r.first_seen_at,
      })),
    );
  };
}
