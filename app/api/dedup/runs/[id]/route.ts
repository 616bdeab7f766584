import { z } from "zod";
import { apiError, json, parseParam, parseQuery } from "@/lib/api/respond";
import { requireReader } from "@/lib/auth/guard";
import { getDb } from "@/lib/db";
import { id as bigintId, text } from "@/lib/validation";
import { getDedupRun } from "@/workers/admin/dedupRerun";

export const dynamic = "force-dynamic";

const Query = z
  .object({
    /** The last entry key of the previous page. */
    after: text(200, { min: 1, trim: false }).optional(),
    limit: z.coerce.number().int().min(1).max(500).optional(),
    change: z.enum(["appear", "go", "change"]).optional(),
  })
  .strict();

/**
 * GET /api/dedup/runs/:id?after&limit&change → { run: Run, changes: [Change], nextAfter }
 *   Change = { entryKey, change: "appear"|"go"|"change",
 *     before: { matchedKey, duplicateOf, stage, score, threshold } | null,
 *     after: { matchedKey, stage, score, threshold, evidence, applied?, skipped? } | null }
 *   A "go" change's after is null, or { stage: "review", matchedKey, score, threshold,
 *   evidence } when the pair falls in the grey band (the apply opens a review for it). An apply
 *   marks each change `applied: true`, or `applied: false, skipped: why` (a null after becomes
 *   { applied, skipped? }). Paged by entry key. 404 no such run.
 */
export async function GET(
  request: Request,
  { params }: { params: Promise<{ id: string }> },
): Promise<Response> {
  const path = parseParam("id", (await params).id, bigintId("a run id"));
  if (!path.ok) return path.response;
  const query = parseQuery(request, Query);
  if (!query.ok) return query.response;
  const denied = await requireReader(request);
  if (denied) return denied;
  const run = await getDedupRun(await getDb(), path.value, query.value);
  if (!run) return apiError(404, "not_found", `no dedup run ${path.value}`);
  return json(run);
}
