import { z } from "zod";
import { readJsonBody } from "@/lib/api/body";
import { json } from "@/lib/api/respond";
import { requireAdmin, requireReader } from "@/lib/auth/guard";
import { getDb } from "@/lib/db";
import { DEFAULT_THRESHOLDS } from "@/lib/dedup";
import { readThresholds, updateThresholds } from "@/workers/admin/dedup";
import { dedupError } from "../errors";

export const dynamic = "force-dynamic";

/**
 * GET /api/dedup/settings → { thresholds: DedupThresholds, revision, updatedAt|null,
 * updatedBy|null, origin: "settings"|"default", defaults: DedupThresholds }
 *   DedupThresholds = { windowHours, retrieval: { radius, maxHamming }, near: { duplicate, review } }
 */
export async function GET(request: Request): Promise<Response> {
  const denied = await requireReader(request);
  if (denied) return denied;
  return json({ ...(await readThresholds(await getDb())), defaults: DEFAULT_THRESHOLDS });
}

const Body = z.strictObject({
  /** The whole thresholds object or only the fields that change (laid over those in force). */
  thresholds: z.record(z.string(), z.unknown()),
  /** The revision the form was loaded at: 409 stale_revision when another change came first. */
  expectedRevision: z.number().int().min(1).optional(),
});

/**
 * PUT /api/dedup/settings { thresholds, expectedRevision? } → { thresholds, revision,
 * updatedAt, updatedBy, origin: "settings", auditId }. 400 naming the field
 * ("thresholds.near.review: …"); 409 stale_revision. Audited as dedup.thresholds (before/after).
 * Takes effect for the stage's next decisions; old links move only with a re-run (POST runs).
 */
export async function PUT(request: Request): Promise<Response> {
  const auth = await requireAdmin(request);
  if (auth instanceof Response) return auth;
  const body = await readJsonBody(request, Body);
  if (!body.ok) return body.response;
  try {
    return json(await updateThresholds(await getDb(), body.value, auth.actor));
  } catch (err) {
    return dedupError(err);
  }
}
