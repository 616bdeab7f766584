import { z } from "zod";
import { apiError, json, parseQuery } from "@/lib/api/respond";
import { requireReader } from "@/lib/auth/guard";
import { getRepairRun } from "@/lib/dashboard/repairs";
import { getDb } from "@/lib/db";

export const dynamic = "force-dynamic";

const Query = z
  .object({
    after: z
      .string()
      .regex(/^[1-9]\d{0,18}$/)
      .optional(),
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
  const { id } = await params;
  if (!/^[1-9]\d{0,18}$/.test(id)) return apiError(400, "bad_request", "id: must be a run id");
  const query = parseQuery(request, Query);
  if (!query.ok) return query.response;
  const denied = await requireReader(request);
  if (denied) return denied;
  const run = await getRepairRun(await getDb(), id, query.value);
  if (!run) return apiError(404, "not_found", `no repair run ${id}`);
  return json(run);
}
