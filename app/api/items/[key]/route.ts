import { z } from "zod";
import { apiError, json, parseQuery } from "@/lib/api/respond";
import { requireReader } from "@/lib/auth/guard";
import { getItem } from "@/lib/dashboard/items";
import { getDb } from "@/lib/db";
import { id } from "@/lib/validation";

export const dynamic = "force-dynamic";

const Query = z
  .object({
    after: id("an observation id").optional(),
  })
  .strict();

/**
 * GET /api/items/:key?after → { item: current row (+ tombstone, first-seen, dedup link),
 * observations: [{id, observedAt, receivedAt, sourceId, collector, origin, kind, revision,
 * result, reason, version, title, payload}], observationCount, nextAfter, versions }; 404 when
 * there is no such item.
 */
export async function GET(
  request: Request,
  { params }: { params: Promise<{ key: string }> },
): Promise<Response> {
  const { key } = await params;
  if (!/^[0-9a-f]{64}$/.test(key)) {
    return apiError(400, "bad_request", "key: must be an entry key (64 hex digits)");
  }
  const query = parseQuery(request, Query);
  if (!query.ok) return query.response;
  const denied = await requireReader(request);
  if (denied) return denied;
  const item = await getItem(await getDb(), key, { after: query.value.after });
  if (!item) return apiError(404, "not_found", "no item with this key");
  return json(item);
}
