import { z } from "zod";
import { apiError, json, parseParam, parseQuery } from "@/lib/api/respond";
import { requireReader } from "@/lib/auth/guard";
import { getRepairRun } from "@/lib/dashboard/repairs";
import { getDb } from "@/lib/db";
import { id as bigintId } from "@/lib/validation";

export const dynamic = "force-dynamic";

const Query = z
  .object({
    after: bigintId("a change id").optional(),
    limit: z.coerce.number().int().min(1).max(500).optional(),
  })
  .strict();

/**
 * GET /api/repairs/:id?after&limit → { run, changes: [{id, entryKey, applied, diff: {field:
 * {from, to}}}], nextAfter }; 404 when there is no such run.
 */
export async function GET(
  request: Request,
  { params }: { params: Promise<{ id: string }> },
): Promise<Response> {
  const path = parseParam("id", (await params).id, bigintId("a run id"));
  if (!path.ok) return path.response;
  const id = path.value;
  const query = parseQuery(request, Query);
  if (!query.ok) return query.response;
  const denied = await requireReader(request);
  if (denied) return denied;
  const run = await getRepairRun(await getDb(), id, query.value);
  if (!run) return apiError(404, "not_found", `no repair run ${id}`);
  return json(run);
}
