import { z } from "zod";
import { apiError, json, parseQuery } from "@/lib/api/respond";
import { requireReader } from "@/lib/auth/guard";
import { BadDedupCursorError, listClusters } from "@/lib/dashboard/dedup";
import { getDb } from "@/lib/db";

export const dynamic = "force-dynamic";

const Query = z
  .object({
    order: z.enum(["largest", "newest"]).optional(),
    cursor: z.string().max(40).optional(),
    limit: z.coerce.number().int().min(1).max(100).optional(),
  })
  .strict();

/**
 * GET /api/dedup/clusters?order=largest|newest&cursor&limit → { clusters: [{id, canonicalKey,
 * canonicalTitle, canonicalSource, members, outlets, firstSeenAt, createdAt, updatedAt,
 * dissolvedAt}], nextCursor }: live clusters only; 400 for a cursor it did not make.
 */
export async function GET(request: Request): Promise<Response> {
  const query = parseQuery(request, Query);
  if (!query.ok) return query.response;
  const denied = await requireReader(request);
  if (denied) return denied;
  try {
    return json(await listClusters(await getDb(), query.value));
  } catch (err) {
    if (err instanceof BadDedupCursorError)
      return apiError(400, "bad_request", "cursor: not valid");
    throw err;
  }
}
