/**
 * The read path's contract (seed 003: "the read path never queries the write tables"): readers
 * are served payloads the writer side precomputed, serialized and tagged, from a store (Redis
 * when REDIS_URL is set, else this process's memory backed by the read_payloads table). The
 * index stage (workers/readmodel) keeps read_stories current; the builder turns them into a new
 * model version every build interval in which something changed, with its ranking frozen inside
 * the version, so pages never shift under a reader and no request recomputes a ranking.
 *
 * This file is what the builder (workers/readmodel), the store and request side (lib/readmodel),
 * the public routes (app/api/news, app/news), the spike bench and the dashboard build on.
 */

/** A story as the public API gives it (one per dedup cluster, its canonical item). */
export interface PublicStory {
  /** The canonical item's entry key (64 hex characters): GET /api/news/{id}. */
  id: string;
  title: string;
  link: string | null;
  summary: string | null;
  source: { id: string; name: string };
  /** Every live outlet covering the story, the canonical's first. */
  outlets: { source: { id: string; name: string }; link: string | null }[];
  category: string | null;
  language: string | null;
  breaking: boolean;
  /** ISO 8601 times. */
  publishedAt: string | null;
  firstSeenAt: string;
  updatedAt: string;
}

/** A list's filters: the home list has neither. */
export interface ListFilter {
  category?: string | null;
  lang?: string | null;
}

/** The body of GET /api/news (serialized once, at build or at the first miss of its key). */
export interface ListPage {
  items: PublicStory[];
  /** Opaque: the model version and the offset in its frozen order; null on the last page. */
  nextCursor: string | null;
  model: { version: number; builtAt: string };
}

/** A payload ready to send: the bytes, their strong ETag, the model version they belong to. */
export interface Payload {
  key: string;
  modelVersion: number;
  /** A strong ETag, quoted: `"<version>-<hash>"`. */
  etag: string;
  /** UTF-8 JSON. */
  body: Buffer;
  builtAt: Date;
}

/** Where payloads live. Every method may throw ReadModelUnavailableError; none throws otherwise. */
export interface ReadModelStore {
  readonly kind: "redis" | "memory";
  get(key: string): Promise<Payload | null>;
  /** Stores payloads (any model version); a newer version of a key replaces an older one only. */
  put(payloads: readonly Payload[]): Promise<void>;
  /** The newest complete model version and its build time (null: nothing built yet). */
  head(): Promise<{ modelVersion: number; builtAt: Date } | null>;
  setHead(head: { modelVersion: number; builtAt: Date }): Promise<void>;
  /**
   * Removes payloads (the builder's only removals: a retracted story's `story:` key, the `order:`
   * keys of versions past the cursor window, the pages of a list that no longer has stories).
   */
  delete(keys: readonly string[]): Promise<void>;
  /**
   * Across instances, one builder of a missing key at a time (Redis: SET NX PX); true when this
   * caller holds it. The memory store always answers true (single-flight in process does the rest).
   */
  lock(key: string, ttlMs: number): Promise<boolean>;
  unlock(key: string): Promise<void>;
  close(): Promise<void>;
}

/** The store cannot be read or written (Redis down, the database down without a cached copy). */
export class ReadModelUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ReadModelUnavailableError";
  }
}

/** How a request was answered, for the metrics and the dashboard. */
export type ReadOutcome =
  | "hit" // the payload was in the store (or this process's copy of it)
  | "miss" // built on request (single-flight) and stored
  | "stale" // the store or the build failed: the last payload served, with its age
  | "not_modified" // If-None-Match matched: 304
  | "not_found" // no such story, or a cursor of a version long gone
  | "error"; // nothing to serve: 503
