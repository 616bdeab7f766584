import { z } from "zod";
import { apiError, parseParam, parseQuery } from "../api/respond";
import { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT, ReadModelKeyError, STORY_ID } from "./keys";
import { publicRateLimit } from "./rateLimit";
import { readModel, recordRequest, type ServeResult } from "./serve";

/**
 * How the public API's answers may be kept: by any shared cache (a CDN, a reverse proxy) for 15 s,
 * then served stale for another 60 s while one request revalidates (with the ETag: a 304 costs
 * the origin a store read and no body), and for 10 minutes when the origin fails. 15 s is well
 * under the build interval's worst case a reader notices (a retraction gone within ~20 s) and,
 * at 400 req/s on one URL, turns 6,000 requests into one per edge node.
 */
export const PUBLIC_CACHE_CONTROL =
  "public, s-maxage=15, stale-while-revalidate=60, stale-if-error=600";

type Route = "list" | "story";

/**
 * A payload answer as bytes and headers: what the route handlers wrap in a Response and the
 * direct path (directPath.ts) writes to the socket without one. Every other answer (400, 404,
 * 429, 503) is a Response from lib/api/respond.ts.
 */
export interface ReadAnswer {
  status: 200 | 304;
  headers: Record<string, string>;
  body: Uint8Array | null;
}

export type PublicAnswer = ReadAnswer | Response;

const ListQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(MAX_PAGE_LIMIT).default(DEFAULT_PAGE_LIMIT),
    category: z.string().max(40).optional(),
    lang: z.string().max(40).optional(),
    cursor: z.string().max(512).optional(),
  })
  .strict();

const StoryId = z.string().regex(STORY_ID, "must be a story id (64 hex characters)");

/** GET /api/news: the list page a request asks for (app/api/news/route.ts). */
export async function listAnswer(request: Request): Promise<PublicAnswer> {
  const startedAt = performance.now();
  const limited = refuseOverLimit(request, "list", startedAt);
  if (limited) return limited;
  const query = parseQuery(request, ListQuery);
  if (!query.ok) return query.response;
  const { limit, category, lang, cursor } = query.value;
  try {
    const result = await readModel().getList({ category, lang }, limit, cursor);
    return readAnswer(request, result, "list", startedAt);
  } catch (err) {
    return keyErrorResponse(err);
  }
}

/** GET /api/news/{id}, the id as the path gave it, decoded (app/api/news/[id]/route.ts). */
export async function storyAnswer(request: Request, rawId: string): Promise<PublicAnswer> {
  const startedAt = performance.now();
  const limited = refuseOverLimit(request, "story", startedAt);
  if (limited) return limited;
  const id = parseParam("id", rawId, StoryId);
  if (!id.ok) return id.response;
  return readAnswer(request, await readModel().getStory(id.value), "story", startedAt);
}

/** An answer as a Response (the route handlers). */
export function toResponse(answer: PublicAnswer): Response {
  if (answer instanceof Response) return answer;
  return new Response(answer.body as Uint8Array<ArrayBuffer> | null, {
    status: answer.status,
    headers: answer.headers,
  });
}

/** The 429 for a client past WIREWATCH_PUBLIC_RATE_LIMIT, or null. */
export function refuseOverLimit(
  request: Request,
  route: Route,
  startedAt: number,
): Response | null {
  const wait = publicRateLimit(request);
  if (wait === null) return null;
  recordRequest(route, "rate_limited", startedAt);
  return apiError(429, "rate_limited", `too many requests; try again in ${wait} s`, {
    "retry-after": String(wait),
  });
}

/** A bad filter or cursor (ReadModelKeyError) as a 400; anything else is rethrown. */
export function keyErrorResponse(err: unknown): Response {
  if (err instanceof ReadModelKeyError) return apiError(400, err.code, err.message);
  throw err;
}

/**
 * The answer for what the read model served: the payload's bytes as they were built with their
 * strong ETag, or 304 when the client holds them; 404 / 410 / 503 when there is nothing to send.
 *
 * No Vary: the body depends on the URL alone (no cookie, no Accept-Language). When `next start`
 * compresses an answer it adds `Vary: Accept-Encoding` itself. The model's age goes in
 * X-Model-Age, not Age: Age is a cache's own clock (RFC 9111 §5.1), and an origin saying
 * Age ≥ 15 would make every shared cache treat the answer as stale on arrival whenever the model
 * is older than s-maxage, which a quiet news hour always makes it.
 */
function readAnswer(
  request: Request,
  result: ServeResult,
  route: Route,
  startedAt: number,
): PublicAnswer {
  if (result.payload === null) {
    recordRequest(route, result.outcome, startedAt);
    if (result.outcome === "error") {
      return apiError(503, result.code, result.message, { "retry-after": "2" });
    }
    return apiError(result.code === "cursor_expired" ? 410 : 404, result.code, result.message);
  }
  const { payload, outcome, ageMs } = result;
  const headers: Record<string, string> = {
    "cache-control": PUBLIC_CACHE_CONTROL,
    etag: payload.etag,
    "x-model-version": String(payload.modelVersion),
    "x-model-age": String(Math.floor(ageMs / 1000)),
    "x-cache": outcome,
  };
  if (matchesIfNoneMatch(request.headers.get("if-none-match"), payload.etag)) {
    recordRequest(route, "not_modified", startedAt);
    return { status: 304, headers, body: null };
  }
  headers["content-type"] = "application/json; charset=utf-8";
  recordRequest(route, outcome, startedAt);
  return { status: 200, headers, body: payload.body };
}

/**
 * If-None-Match uses the weak comparison (RFC 9110 §13.1.2): `W/"x"` matches `"x"`, `*` matches
 * any current representation, and the header may list several tags.
 */
export function matchesIfNoneMatch(header: string | null, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === "*") return true;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, "");
  const mine = opaque(etag);
  return (header.match(/(?:W\/)?"[^"]*"/g) ?? []).some((tag) => opaque(tag) === mine);
}
