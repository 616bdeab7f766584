import { json, parseParam } from "@/lib/api/respond";
import { requireAdmin } from "@/lib/auth/guard";
import { getDb } from "@/lib/db";
import { id as bigintId } from "@/lib/validation";
import { rejectReview } from "@/workers/admin/dedup";
import { dedupError } from "../../../errors";

export const dynamic = "force-dynamic";

/**
 * POST /api/dedup/reviews/:id/reject → { review: Review (state "rejected"), auditId }: the
 * pair is never merged by that stage; audited as dedup.review_reject. 404 no such review; 409
 * review_decided when it is not pending.
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
    return json(await rejectReview(await getDb(), path.value, auth.actor));
  } catch (err) {
    return dedupError(err);
  }
}
