import { z } from "zod";
import { readJsonBody } from "@/lib/api/body";
import { json, parseQuery } from "@/lib/api/respond";
import { requireAdmin, requireReader } from "@/lib/auth/guard";
import { getDb } from "@/lib/db";
import { id } from "@/lib/validation";
import { listDedupRuns, startDedupRun } from "@/workers/admin/dedupRerun";
import { dedupError } from "../errors";

export const dynamic = "force-dynamic";

const Query = z
  .object({
    before: id("a run id").optional(),
    limit: z.coerce.number().int().min(1).max(100).optional(),
  })
  .strict();

/**
 * GET /api/dedup/runs?before&limit → { runs: [Run], nextBefore, activeRunId }
 *   Run = { id, thresholds, dryRun, state: "running"|"finished"|"failed", actor, startedAt,
 *     endedAt, total, scanned, appear, go, change, applied, error, active }
 * Progress: scanned / total while scanning, applied / (appear + go + change) while applying.
 */
export async function GET(request: Request): Promise<Response> {
  const query = parseQuery(request, Query);
  if (!query.ok) return query.response;
  const denied = await requireReader(request);
  if (denied) return denied;
  return json(await listDedupRuns(await getDb(), query.value));
}

const Body = z.union([
  z.strictObject({
    dryRun: z.boolean(),
    /** Whole or partial thresholds over those in force (omitted: the ones in force). */
    thresholds: z.record(z.string(), z.unknown()).optional(),
  }),
  /** Apply a finished dry run's diff, with its thresholds. */
  z.strictObject({ applyRun: id("a run id") }),
]);

/**
 * POST /api/dedup/runs { dryRun, thresholds? } | { applyRun: dryRunId } → 202 { runId, auditId }:
 * the run goes on in the background (poll GET /api/dedup/runs/:id). A dry run records the links
 * that would appear, go or change and changes nothing; an apply makes them, then puts the
 * thresholds in force; it wakes nothing. Audited as dedup.rerun_dry_run / dedup.rerun_apply.
 * 400 naming the field; 404 applyRun unknown; 409 run_running (one at a time) or
 * not_a_finished_dry_run.
 */
export async function POST(request: Request): Promise<Response> {
  const auth = await requireAdmin(request);
  if (auth instanceof Response) return auth;
  const body = await readJsonBody(request, Body);
  if (!body.ok) return body.response;
  try {
    const v = body.value;
    const started = await startDedupRun(
      await getDb(),
      "applyRun" in v
        ? { dryRun: false, fromRun: v.applyRun, actor: auth.actor }
        : { dryRun: v.dryRun, thresholds: v.thresholds, actor: auth.actor },
    );
    return json(started, { status: 202 });
  } catch (err) {
    return dedupError(err);
  }
}
