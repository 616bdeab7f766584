/**
 * The read model's keys and cursors: what the builder (workers/readmodel) writes and the request
 * side (lib/readmodel) asks the store for.
 *
 * - A list's id names its filters: `home`, `category:<c>`, `lang:<l>`, `category:<c>|lang:<l>`.
 * - `order:<version>:<list>`: the version's frozen order of story ids. Versioned, because a cursor
 *   walks the order of the version it was made in while newer versions are built; the builder
 *   keeps the last versions' orders for at least the cursor window (10 minutes) and prunes older.
 * - `page:<limit>:<offset>:<list>` and `story:<id>`: not versioned, the newest replaces the older.
 *   A page payload answers a request only when its modelVersion is the version wanted (the head
 *   without a cursor, the cursor's otherwise); else the page is built from the version's order
 *   and the story payloads (payload.ts `pageFromOrder`), store reads only.
 *
 * The list is the last part of a page key, so `:` and `|` inside it never make a key ambiguous.
 */
import { z } from "zod";
import type { ListFilter } from "@/lib/readmodel/types";

/** The page size the builder prebuilds and a request without `limit` gets. */
export const DEFAULT_PAGE_LIMIT = 20;
/** 100 stories of JSON is ~60 KB: past that a reader pages, and a page stays one cheap payload. */
export const MAX_PAGE_LIMIT = 100;
/** The builder prebuilds the first 5 pages at the default limit: 100 stories, past most readers. */
export const PREBUILT_PAGES = 5;

/**
 * A filter value: a category (lib/extract CATEGORIES) or a language code ("bn", "en", "other"),
 * lower case. Anything else would be a list nobody builds, so it is refused at the boundary.
 */
const FILTER_VALUE = /^[a-z][a-z0-9_-]{0,39}$/;

/** A cursor, a list id or a filter value the read model cannot have made. */
export class ReadModelKeyError extends Error {
  readonly code: "bad_cursor" | "bad_filter";
  constructor(code: "bad_cursor" | "bad_filter", message: string) {
    super(message);
    this.name = "ReadModelKeyError";
    this.code = code;
  }
}

function filterValue(kind: "category" | "lang", value: string): string {
  if (!FILTER_VALUE.test(value)) {
    throw new ReadModelKeyError(
      "bad_filter",
      `${kind} must be 1-40 lower-case letters, digits, '-' or '_' starting with a letter`,
    );
  }
  return value;
}

/** The list id of a filter: `home`, `category:<c>`, `lang:<l>` or `category:<c>|lang:<l>`. */
export function listId(filter: ListFilter = {}): string {
  const parts: string[] = [];
  if (filter.category) parts.push(`category:${filterValue("category", filter.category)}`);
  if (filter.lang) parts.push(`lang:${filterValue("lang", filter.lang)}`);
  return parts.length === 0 ? "home" : parts.join("|");
}

/** The filter of a list id; throws ReadModelKeyError on anything listId would not produce. */
export function parseListId(id: string): ListFilter {
  if (id === "home") return {};
  const match = /^(?:category:([^|:]+))?(?:\|?lang:([^|:]+))?$/.exec(id);
  if (!match || (!match[1] && !match[2])) {
    throw new ReadModelKeyError("bad_filter", "not a list id");
  }
  const filter: ListFilter = {};
  if (match[1]) filter.category = filterValue("category", match[1]);
  if (match[2]) filter.lang = filterValue("lang", match[2]);
  // "category:xlang:en" and "|lang:en" are refused by round-tripping to the one spelling.
  if (listId(filter) !== id) throw new ReadModelKeyError("bad_filter", "not a list id");
  return filter;
}

export function orderKey(list: string, modelVersion: number): string {
  return `order:${modelVersion}:${list}`;
}

export function pageKey(list: string, limit: number, offset: number): string {
  return `page:${limit}:${offset}:${list}`;
}

export function storyKey(id: string): string {
  return `story:${id}`;
}

/** Story ids are entry keys: 64 hex characters (sha-256). */
export const STORY_ID = /^[0-9a-f]{64}$/;

/** Where a cursor points: the model version whose frozen order it walks, the offset, the list. */
export interface Cursor {
  v: number;
  o: number;
  l: string;
}

/** An offset past 100,000 stories is not a reader paging; it is someone probing. */
const MAX_OFFSET = 100_000;
/** A cursor is ~60 characters; 512 leaves room for the longest list id and refuses junk early. */
const MAX_CURSOR_LENGTH = 512;

const cursorSchema = z
  .object({
    v: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
    o: z.number().int().min(0).max(MAX_OFFSET),
    l: z.string().min(1).max(200),
  })
  .strict();

/** An opaque cursor: base64url of {v, o, l} as JSON. */
export function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify({ v: cursor.v, o: cursor.o, l: cursor.l }), "utf8").toString(
    "base64url",
  );
}

/**
 * The cursor a client sent back, checked strictly: base64url only, JSON of exactly {v, o, l},
 * integers in range, a list id the builder could have made. Throws ReadModelKeyError
 * (`bad_cursor`) with a message fit for a 400 answer.
 */
export function decodeCursor(text: string): Cursor {
  if (text.length === 0 || text.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(text)) {
    throw new ReadModelKeyError("bad_cursor", "cursor is not a cursor this API gave out");
  }
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(text, "base64url").toString("utf8"));
  } catch {
    throw new ReadModelKeyError("bad_cursor", "cursor is not a cursor this API gave out");
  }
  const parsed = cursorSchema.safeParse(value);
  if (!parsed.success) {
    throw new ReadModelKeyError("bad_cursor", "cursor is not a cursor this API gave out");
  }
  try {
    parseListId(parsed.data.l);
  } catch {
    throw new ReadModelKeyError("bad_cursor", "cursor names no list");
  }
  return parsed.data;
}
