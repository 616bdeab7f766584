import { z } from "zod";
import { apiError, json, parseQuery } from "@/lib/api/respond";
import { requireReader } from "@/lib/auth/guard";
import { sourceDetail } from "@/lib/dashboard/sources";
import { getDb } from "@/lib/db";

export const dynamic = "force-dynamic";

const Query = z.object({ limit: z.coerce.number().int().min(1).max(500).default(50) });

/** GET /api/sources/:id?limit= → { source }: one source, its jobs, attempts and codes; 404 if unknown. */
export async function GET(
  request: Request,
  { params }: { params: Promise<{ id: string }> },
): Promise<Response> {
  const query = parseQuery(request, Query);
  if (!query.ok) return query.response;
  const denied = await requireReader(request);
  if (denied) return denied;
  const { id } = await params;
  const source = await sourceDetail(await getDb(), id, { limit: query.value.limit });
  if (!source) return apiError(404, "not_found", `no source "${id}"`);
  return json({ source });
}
