/** What the vector store and hybrid search (lib/search) take and give. */

/** Detected at start: pgvector (HNSW, an index per model) or the portable path. */
export type VectorBackend = "pgvector" | "portable";

/** One item's vector to store under its model (item_vectors). */
export interface VectorRow {
  modelId: number;
  entryKey: string;
  itemVersion: number;
  /** Unit length, the model's dims. */
  vector: Float32Array;
  lang: string | null;
  sourceId: string;
  firstSeenAt: Date;
}

/** One item's full-text document (search_docs). */
export interface SearchDocRow {
  entryKey: string;
  itemVersion: number;
  sourceId: string;
  lang: string | null;
  firstSeenAt: Date;
  title: string | null;
  summary: string | null;
}

export interface SearchFilters {
  lang?: string;
  sourceId?: string;
  since?: Date;
  until?: Date;
}

export interface VectorHit {
  entryKey: string;
  /** Cosine similarity, -1..1. */
  similarity: number;
}
