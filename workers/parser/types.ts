export type FeedFormat = "rss2" | "rss1" | "atom1" | "atom03" | "rss09x";

export interface ParsedEntry {
  guid?: string;
  atomId?: string;
  /** canonicalId from lib/canonical.ts: guid, atom:id, canonical link, title|published. */
  id: string;
  title: string;
  link?: string;
  /** ISO 8601 UTC. */
  published?: string;
  /** ISO 8601 UTC. */
  updated?: string;
  summary?: string;
  author?: string;
  categories: string[];
}

export interface ParsedFeed {
  format: FeedFormat;
  /** ttlMinutes: RSS <ttl>, how long the publisher asks readers to wait between polls. */
  feed: { title: string; link?: string; id?: string; updated?: string; ttlMinutes?: number };
  entries: ParsedEntry[];
}

/** What a format reader finds for one entry, before identity is worked out. */
export type EntryFields = Omit<ParsedEntry, "id">;
