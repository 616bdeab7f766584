/**
 * The request side of the read model: what GET /api/news, /api/news/{id} and the /news page ask.
 * Every answer is a payload the writer side (or an earlier request) serialized and tagged; a
 * request reads the store only (Redis, or this process's memory) and never queries news,
 * news_events or any other write table: a breaking-news spike costs ingestion nothing.
 *
 *   hit    the payload for the version wanted is in the store: sent as it is
 *   miss   a page nobody prebuilt (a deeper page, another limit, a page of a version whose
 *          prebuilt one was replaced): built from the version's frozen order and the story
 *          payloads (payload.ts pageFromOrder), once per key in the process (single-flight) and
 *          once across instances (store.lock), then stored
 *   stale  the store or the build failed, or another instance is building: the last payload
 *          this process holds for the key, with its age (stale-if-error at the origin)
 *   error  nothing to serve: 503
 */
import { emit } from "../events";
import { logger } from "../logger";
import { sleep } from "../sleep";
import {
  type Cursor,
  decodeCursor,
  listId,
  orderKey,
  pageKey,
  ReadModelKeyError,
  storyKey,
} from "./keys";
import { orderSlice, pageFromOrder, pagePayload, parseOrder } from "./payload";
import { SingleFlight } from "./singleFlight";
import { openReadModelStore } from "./store";
import type { ListFilter, Payload, ReadModelStore, ReadOutcome } from "./types";

export type ServeOutcome = Extract<ReadOutcome, "hit" | "miss" | "stale">;

/** A payload to send, how it was found, and how old its model is. */
export interface Served {
  payload: Payload;
  outcome: ServeOutcome;
  ageMs: number;
}

/** Why there is nothing to send: no such story / cursor too old (404), nothing at all (503). */
export interface NotServed {
  payload: null;
  outcome: "not_found" | "error";
  code: "not_found" | "cursor_expired" | "not_ready" | "read_model_unavailable";
  message: string;
}

export type ServeResult = Served | NotServed;

/**
 * A build holds the cross-instance lock 5 s at most: a page is built from ~21 store reads
 * (~5 ms on Redis), so 5 s only matters when the holder died mid-build; then the others build
 * themselves after waiting WAIT_FOR_OTHER_MS.
 */
const LOCK_TTL_MS = 5_000;
/**
 * Another instance holds the lock and there is nothing stale to send: re-read every 10 ms for up
 * to 500 ms (a build takes ~5 ms), then build here: a reader waits at most half a second for
 * someone else's build, never for a lock left by a dead instance.
 */
const WAIT_FOR_OTHER_MS = 500;
const WAIT_STEP_MS = 10;
/**
 * The last payload sent per key, for stale-if-error: 10,000 keys is every prebuilt page of ~400
 * lists plus the stories being read, and holds references to payloads the store holds anyway.
 */
const LAST_KEPT = 10_000;

export interface ReadModelOptions {
  now?: () => number;
  waitForOtherMs?: number;
}

/** The read model as this process serves it: its store, its single-flight, its last payloads. */
export class ReadModel {
  /** Pages built on request by this process (the single-flight acceptance test counts them). */
  builds = 0;
  private opened: Promise<ReadModelStore> | null = null;
  private readonly flights = new SingleFlight<Served | null>();
  private readonly last = new Map<string, Payload>();
  private readonly now: () => number;
  private readonly waitForOtherMs: number;

  constructor(
    private readonly openStore: () => Promise<ReadModelStore> = () => openReadModelStore(),
    options: ReadModelOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.waitForOtherMs = options.waitForOtherMs ?? WAIT_FOR_OTHER_MS;
  }

  /** The store, opened at the first call (again after a failed open). */
  store(): Promise<ReadModelStore> {
    this.opened ??= this.openStore().catch((err) => {
      this.opened = null;
      throw err;
    });
    return this.opened;
  }

  /**
   * A page of a list: the first (at the head) or the one a cursor points at (at the cursor's
   * version, so pages never shift under a reader). Throws ReadModelKeyError for a bad filter or
   * cursor (a 400), before anything is read.
   */
  async getList(filter: ListFilter, limit: number, cursor?: string | null): Promise<ServeResult> {
    const at = where(filter, cursor);
    const key = pageKey(at.list, limit, at.offset);
    try {
      const store = await this.store();
      let version = at.version;
      let builtAt: Date | null = null;
      if (version === null) {
        const head = await store.head();
        if (!head) return this.fallback(key, "not_ready", "the read model has not been built yet");
        version = head.modelVersion;
        builtAt = head.builtAt;
      }
      const found = await store.get(key);
      if (found && found.modelVersion === version) return this.served(found, "hit");
      const wanted = version;
      const built = await this.flights.do(`${key}@${wanted}`, () =>
        this.build(store, at.list, wanted, builtAt, at.offset, limit, found),
      );
      if (built) return built;
      return {
        payload: null,
        outcome: "not_found",
        code: "cursor_expired",
        message: "this cursor's model version is gone: start again from the first page",
      };
    } catch (err) {
      return this.fallback(key, "read_model_unavailable", (err as Error).message);
    }
  }

