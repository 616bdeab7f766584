import { z } from "zod";
import { apiError, json, parseParam, parseQuery } from "@/lib/api/respond";
import { requireReader } from "@/lib/auth/guard";
import { sourceDetail } from "@/lib/dashboard/sources";
import { getDb } from "@/lib/db";
import { SourceIdParam } from "./param";

export const dynamic = "force-dynamic";

const Query = z.strictObject({ limit: z.coerce.number().int().min(1).max(500).default(50) });

/** GET /api/sources/:id?limit= → { source }: one source, its jobs, attempts and codes; 404 if unknown. */
export async function GET(
  request: Request,
  { params }: { params: Promise<{ id: string }> },
): Promise<Response> {
  const query = parseQuery(request, Query);
  if (!query.ok) return query.response;
  const denied = await requireReader(request);
  if (denied) return denied;
  const path = parseParam("id", (await params).id, SourceIdParam);
  if (!path.ok) return path.response;
  const id = path.value;
  const source = await sourceDetail(await getDb(), id, { limit: query.value.limit });
  if (!source) return apiError(404, "not_found", `no source "${id}"`);
  return json({ source });
}
