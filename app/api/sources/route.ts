import { z } from "zod";
import { readJsonBody } from "@/lib/api/body";
import { json, parseQuery } from "@/lib/api/respond";
import { requireAdmin, requireReader } from "@/lib/auth/guard";
import { listSources } from "@/lib/dashboard/sources";
import { getDb } from "@/lib/db";
import { addSource } from "@/workers/admin/sources";
import { NewSourceBody } from "./sourceBody";
import { refusal } from "./sourceError";

export const dynamic = "force-dynamic";

const Query = z.object({}).strict();

/** GET /api/sources → { sources }: each source's health, breaker and last hour of fetching. */
export async function GET(request: Request): Promise<Response> {
  const query = parseQuery(request, Query);
  if (!query.ok) return query.response;
  const denied = await requireReader(request);
  if (denied) return denied;
  return json({ sources: await listSources(await getDb()) });
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
