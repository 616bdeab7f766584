import { z } from "zod";
import { RANGE_HOURS, TIME_RANGES } from "@/components/ui/timeRanges";
import { readJsonBody } from "@/lib/api/body";
import { apiError, json, parseParam, parseQuery } from "@/lib/api/respond";
import { requireAdmin, requireReader } from "@/lib/auth/guard";
import { sourceDetail } from "@/lib/dashboard/sources";
import { getDb } from "@/lib/db";
import { editSource, removeSource } from "@/workers/admin/sources";
import { SourceEditBody } from "../sourceBody";
import { refusal } from "../sourceError";
import { SourceIdParam } from "./param";

export const dynamic = "force-dynamic";

const Query = z.strictObject({
  limit: z.coerce.number().int().min(1).max(500).default(50),
  range: z.enum(TIME_RANGES).optional(),
});

type Params = { params: Promise<{ id: string }> };

/**
 * GET /api/sources/:id?limit=&range=1h|6h|24h|7d → { source }: one source, its jobs, its latest
 * attempts, and its attempts (at most 200 buckets) and outcomes by code over the range; without
 * one, attempts over the hour and codes over the day (source.fetching says which). 404 if unknown.
 */
export async function GET(request: Request, { params }: Params): Promise<Response> {
  const query = parseQuery(request, Query);
  if (!query.ok) return query.response;
  const denied = await requireReader(request);
  if (denied) return denied;
  const path = parseParam("id", (await params).id, SourceIdParam);
  if (!path.ok) return path.response;
  const id = path.value;
  const { limit, range } = query.value;
  const hours = range ? RANGE_HOURS[range] : undefined;
  const source = await sourceDetail(await getDb(), id, { limit, hours });
  if (!source) return apiError(404, "not_found", `no source "${id}"`);
  return json({ source });
}

/**
 * PATCH /api/sources/:id { name?, url?, pollIntervalSeconds?, collectors?, allowPrivate?,
 * tickers?, … } → { result }: edits a dashboard source, audited (a ticker added is loaded at
 * once). 409 file_source for a source from the sources file, 409 removed, 404 unknown.
 */
export async function PATCH(request: Request, { params }: Params): Promise<Response> {
  const auth = await requireAdmin(request);
  if (auth instanceof Response) return auth;
  const path = parseParam("id", (await params).id, SourceIdParam);
  if (!path.ok) return path.response;
  const body = await readJsonBody(request, SourceEditBody);
  if (!body.ok) return body.response;
  try {
    return json({ result: await editSource(await getDb(), path.value, body.value, auth.actor) });
  } catch (err) {
    return refusal(err);
  }
}

/**
 * DELETE /api/sources/:id → { result }: removes a dashboard source, keeping its history (switched
 * off and marked removed; items, events and audit stay). 409 file_source, 404 unknown.
 */
export async function DELETE(request: Request, { params }: Params): Promise<Response> {
  const auth = await requireAdmin(request);
  if (auth instanceof Response) return auth;
  const path = parseParam("id", (await params).id, SourceIdParam);
  if (!path.ok) return path.response;
  try {
    return json({ result: await removeSource(await getDb(), path.value, auth.actor) });
  } catch (err) {
    return refusal(err);
  }
}
