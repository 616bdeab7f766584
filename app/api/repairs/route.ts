import { z } from "zod";
import { readJsonBody } from "@/lib/api/body";
import { apiError, json, parseQuery } from "@/lib/api/respond";
import { requireAdmin, requireReader } from "@/lib/auth/guard";
import { listRepairRuns } from "@/lib/dashboard/repairs";
import { getDb } from "@/lib/db";
import { id } from "@/lib/validation";
import { RepairBusyError, startRepair } from "@/workers/admin/repairs";

export const dynamic = "force-dynamic";

const Query = z
  .object({
    before: id("a run id").optional(),
    limit: z.coerce.number().int().min(1).max(100).optional(),
  })
  .strict();

/**
 * GET /api/repairs?before&limit → { runs: [{id, actor, dryRun, status, startedAt, finishedAt,
 * rowsTotal, rowsExamined, rowsChanged, changes, error, active}], nextBefore, activeRunId }
 */
export async function GET(request: Request): Promise<Response> {
  const query = parseQuery(request, Query);
  if (!query.ok) return query.response;
  const denied = await requireReader(request);
  if (denied) return denied;
  return json(await listRepairRuns(await getDb(), query.value));
}

const Body = z.strictObject({ dryRun: z.boolean() });

/**
 * POST /api/repairs { dryRun } → 202 { runId, auditId }: the run goes on in the background and
 * writes its progress to repair_runs (poll GET /api/repairs/:id). 409 repair_running when one is.
 */
export async function POST(request: Request): Promise<Response> {
  const auth = await requireAdmin(request);
  if (auth instanceof Response) return auth;
  const body = await readJsonBody(request, Body);
  if (!body.ok) return body.response;
  try {
    const started = await startRepair(await getDb(), {
      dryRun: body.value.dryRun,
      actor: auth.actor,
    });
    return json(started, { status: 202 });
  } catch (err) {
    if (err instanceof RepairBusyError) return apiError(409, "repair_running", err.message);
    throw err;
  }
}
