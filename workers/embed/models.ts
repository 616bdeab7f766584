import type { Database } from "@/lib/db";
import type { ModelInfo } from "@/lib/embed/types";

/** A model known to the database: its id in embedding_models and what it is. */
export interface RegisteredModel {
  id: number;
  info: ModelInfo;
}

/**
 * The model's row in embedding_models, made the first time it embeds anything (state
 * 'backfilling': the items stored before it have no vector of it yet). Its calibration (stage
 * 4's thresholds) follows the code that ships it: a model re-fitted in a release gets the new
 * thresholds, its vectors stay. Kept per process: registering is one round trip, once.
 */
export class ModelRegistry {
  private readonly ids = new Map<string, Promise<number>>();

  constructor(private readonly db: Database) {}

  async register(info: ModelInfo): Promise<RegisteredModel> {
    let id = this.ids.get(info.model);
    if (!id) {
      id = registerModel(this.db, info);
      this.ids.set(info.model, id);
      id.catch(() => this.ids.delete(info.model));
    }
    return { id: await id, info };
  }
}

export async function registerModel(db: Database, info: ModelInfo): Promise<number> {
  const calibration = info.calibration ? JSON.stringify(info.calibration) : null;
  const rows = await db.prisma.$queryRaw<{ id: number }[]>`
    INSERT INTO embedding_models (model, provider, name, version, dims, kind, languages,
                                  cross_lingual, meaning_threshold, distinct_threshold,
                                  calibration, state, backfill_started_at)
    VALUES (${info.model}, ${info.provider}, ${info.name}, ${info.version}, ${info.dims},
            ${info.kind}, ${info.languages}::text[], ${info.crossLingual},
            ${info.meaningThreshold ?? null}, ${info.distinctThreshold ?? null},
            ${calibration}::jsonb, 'backfilling', now())
    ON CONFLICT (model) DO UPDATE SET
      meaning_threshold = excluded.meaning_threshold,
      distinct_threshold = excluded.distinct_threshold,
      calibration = excluded.calibration,
      languages = excluded.languages, cross_lingual = excluded.cross_lingual,
      last_used_at = now()
    RETURNING id`;
  const id = rows[0]?.id;
  if (id === undefined) throw new Error(`embedding model ${info.model} could not be registered`);
  if (info.dims !== (await dimsOf(db, id))) {
    throw new Error(
      `embedding model ${info.model} answers with ${info.dims} dimensions, but its stored vectors have ${await dimsOf(db, id)}: give a model that changed its output a new version`,
    );
  }
  return id;
}

async function dimsOf(db: Database, id: number): Promise<number> {
  const rows = await db.prisma.$queryRaw<{ dims: number }[]>`
    SELECT dims FROM embedding_models WHERE id = ${id}`;
  return rows[0]?.dims ?? 0;
}

/** What the dashboard and the API show of each model: its coverage of the canonical items. */
export interface ModelStatus {
  id: number;
  model: string;
  provider: string;
  kind: string;
  dims: number;
  languages: string[];
  crossLingual: boolean;
  meaningThreshold: number | null;
  distinctThreshold: number | null;
  state: string;
  embedded: number;
  createdAt: Date;
  backfillStartedAt: Date | null;
  backfillCompletedAt: Date | null;
}

export async function modelStatuses(db: Database): Promise<{
  canonical: number;
  models: ModelStatus[];
}> {
  const [canonical] = await db.prisma.$queryRaw<{ n: bigint }[]>`
    SELECT count(*) AS n FROM dedup_items WHERE live AND outcome IN ('unique', 'review')`;
  const rows = await db.prisma.$queryRaw<
    {
      id: number;
      model: string;
      provider: string;
      kind: string;
      dims: number;
      languages: string[];
      cross_lingual: boolean;
      meaning_threshold: number | null;
      distinct_threshold: number | null;
      state: string;
      embedded: bigint;
      created_at: Date;
      backfill_started_at: Date | null;
      backfill_completed_at: Date | null;
    }[]
  >`
    SELECT m.id, m.model, m.provider, m.kind, m.dims, m.languages, m.cross_lingual,
           m.meaning_threshold, m.distinct_threshold, m.state, m.created_at,
           m.backfill_started_at, m.backfill_completed_at,
           (SELECT count(*) FROM item_vectors v WHERE v.model_id = m.id) AS embedded
    FROM embedding_models m ORDER BY m.id`;
  return {
    canonical: Number(canonical?.n ?? 0),
    models: rows.map((r) => ({
      id: r.id,
      model: r.model,
      provider: r.provider,
      kind: r.kind,
      dims: r.dims,
      languages: r.languages,
      crossLingual: r.cross_lingual,
      meaningThreshold: r.meaning_threshold,
      distinctThreshold: r.distinct_threshold,
      state: r.state,
      embedded: Number(r.embedded),
      createdAt: r.created_at,
      backfillStartedAt: r.backfill_started_at,
      backfillCompletedAt: r.backfill_completed_at,
    })),
  };
}