  /** One story (its canonical item's entry key), as the newest model holds it. */
  async getStory(id: string): Promise<ServeResult> {
    const key = storyKey(id);
    try {
      const found = await (await this.store()).get(key);
      if (found) return this.served(found, "hit");
      return { payload: null, outcome: "not_found", code: "not_found", message: "no such story" };
    } catch (err) {
      return this.fallback(key, "read_model_unavailable", (err as Error).message);
    }
  }

  async close(): Promise<void> {
    const opened = this.opened;
    this.opened = null;
    if (opened) await (await opened.catch(() => null))?.close();
  }

  /**
   * A page not in the store for its version, built from the version's order and the story
   * payloads, under the cross-instance lock. Null: the version's order is gone (a cursor older
   * than the builder keeps orders for).
   */
  private async build(
    store: ReadModelStore,
    list: string,
    version: number,
    headBuiltAt: Date | null,
    offset: number,
    limit: number,
    older: Payload | null,
  ): Promise<Served | null> {
    const key = pageKey(list, limit, offset);
    const lockKey = `${key}@${version}`;
    const locked = await store.lock(lockKey, LOCK_TTL_MS);
    if (!locked) {
      if (older) return this.served(older, "stale");
      for (let waited = 0; waited < this.waitForOtherMs; waited += WAIT_STEP_MS) {
        await sleep(WAIT_STEP_MS);
        const found = await store.get(key);
        if (found?.modelVersion === version) return this.served(found, "hit");
      }
    }
    try {
      // Another instance may have built the page and let the lock go between our first read
      // and our lock: read once more under it, so two instances never build one key twice.
      const again = locked ? await store.get(key) : null;
      if (again?.modelVersion === version) return this.served(again, "hit");
      this.builds += 1;
      const orderPayload = await store.get(orderKey(list, version));
      if (!orderPayload) {
        // At the head a list without an order is a filter no story has: an empty first page
        // (never stored: any well-formed filter value would otherwise add a key).
        if (headBuiltAt && offset === 0) {
          return this.served(pagePayload(list, limit, 0, [], 0, version, headBuiltAt), "miss");
        }
        return null;
      }
      const order = parseOrder(orderPayload);
      const ids = orderSlice(order, offset, limit);
      const stories = new Map<string, Payload>();
      await Promise.all(
        ids.map(async (id) => {
          const story = await store.get(storyKey(id));
          if (story) stories.set(id, story);
        }),
      );
      const page = pageFromOrder(order, stories, offset, limit);
      // Stored only on the grid a reader walks (offsets that are multiples of the limit, inside
      // the order): a cursor is not signed, and storing any offset a client invents would let
      // one fill the store; on the grid a list holds at most ~5× its stories' worth of pages
      // (Σ 1/limit over limits 1..100), replaced by the next version's.
      if (offset % limit === 0 && offset < order.ids.length) {
        await store.put([page]).catch((err) => {
          logger().warn({ err: (err as Error).message, key }, "read model: page not stored");
        });
      }
      return this.served(page, "miss");
    } finally {
      if (locked) await store.unlock(lockKey);
    }
  }

  private served(payload: Payload, outcome: ServeOutcome): Served {
    this.last.delete(payload.key);
    this.last.set(payload.key, payload);
    if (this.last.size > LAST_KEPT) {
      const oldest = this.last.keys().next().value;
      if (oldest !== undefined) this.last.delete(oldest);
    }
    return { payload, outcome, ageMs: Math.max(0, this.now() - payload.builtAt.getTime()) };
  }

  private fallback(key: string, code: NotServed["code"], message: string): ServeResult {
    const held = this.last.get(key);
    if (held) return this.served(held, "stale");
    return { payload: null, outcome: "error", code, message };
  }
}

/** The list, version and offset a request wants; ReadModelKeyError for a bad filter or cursor. */
function where(
  filter: ListFilter,
  cursor: string | null | undefined,
): { list: string; version: number | null; offset: number } {
  const asked = filter.category || filter.lang ? listId(filter) : null;
  if (!cursor) return { list: asked ?? "home", version: null, offset: 0 };
  const c: Cursor = decodeCursor(cursor);
  if (asked !== null && asked !== c.l) {
    throw new ReadModelKeyError("bad_cursor", "cursor belongs to another list than the filters");
  }
  return { list: c.l, version: c.v, offset: c.o };
}

const globalForReadModel = globalThis as unknown as { wirewatchReadModel?: ReadModel };

/**
 * This process's read model, on globalThis: the route handlers, the /news page and the builder
 * (when it runs in this process) share one store and one copy.
 */
export function readModel(): ReadModel {
  globalForReadModel.wirewatchReadModel ??= new ReadModel();
  return globalForReadModel.wirewatchReadModel;
}

/** Tells the metrics one public read was answered, with its time to first byte. */
export function recordRequest(
  route: "list" | "story" | "page",
  outcome: ReadOutcome | "rate_limited",
  startedAt: number,
): void {
  emit("readmodel:request", { route, outcome, seconds: (performance.now() - startedAt) / 1000 });
}
