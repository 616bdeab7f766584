import { SimError } from "../newsroom";
import type { Random } from "../random";

/**
 * The story API's newsroom (seed 001's provider) as a plain object: stories per ticker that are
 * created, updated, shortlisted, made strong, closed and merged, each change published as an
 * event in one global log. No HTTP and no timers, so a chaos harness can run a thousand
 * randomized desks in-process; the simulator serves one over HTTP (./http.ts) and delivers its
 * events as webhooks (./webhooks.ts).
 *
 * The objects are exactly what workers/stories/events.ts parses: snake_case, ISO instants,
 * `version` growing by one per change, `ticker` at the top of every event.
 */

export interface Article {
  id: string;
  story_id: string;
  title: string;
  url: string;
  published_at: string;
}

export interface Story {
  id: string;
  ticker: string;
  version: number;
  title: string;
  strong: boolean;
  articles: Article[];
  created_at: string;
  updated_at: string;
}

export type StoryEventType =
  | "story.created"
  | "story.updated"
  | "story.became_strong"
  | "story.closed"
  | "article.shortlisted";

interface EventBase<T extends StoryEventType, D> {
  id: string;
  type: T;
  created_at: string;
  ticker: string;
  data: D;
}

interface EventData {
  "story.created": { story: Story };
  "story.updated": { story: Story };
  "story.became_strong": { story: Story };
  "story.closed": { story_id: string; version: number; merged_into: Story | null };
  "article.shortlisted": { article: Article };
}

export type DeskEvent =
  | EventBase<"story.created" | "story.updated" | "story.became_strong", { story: Story }>
  | EventBase<"story.closed", { story_id: string; version: number; merged_into: Story | null }>
  | EventBase<"article.shortlisted", { article: Article }>;

export interface EventsPage {
  data: DeskEvent[];
  next_cursor: string;
  has_more: boolean;
}

export interface EventsQuery {
  /** null or absent: the start of the retention window. */
  cursor?: string | null;
  /** Only events of these tickers; the cursor still records the position in the global log. */
  tickers?: readonly string[];
  /** Default 100, at most 1,000. */
  limit?: number;
}

export interface ClosedStory {
  id: string;
  ticker: string;
  /** The closing version: one more than the last open version (what story.closed carries). */
  version: number;
  merged_into: string | null;
  closed_at: string;
}

/** Everything a chaos run compares its copy against, deep-copied. */
export interface DeskSnapshot {
  /** Open stories, sorted by id. */
  open: Story[];
  closed: ClosedStory[];
  /** Stories that became strong (open or closed since), with when. */
  strong: { id: string; at: string }[];
  /** The last event's seq (0 before any). */
  seq: number;
  epoch: number;
}

export interface StoryDeskOptions {
  random: Random;
  /** Epoch ms; stamps stories, articles and events. */
  clock: () => number;
  /** Put into every id (`st_<prefix><n>`, `ar_…`, `evt_…`) so desks sharing a database never collide. */
  idPrefix?: string;
  /** Events older than this are dropped and cursors before them answer 410 (default 30 days). */
  retentionMs?: number;
  /** The tickers step() works on (default ACME, GLOBX, INITECH, UMBRA). */
  tickers?: readonly string[];
  /** Where article URLs point (default https://desk.example). */
  baseUrl?: string;
}

export const DEFAULT_TICKERS = ["ACME", "GLOBX", "INITECH", "UMBRA"] as const;
export const DEFAULT_RETENTION_MS = 30 * 86_400_000;
const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 1_000;

/** 410: the cursor is before the retention window or was issued before expireCursors(). */
export class CursorExpiredError extends SimError {
  readonly code = "cursor_expired";
  constructor(message: string) {
    super(message, 410);
    this.name = "CursorExpiredError";
  }
}

/** 400: not a cursor this desk issued. */
export class CursorInvalidError extends SimError {
  readonly code = "bad_cursor";
  constructor(message: string) {
    super(message, 400);
    this.name = "CursorInvalidError";
  }
}

interface Logged {
  seq: number;
  at: number;
  event: DeskEvent;
}

interface Cursor {
  /** The last seq the holder has seen. */
  s: number;
  /** expireCursors() generation. */
  e: number;
  /** Issued at, epoch ms. */
  t: number;
}

type Operation = "create" | "update" | "shortlist" | "becomeStrong" | "close" | "merge";

// Roughly a desk's day: new stories and new articles dominate, merges are common because two
// desks often start the same story, outright closes are rarer. Creates (25) outweigh closes and
// merges (20) so the number of open stories grows slowly instead of draining to zero.
const WEIGHTS: Record<Operation, number> = {
  create: 25,
  update: 20,
  shortlist: 20,
  becomeStrong: 10,
  close: 8,
  merge: 12,
};

