import type { ServerResponse } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import type { FaultTable } from "../faults";
import { SimError } from "../newsroom";
import type { SimSource } from "../sources";
import type { StoryDesk } from "./desk";

/**
 * The story API over HTTP, under `/stories-api` (the source's url):
 *
 *   GET /stories-api/v1/stories?ticker=ACME          → { data: [Story …] } (open stories only)
 *   GET /stories-api/v1/stories/:id                  → Story, 404 once closed or unknown
 *   GET /stories-api/v1/events?cursor=&tickers=&limit= → { data, next_cursor, has_more }, 410 for
 *                                                      an expired cursor, 400 for a malformed one
 *
 * The server applies the source's network faults (latency, 429, 503, blackhole, reset) before
 * this runs; `stale-reads` is applied here: the answer is computed from the state at request
 * start and sent `ms` later, so a read that began before a change answers after it.
 */

export const STORY_SOURCE_ID = "story-desk";
export const STORY_API_PATH = "stories-api";

// Catch-up every 3 minutes: webhooks carry the news, polling is the safety net under them.
const STORY_POLL_S = 180;

export function storySource(
  base: string,
  tickers: readonly string[],
  secrets: string[],
): SimSource {
  return {
    id: STORY_SOURCE_ID,
    name: "Story desk (story API)",
    kind: "story-api",
    url: `${base}/${STORY_API_PATH}`,
    allowPrivate: true,
    collectors: ["A"],
    pollIntervalSeconds: STORY_POLL_S,
    tickers: [...tickers],
    storyMode: "snapshot",
    webhookSecrets: [...secrets],
  };
}

interface Answer {
  status: number;
  body: unknown;
}

/** `rest` is the path after /stories-api, split. */
export async function serveStories(
  ctx: { desk: StoryDesk; faults: FaultTable; stopping: AbortSignal },
  rest: string[],
  res: ServerResponse,
  url: URL,
  send: (res: ServerResponse, status: number, body: unknown) => void,
): Promise<void> {
  const answer = read(ctx.desk, rest, url);
  const stale = ctx.faults.get(STORY_SOURCE_ID, "stale-reads");
  if (stale) {
    const slept = await sleep(stale.ms, true, { signal: ctx.stopping }).catch(() => false);
    if (!slept || res.destroyed) return;
  }
  send(res, answer.status, answer.body);
}

/** The answer as of now: computed before any stale-reads wait. */
function read(desk: StoryDesk, rest: string[], url: URL): Answer {
  try {
    return { status: 200, body: route(desk, rest, url) };
  } catch (err) {
    if (!(err instanceof SimError)) throw err;
    const code =
      (err as SimError & { code?: string }).code ??
      (err.status === 404 ? "not_found" : "bad_request");
    return { status: err.status, body: { error: { code, message: err.message } } };
  }
}

function route(desk: StoryDesk, rest: string[], url: URL): unknown {
  const [version, what, id, ...more] = rest;
  if (version === undefined) {
    return {
      name: "Story desk (simulated story API)",
      tickers: desk.tickers,
      endpoints: ["/v1/stories?ticker=", "/v1/stories/:id", "/v1/events?cursor=&tickers=&limit="],
    };
  }
  if (version === "v1" && what === "stories" && id === undefined) {
    const ticker = url.searchParams.get("ticker");
    if (!ticker) throw new SimError("ticker is required, as in ?ticker=ACME");
    return { data: desk.list(ticker) };
  }
  if (version === "v1" && what === "stories" && id !== undefined && more.length === 0) {
    const story = desk.story(id);
    if (!story) throw new SimError(`no open story ${id}`, 404);
    return story;
  }
  if (version === "v1" && what === "events" && id === undefined) {
    const rawLimit = url.searchParams.get("limit");
    const tickers = (url.searchParams.get("tickers") ?? "")
      .split(",")
      .map((t) => t.trim())
      .filter(Boolean);
    return desk.events({
      cursor: url.searchParams.get("cursor") || null,
      tickers,
      ...(rawLimit ? { limit: Number(rawLimit) } : {}),
    });
  }
  throw new SimError(`nothing at ${url.pathname}`, 404);
}
