export type FeedFormat =
  | "rss2"
  | "rss1"
  | "atom1"
  | "atom03"
  | "rss09x"
  /** Netscape's Channel Definition Format (CDF), a channel of items in capitals. */
  | "cdf"
  /** JSON Feed 1.0 and 1.1. */
  | "json10"
  | "json11";

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
  /** language: a JSON Feed's `language` (BCP 47), when it says. */
  feed: {
    title: string;
    link?: string;
    id?: string;
    updated?: string;
    ttlMinutes?: number;
    language?: string;
  };
  entries: ParsedEntry[];
}

/** What a format reader finds for one entry, before identity is worked out. */
export type EntryFields = Omit<ParsedEntry, "id">;
