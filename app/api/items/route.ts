import { z } from "zod";
import { apiError, json, parseQuery } from "@/lib/api/respond";
import { requireReader } from "@/lib/auth/guard";
import { BadCursorError, searchItems } from "@/lib/dashboard/items";
import { getDb } from "@/lib/db";
import { text } from "@/lib/validation";

export const dynamic = "force-dynamic";

const Query = z
  .object({
    q: text(200).optional(),
    source: text(200).optional(),
    cursor: z.string().max(400).optional(),
    limit: z.coerce.number().int().min(1).max(200).optional(),
  })
  .strict();

/**
 * GET /api/items?q&source&cursor&limit → { items: [{entryKey, sourceId, sourceName, title, link,
 * version, state, quality, lastResult, firstSeenAt, updatedAt}], nextCursor, scanned, scanWindow,
 * windowEnded }. Newest update first; one request examines at most scanWindow rows.
 */
export async function GET(request: Request): Promise<Response> {
  const query = parseQuery(request, Query);
  if (!query.ok) return query.response;
  const denied = await requireReader(request);
  if (denied) return denied;
  const { q, source, cursor, limit } = query.value;
  try {
    return json(await searchItems(await getDb(), { q, sourceId: source, cursor, limit }));
  } catch (err) {
    if (err instanceof BadCursorError) return apiError(400, "bad_request", "cursor: not valid");
    throw err;
  }
}
