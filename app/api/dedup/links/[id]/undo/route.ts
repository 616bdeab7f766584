import { json, parseParam } from "@/lib/api/respond";
import { requireAdmin } from "@/lib/auth/guard";
import { getDb } from "@/lib/db";
import { id as bigintId } from "@/lib/validation";
import { undoLink } from "@/workers/admin/dedup";
import { dedupError } from "../../../errors";

export const dynamic = "force-dynamic";

/**
 * POST /api/dedup/links/:id/undo → { linkId, entryKey, clusterId, dissolved, elected|null,
 * rejectedReviewIds: [id], auditId }: the item leaves its cluster (the link ends "undone"), and
 * the pair is recorded as a rejected review so the same stage never merges it again; audited as
 * dedup.undo with before/after. 404 no such link; 409 link_ended (already ended).
 */
export async function POST(
  request: Request,
  { params }: { params: Promise<{ id: string }> },
): Promise<Response> {
  const auth = await requireAdmin(request);
  if (auth instanceof Response) return auth;
  const path = parseParam("id", (await params).id, bigintId("a link id"));
  if (!path.ok) return path.response;
  try {
    return json(await undoLink(await getDb(), { linkId: path.value }, auth.actor));
  } catch (err) {
    return dedupError(err);
  }
}
