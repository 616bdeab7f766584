import { z } from "zod";
import { json, parseQuery } from "@/lib/api/respond";
import { requireReader } from "@/lib/auth/guard";
import { getDb } from "@/lib/db";
import { id } from "@/lib/validation";
import { listReviews } from "@/workers/admin/dedup";

export const dynamic = "force-dynamic";

const Query = z
  .object({
    state: z.enum(["pending", "confirmed", "rejected", "superseded"]).optional(),
    before: id("a review id").optional(),
    limit: z.coerce.number().int().min(1).max(200).optional(),
  })
  .strict();

/**
 * GET /api/dedup/reviews?state=pending&before&limit → { reviews: [Review], nextBefore, pending }
 *   Review = { id, entryKey, candidateKey, stage, score, threshold, itemVersion,
 *     evidence (lib/dedup Evidence or null), state, createdAt, decidedAt, decidedBy,
 *     entry: Side, candidate: Side }
 *   Side = { entryKey, sourceId, title, summary, link, version, deleted }
 * Newest first; `pending` is the queue's depth.
 */
export async function GET(request: Request): Promise<Response> {
  const query = parseQuery(request, Query);
  if (!query.ok) return query.response;
  const denied = await requireReader(request);
  if (denied) return denied;
  return json(await listReviews(await getDb(), query.value));
}