const SUBJECTS = [
  "Quarterly results",
  "Chief executive",
  "Regulator",
  "Supplier",
  "Board",
  "Union",
];
const VERBS = ["beats", "misses", "probes", "delays", "confirms", "denies", "revises", "expands"];
const OBJECTS = ["guidance", "buyback", "merger talks", "plant closure", "dividend", "recall"];

export class StoryDesk {
  readonly #random: Random;
  readonly #clock: () => number;
  readonly #prefix: string;
  readonly #retentionMs: number;
  readonly #tickers: readonly string[];
  readonly #baseUrl: string;

  /** Open stories by id, in creation order (which keeps step() deterministic). */
  readonly #open = new Map<string, Story>();
  readonly #closed = new Map<string, ClosedStory>();
  readonly #strongAt = new Map<string, string>();
  /** The log; entries before #head are dropped (compacted now and then). */
  #log: Logged[] = [];
  #head = 0;
  /** The highest seq dropped by retention: a cursor before it has missed events. */
  #droppedThrough = 0;
  #seq = 0;
  #epoch = 0;
  #nextStory = 1;
  #nextArticle = 1;
  readonly #listeners = new Set<(event: DeskEvent) => void>();

  constructor(options: StoryDeskOptions) {
    this.#random = options.random;
    this.#clock = options.clock;
    this.#prefix = options.idPrefix ?? "";
    this.#retentionMs = options.retentionMs ?? DEFAULT_RETENTION_MS;
    this.#tickers = options.tickers ?? DEFAULT_TICKERS;
    this.#baseUrl = options.baseUrl ?? "https://desk.example";
    if (this.#tickers.length === 0) throw new SimError("a story desk needs at least one ticker");
  }

  get tickers(): readonly string[] {
    return this.#tickers;
  }

  // ---- operations: each returns the events it published --------------------------------------

  create(ticker: string, title?: string): DeskEvent[] {
    const now = this.#now();
    const id = `st_${this.#prefix}${this.#nextStory++}`;
    const story: Story = {
      id,
      ticker,
      version: 1,
      title: title ?? this.#headline(ticker),
      strong: false,
      articles: [],
      created_at: now,
      updated_at: now,
    };
    story.articles.push(this.#article(story, now));
    this.#open.set(id, story);
    return [this.#publish("story.created", ticker, { story: copyStory(story) })];
  }

  update(id: string, title?: string): DeskEvent[] {
    const story = this.#require(id, "update");
    story.title = title ?? this.#headline(story.ticker);
    this.#bump(story);
    return [this.#publish("story.updated", story.ticker, { story: copyStory(story) })];
  }

  becomeStrong(id: string): DeskEvent[] {
    const story = this.#require(id, "make strong");
    if (story.strong) throw new SimError(`story ${id} is already strong`, 409);
    story.strong = true;
    this.#bump(story);
    this.#strongAt.set(id, story.updated_at);
    return [this.#publish("story.became_strong", story.ticker, { story: copyStory(story) })];
  }

  /** A new article joins the story: article.shortlisted, then story.updated for the version bump. */
  shortlist(id: string, title?: string): DeskEvent[] {
    const story = this.#require(id, "shortlist to");
    const now = this.#now();
    const article = this.#article(story, now, title);
    story.articles.push(article);
    this.#bump(story, now);
    return [
      this.#publish("article.shortlisted", story.ticker, { article: { ...article } }),
      this.#publish("story.updated", story.ticker, { story: copyStory(story) }),
    ];
  }

  close(id: string): DeskEvent[] {
    const story = this.#require(id, "close");
    const version = this.#retire(story, null);
    return [
      this.#publish("story.closed", story.ticker, { story_id: id, version, merged_into: null }),
    ];
  }

  /**
   * `fromId` closes into `intoId`: the survivor takes its articles (their story_id becomes the
   * survivor's) and one version bump, carried as `merged_into` in the one story.closed event.
   */
  merge(fromId: string, intoId: string): DeskEvent[] {
    if (fromId === intoId) throw new SimError(`cannot merge story ${fromId} into itself`, 409);
    const from = this.#require(fromId, "merge");
    const into = this.#require(intoId, "merge into");
    if (from.ticker !== into.ticker) {
      throw new SimError(
        `cannot merge ${fromId} (${from.ticker}) into ${intoId} (${into.ticker}): tickers differ`,
        409,
      );
    }
    const now = this.#now();
    for (const article of from.articles) into.articles.push({ ...article, story_id: intoId });
    this.#bump(into, now);
    const version = this.#retire(from, intoId);
    return [
      this.#publish("story.closed", from.ticker, {
        story_id: fromId,
        version,
        merged_into: copyStory(into),
      }),
    ];
  }

  /** One random plausible operation (see WEIGHTS); uses the desk's Random unless given one. */
  step(random: Random = this.#random): DeskEvent[] {
    const open = [...this.#open.values()];
    const weak = open.filter((s) => !s.strong);
    const mergeable = this.#tickers.filter((t) => open.filter((s) => s.ticker === t).length >= 2);
    const possible = (Object.keys(WEIGHTS) as Operation[]).filter((op) => {
      if (op === "create") return true;
      if (op === "becomeStrong") return weak.length > 0;
      if (op === "merge") return mergeable.length > 0;
      return open.length > 0;
    });
    const op = random.weighted(possible, (o) => WEIGHTS[o]);
    switch (op) {
      case "create":
        return this.create(random.pick(this.#tickers), this.#headline(undefined, random));
      case "update":
        return this.update(random.pick(open).id, this.#headline(undefined, random));
      case "shortlist":
        return this.shortlist(random.pick(open).id, this.#headline(undefined, random));
      case "becomeStrong":
        return this.becomeStrong(random.pick(weak).id);
      case "close":
        return this.close(random.pick(open).id);
      case "merge": {
        const ticker = random.pick(mergeable);
        const same = open.filter((s) => s.ticker === ticker);
        const from = random.pick(same);
        const into = random.pick(same.filter((s) => s !== from));
        return this.merge(from.id, into.id);
      }
    }
  }

  // ---- reads ---------------------------------------------------------------------------------

  /** The open story, or null once closed (or never created): the API's 404. */
  story(id: string): Story | null {
    const story = this.#open.get(id);
    return story ? copyStory(story) : null;
  }

  /** How a closed story ended, or null while open or unknown. */
  closed(id: string): ClosedStory | null {
    const closed = this.#closed.get(id);
    return closed ? { ...closed } : null;
  }

  /** Open stories of the ticker, sorted by id. */
  list(ticker: string): Story[] {
    return [...this.#open.values()]
      .filter((s) => s.ticker === ticker)
      .map(copyStory)
      .sort((a, b) => compareIds(a.id, b.id));
  }

  snapshot(): DeskSnapshot {
    return {
      open: [...this.#open.values()].map(copyStory).sort((a, b) => compareIds(a.id, b.id)),
      closed: [...this.#closed.values()].map((c) => ({ ...c })),
      strong: [...this.#strongAt].map(([id, at]) => ({ id, at })),
      seq: this.#seq,
      epoch: this.#epoch,
    };
  }

  // ---- the event log -------------------------------------------------------------------------

  /**
   * A page of the log after the cursor, in publication order. The cursor is the global seq
   * reached, whatever the ticker filter, so a filtered reader never skips or repeats an event of
   * its tickers; `next_cursor` is present on every page, an empty one included.
   */
  events(query: EventsQuery = {}): EventsPage {
    this.#prune();
    const limit = query.limit ?? DEFAULT_LIMIT;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
      throw new SimError(`limit must be an integer from 1 to ${MAX_LIMIT}, not ${limit}`);
    }
    const after = query.cursor ? this.#decode(query.cursor) : this.#droppedThrough;
    const wanted = query.tickers && query.tickers.length > 0 ? new Set(query.tickers) : null;
    const data: DeskEvent[] = [];
    // The log's seqs are contiguous: the entry after `after` is at a computed index.
    const firstSeq = this.#log[this.#head]?.seq ?? this.#seq + 1;
    let i = Math.max(this.#head, this.#head + (after + 1 - firstSeq));
    let reached = after;
    let hasMore = false;
    // Past a full page, events of other tickers are skipped for good only if no event of ours
    // follows them; otherwise the next page starts right after the last one returned.
    let skipped = after;
    for (; i < this.#log.length; i++) {
      const entry = this.#log[i] as Logged;
      if (wanted && !wanted.has(entry.event.ticker)) {
        skipped = entry.seq;
        continue;
      }
      if (data.length === limit) {
        hasMore = true;
        break;
      }
      data.push(copyEvent(entry.event));
      reached = entry.seq;
      skipped = entry.seq;
    }
    if (!hasMore) reached = skipped;
    return { data, next_cursor: this.#encode(reached), has_more: hasMore };
  }

  /** Every cursor issued so far answers 410 from now on (a fresh, null cursor still works). */
  expireCursors(): number {
    return ++this.#epoch;
  }

  /** Told about every event as it is published (webhook delivery); returns an unsubscribe. */
  onEvent(listener: (event: DeskEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  // ---- internals -----------------------------------------------------------------------------

  #now(): string {
    return new Date(this.#clock()).toISOString();
  }

  #require(id: string, doing: string): Story {
    const story = this.#open.get(id);
    if (story) return story;
    const closed = this.#closed.get(id);
    if (closed) {
      const how = closed.merged_into ? `merged into ${closed.merged_into}` : "closed";
      throw new SimError(
        `cannot ${doing} story ${id}: it was ${how} at version ${closed.version}`,
        409,
      );
    }
    throw new SimError(`cannot ${doing} story ${id}: no such story`, 404);
  }

  #bump(story: Story, now = this.#now()): void {
    story.version += 1;
    story.updated_at = now;
  }

  #retire(story: Story, mergedInto: string | null): number {
    const version = story.version + 1;
    this.#open.delete(story.id);
    this.#closed.set(story.id, {
      id: story.id,
      ticker: story.ticker,
      version,
      merged_into: mergedInto,
      closed_at: this.#now(),
    });
    return version;
  }

  #article(story: Story, now: string, title?: string): Article {
    const id = `ar_${this.#prefix}${this.#nextArticle++}`;
    return {
      id,
      story_id: story.id,
      title: title ?? this.#headline(story.ticker),
      url: `${this.#baseUrl}/articles/${id}`,
      published_at: now,
    };
  }

  #headline(ticker?: string, random: Random = this.#random): string {
    const text = `${random.pick(SUBJECTS)} ${random.pick(VERBS)} ${random.pick(OBJECTS)}`;
    return ticker ? `${ticker}: ${text}` : text;
  }

  #publish<T extends StoryEventType>(type: T, ticker: string, data: EventData[T]): DeskEvent {
    const at = this.#clock();
    const seq = ++this.#seq;
    const event = {
      id: `evt_${this.#prefix}${String(seq).padStart(12, "0")}`,
      type,
      created_at: new Date(at).toISOString(),
      ticker,
      data,
    } as DeskEvent;
    this.#log.push({ seq, at, event });
    this.#prune();
    for (const listener of this.#listeners) listener(copyEvent(event));
    return copyEvent(event);
  }

  /** Drops events past the retention window; compacts the array when half of it is dead. */
  #prune(): void {
    const oldest = this.#clock() - this.#retentionMs;
    while (this.#head < this.#log.length && (this.#log[this.#head] as Logged).at < oldest) {
      this.#droppedThrough = (this.#log[this.#head] as Logged).seq;
      this.#head++;
    }
    if (this.#head > 1_024 && this.#head * 2 > this.#log.length) {
      this.#log = this.#log.slice(this.#head);
      this.#head = 0;
    }
  }

  #encode(seq: number): string {
    const cursor: Cursor = { s: seq, e: this.#epoch, t: this.#clock() };
    return Buffer.from(JSON.stringify(cursor)).toString("base64url");
  }

  /** The seq a cursor reached; throws 400 for garbage and 410 for an expired one. */
  #decode(raw: string): number {
    let cursor: Cursor;
    try {
      cursor = JSON.parse(Buffer.from(raw, "base64url").toString("utf8"));
    } catch {
      throw new CursorInvalidError(`"${raw.slice(0, 80)}" is not a cursor`);
    }
    const { s, e, t } = cursor ?? ({} as Cursor);
    if (
      ![s, e, t].every((n) => Number.isInteger(n) && n >= 0) ||
      s > this.#seq ||
      e > this.#epoch
    ) {
      throw new CursorInvalidError(`"${raw.slice(0, 80)}" is not a cursor this API issued`);
    }
    if (e < this.#epoch) {
      throw new CursorExpiredError("the cursor was invalidated; reload in full and start over");
    }
    if (s < this.#droppedThrough || this.#clock() - t > this.#retentionMs) {
      throw new CursorExpiredError(
        `the cursor is older than the ${Math.round(this.#retentionMs / 86_400_000)}-day window; reload in full and start over`,
      );
    }
    return s;
  }
}

function copyStory(story: Story): Story {
  return { ...story, articles: story.articles.map((a) => ({ ...a })) };
}

function copyEvent(event: DeskEvent): DeskEvent {
  const data = event.data as Record<string, unknown>;
  const copy: Record<string, unknown> = { ...data };
  if ("story" in data) copy.story = copyStory(data.story as Story);
  if ("article" in data) copy.article = { ...(data.article as Article) };
  if (data.merged_into) copy.merged_into = copyStory(data.merged_into as Story);
  return { ...event, data: copy } as DeskEvent;
}

/** st_2 before st_10: ids sort by their number, then as text (prefixes differ between desks). */
function compareIds(a: string, b: string): number {
  const na = Number(/(\d+)$/.exec(a)?.[1]);
  const nb = Number(/(\d+)$/.exec(b)?.[1]);
  const pa = a.replace(/\d+$/, "");
  const pb = b.replace(/\d+$/, "");
  if (pa !== pb) return pa < pb ? -1 : 1;
  return na - nb;
}
