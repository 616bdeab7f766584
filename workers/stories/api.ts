import { type HttpGetOptions, httpGet } from "@/workers/fetcher/httpGet";
import {
  describeIssues,
  eventsPageSchema,
  type Story,
  storiesListSchema,
  storySchema,
} from "./events";

/** One page of GET /v1/events: events are left unparsed, each is validated on its own. */
export interface EventsPage {
  data: unknown[];
  next_cursor: string;
  has_more: boolean;
}

/** The story API as the consumer uses it (seed 001); the HTTP client below, or a test double. */
export interface StoryApi {
  /** The story's current state; null when the API answers 404 (closed, merged away or unknown). */
  getStory(id: string): Promise<Story | null>;
  /** A ticker's open stories. */
  listStories(ticker: string): Promise<Story[]>;
  /** Events after the cursor (null: from the start of the window); a cursor the API answers
   *  410 or 400 for → CursorExpiredError. */
  listEvents(cursor: string | null, tickers: readonly string[]): Promise<EventsPage>;
}

/**
 * The API refused the cursor: 410 (older than its window) or 400 (not one it issued: an API that
 * restarted with an empty log, as the embedded simulator does with the app). Either way the copy
 * cannot continue from it, so reload in full and start from the beginning of the window.
 */
export class CursorExpiredError extends Error {
  constructor(message = "the catch-up cursor has expired (410)") {
    super(message);
    this.name = "CursorExpiredError";
  }
}

/** The API answered something we cannot use (a status, or a body that does not parse). */
export class StoryApiError extends Error {
  constructor(
    message: string,
    readonly status: number | null = null,
  ) {
    super(message);
    this.name = "StoryApiError";
  }
}

export interface HttpStoryApiOptions extends Pick<HttpGetOptions, "allowPrivate" | "limits"> {
  /** Events per page asked for. */
  pageSize?: number;
}

/**
 * The story API over HTTP through wirewatch's guarded fetcher (SSRF check at connect time,
 * explicit timeouts, body cap). `baseUrl` is the API root: …/v1/stories lives under it.
 */
export function httpStoryApi(baseUrl: string, options: HttpStoryApiOptions): StoryApi {
  const root = baseUrl.endsWith("/") ? baseUrl : `${baseUrl}/`;
  const get = async (path: string, query: Record<string, string> = {}) => {
    const url = new URL(path, root);
    for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
    const res = await httpGet(url.href, {
      allowPrivate: options.allowPrivate,
      limits: options.limits,
      headers: { accept: "application/json" },
    });
    return { status: res.status, url: url.href, body: res.body };
  };
  const json = (url: string, body: Buffer): unknown => {
    try {
      return JSON.parse(body.toString("utf8"));
    } catch {
      throw new StoryApiError(`${url}: the answer is not JSON`);
    }
  };
  const expectOk = (r: { status: number; url: string }) => {
    if (r.status !== 200) throw new StoryApiError(`${r.url} answered ${r.status}`, r.status);
  };
  return {
    async getStory(id) {
      const r = await get(`v1/stories/${encodeURIComponent(id)}`);
      if (r.status === 404) return null;
      expectOk(r);
      const parsed = storySchema.safeParse(json(r.url, r.body));
      if (!parsed.success) {
        throw new StoryApiError(`${r.url}: not a story (${describeIssues(parsed.error)})`);
      }
      if (parsed.data.id !== id)
        throw new StoryApiError(`${r.url}: answered story ${parsed.data.id}`);
      return parsed.data;
    },
    async listStories(ticker) {
      const r = await get("v1/stories", { ticker });
      expectOk(r);
      const list = storiesListSchema.safeParse(json(r.url, r.body));
      if (!list.success) throw new StoryApiError(`${r.url}: ${describeIssues(list.error)}`);
      return list.data.data.map((item, i) => {
        const story = storySchema.safeParse(item);
        if (!story.success) {
          throw new StoryApiError(`${r.url}: data[${i}]: ${describeIssues(story.error)}`);
        }
        return story.data;
      });
    },
    async listEvents(cursor, tickers) {
      const query: Record<string, string> = { limit: String(options.pageSize ?? 200) };
      if (cursor) query.cursor = cursor;
      if (tickers.length > 0) query.tickers = tickers.join(",");
      const r = await get("v1/events", query);
      if (r.status === 410) throw new CursorExpiredError(`${r.url} answered 410: cursor expired`);
      // Without a cursor a 400 is about the rest of the query: reloading would not change it.
      if (r.status === 400 && cursor) {
        throw new CursorExpiredError(`${r.url} answered 400: cursor rejected`);
      }
      expectOk(r);
      const page = eventsPageSchema.safeParse(json(r.url, r.body));
      if (!page.success) throw new StoryApiError(`${r.url}: ${describeIssues(page.error)}`);
      return page.data;
    },
  };
}
