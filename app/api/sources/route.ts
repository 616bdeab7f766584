import { z } from "zod";
import { readJsonBody } from "@/lib/api/body";
import { apiError, json, parseQuery } from "@/lib/api/respond";
import { requireAdmin, requireReader } from "@/lib/auth/guard";
import {
  BadSourceCursorError,
  BREAKER_STATES,
  SOURCE_KINDS,
  SOURCE_SORTS,
  SOURCES_MAX_LIMIT,
} from "@/lib/dashboard/sourceList";
import { listSources } from "@/lib/dashboard/sources";
import { getDb } from "@/lib/db";
import { HEALTH_STATES } from "@/lib/health";
import { text } from "@/lib/validation";
import { addSource } from "@/workers/admin/sources";
import { NewSourceBody } from "./sourceBody";
import { refusal } from "./sourceError";

export const dynamic = "force-dynamic";

const Query = z
  .object({
    limit: z.coerce.number().int().min(1).max(SOURCES_MAX_LIMIT).optional(),
    cursor: z.string().max(2000).optional(),
    sort: z.enum(SOURCE_SORTS).optional(),
    dir: z.enum(["asc", "desc"]).optional(),
    kind: z.enum(SOURCE_KINDS).optional(),
    health: z.enum(HEALTH_STATES).optional(),
    breaker: z.enum(BREAKER_STATES).optional(),
    q: text(200).optional(),
  })
  .strict();

/**
 * GET /api/sources?limit&cursor&sort=name|health|errorRate|lastPolled&dir=asc|desc&kind&health
 * &breaker&q → { sources, nextCursor }: one page (default 50, at most 200) of sources with their
 * health, breaker and last hour of fetching, filtered and ordered in the database. 400 for a
 * value it does not know or a cursor made for another order.
 */
export async function GET(request: Request): Promise<Response> {
  const query = parseQuery(request, Query);
  if (!query.ok) return query.response;
  const denied = await requireReader(request);
  if (denied) return denied;
  try {
    return json(await listSources(await getDb(), query.value));
  } catch (err) {
    if (err instanceof BadSourceCursorError) {
      return apiError(400, "bad_request", `cursor: ${err.message}`);
    }
    throw err;
  }
}

/**
 * POST /api/sources { url, kind?, id?, name?, pollIntervalSeconds?, collectors?, allowPrivate?,
 * tickers?, storyMode?, webhookSecrets? } → 201 { result: { sourceId, affected, auditId, message } }:
 * adds a dashboard source, audited; its first poll is due at once. 400 bad field, 409 id or URL
 * already a source, 422 a URL the SSRF guard refuses.
 */
export async function POST(request: Request): Promise<Response> {
  const auth = await requireAdmin(request);
  if (auth instanceof Response) return auth;
  const body = await readJsonBody(request, NewSourceBody);
  if (!body.ok) return body.response;
  try {
    return json(
      { result: await addSource(await getDb(), body.value, auth.actor) },
      { status: 201 },
    );
  } catch (err) {
    return refusal(err);
  }
}
