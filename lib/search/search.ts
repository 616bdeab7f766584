import type { Database } from "@/lib/db";
import { type Embedder, EmbeddingError } from "@/lib/embed/types";
import { emit } from "@/lib/events";
import { detectLanguage } from "./docs";
import {
  activeSearchModel,
  DEFAULT_LIMIT,
  type HybridAnswer,
  hybridSearch,
  type QueryVector,
  type SearchModel,
} from "./hybrid";
import type { SearchFilters, VectorBackend } from "./types";
import { vectorBackendStatus } from "./vectors";

/**
 * A search as the API and the CLI make it: choose the model (activeSearchModel), embed the query
 * with it, and run the hybrid search; or say why it is full text only. What the answer says of
 * the model is what the page shows above the results.
 */

export interface SearchRequest {
  q: string;
  filters?: SearchFilters;
  limit?: number;
  cursor?: string | null;
}

export interface SearchDeps {
  /** The model search must use (a model id or its prefix); else the newest complete one. */
  configuredModel?: string | null;
  /**
   * An embedder for a stored model, when this process can make one; null when it cannot (an
   * operator's model no longer configured here): the search is then full text only, and says so.
   */
  embedderFor: (model: SearchModel) => Embedder | null | Promise<Embedder | null>;
}

export type NoticeCode =
  | "no_model" // no complete model: full text only
  | "configured_model_not_ready" // the configured model is backfilling: another one is used
  | "model_not_bangla" // a Bangla query and a model that does not read Bangla: full text only
  | "not_cross_lingual" // a Bangla query finds Bangla stories only by meaning
  | "model_unavailable" // the model could not embed the query: full text only
  | "other_model_answered"; // a failover answered with another model: full text only

export interface Notice {
  code: NoticeCode;
  message: string;
}

export interface SearchModelSummary {
  /** "shipped:use-lite@0.2.0". */
  id: string;
  kind: "meaning" | "lexical";
  provider: string;
  name: string;
  version: string;
  dims: number;
  languages: string[];
  crossLingual: boolean;
}

export interface SearchAnswer extends Omit<HybridAnswer, "timings"> {
  query: { q: string; lang: string | null; source: string | null; limit: number };
  /** The language the query was read as (by its script). */
  queryLanguage: "bn" | "en" | null;
  /** The model the vector side used; null: full text only (the notices say why). */
  model: SearchModelSummary | null;
  vectorBackend: VectorBackend;
  pgvectorVersion: string | null;
  notices: Notice[];
  timings: HybridAnswer["timings"] & { embedMs: number };
}

const summary = (m: SearchModel): SearchModelSummary => ({
  id: m.model,
  kind: m.info.kind,
  provider: m.info.provider,
  name: m.info.name,
  version: m.info.version,
  dims: m.info.dims,
  languages: m.info.languages,
  crossLingual: m.info.crossLingual,
});

export async function search(
  db: Database,
  request: SearchRequest,
  deps: SearchDeps,
): Promise<SearchAnswer> {
  const started = performance.now();
  const [model, backend] = await Promise.all([
    activeSearchModel(db, deps.configuredModel),
    vectorBackendStatus(db),
  ]);
  const notices: Notice[] = [];
  const q = request.q.trim();
  const queryLanguage = detectLanguage(q);
  if (model?.note) {
    notices.push({
      code: "configured_model_not_ready",
      message: `${model.note}: searching with ${model.model} meanwhile`,
    });
  }
  let queryVector: QueryVector | null = null;
  let embedMs = 0;
  if (!model) {
    notices.push({
      code: "no_model",
      message:
        "No embedding model has finished its backfill yet: keyword search only (full text), " +
        "nothing is matched by meaning",
    });
  } else if (queryLanguage === "bn" && !model.info.languages.includes("bn")) {
    notices.push({
      code: "model_not_bangla",
      message: `${model.model} does not read Bangla: this query is matched by its words only`,
    });
  } else {
    if (queryLanguage === "bn" && !model.info.crossLingual) {
      notices.push({
        code: "not_cross_lingual",
        message: `${model.model} is not cross-lingual: a Bangla query finds Bangla stories, not English ones`,
      });
    }
    const t0 = performance.now();
    queryVector = await embedQuery(model, q, deps, notices);
    embedMs = performance.now() - t0;
  }
  const answer = await hybridSearch(db, {
    q,
    queryVector,
    filters: request.filters,
    limit: request.limit,
    cursor: request.cursor,
  });
  const totalMs = performance.now() - started;
  emit("search:done", {
    seconds: totalMs / 1000,
    model: queryVector ? queryVector.info.model : null,
    backend: backend.backend,
    hits: answer.hits.length,
  });
  return {
    ...answer,
    query: {
      q,
      lang: request.filters?.lang ?? null,
      source: request.filters?.sourceId ?? null,
      limit: request.limit ?? DEFAULT_LIMIT,
    },
    queryLanguage,
    model: queryVector && model ? summary(model) : null,
    vectorBackend: backend.backend,
    pgvectorVersion: backend.pgvectorVersion,
    notices,
    timings: {
      ...answer.timings,
      embedMs: Math.round(embedMs * 100) / 100,
      totalMs: Math.round(totalMs * 100) / 100,
    },
  };
}

/** The query's vector by `model`, or null with a notice saying why not. */
async function embedQuery(
  model: SearchModel,
  q: string,
  deps: SearchDeps,
  notices: Notice[],
): Promise<QueryVector | null> {
  let embedder: Embedder | null;
  try {
    embedder = await deps.embedderFor(model);
  } catch (err) {
    embedder = null;
    notices.push({
      code: "model_unavailable",
      message: `${model.model} cannot be loaded here (${(err as Error).message}): keyword search only`,
    });
    return null;
  }
  if (!embedder) {
    notices.push({
      code: "model_unavailable",
      message: `${model.model} is not configured in this process, so the query cannot be embedded: keyword search only`,
    });
    return null;
  }
  try {
    const batch = await embedder.embed([q], { purpose: "query" });
    const vector = batch.vectors[0];
    if (batch.model.model !== model.model || !vector) {
      // A failover's fallback answered: its vector cannot be compared with this model's.
      notices.push({
        code: "other_model_answered",
        message: `${model.model} did not answer (its fallback ${batch.model.model} did): keyword search only`,
      });
      return null;
    }
    return { modelId: model.id, info: model.info, vector };
  } catch (err) {
    const why = err instanceof EmbeddingError ? `${err.code}: ${err.message}` : String(err);
    notices.push({
      code: "model_unavailable",
      message: `${model.model} could not embed the query (${why}): keyword search only`,
    });
    return null;
  }
}
