import { json, parseParam } from "@/lib/api/respond";
import { requireAdmin } from "@/lib/auth/guard";
import { getDb } from "@/lib/db";
import { id as bigintId } from "@/lib/validation";
import { confirmReview } from "@/workers/admin/dedup";
import { dedupError } from "../../../errors";

export const dynamic = "force-dynamic";

/**
 * POST /api/dedup/reviews/:id/confirm → { review: Review (state "confirmed"), auditId,
 * link: { clusterId, canonicalKey, linkId } }: the item is linked to the candidate with stage
 * "review", decided by the admin; audited as dedup.review_confirm. 404 no such review; 409
 * review_decided (not pending) or review_superseded (the item changed version or either side
 * was retracted since: the review is marked superseded).
 */
export async function POST(
  request: Request,
  { params }: { params: Promise<{ id: string }> },
): Promise<Response> {
  const auth = await requireAdmin(request);
  if (auth instanceof Response) return auth;
  const path = parseParam("id", (await params).id, bigintId("a review id"));
  if (!path.ok) return path.response;
  try {
    return json(await confirmReview(await getDb(), path.value, auth.actor));
  } catch (err) {
    return dedupError(err);
  }
}
