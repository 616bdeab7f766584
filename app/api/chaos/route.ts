import { z } from "zod";
import { readJsonBody } from "@/lib/api/body";
import { apiError, json, parseQuery } from "@/lib/api/respond";
import { requireAdmin, requireReader } from "@/lib/auth/guard";
import { getDb } from "@/lib/db";
import { text } from "@/lib/validation";
import { writeAudit } from "@/workers/admin/audit";
import {
  CHAOS_STAGES,
  chaosEnabled,
  clearChaos,
  enqueueChaosProbes,
  listChaos,
  probeFates,
  setChaos,
} from "@/workers/chaos/chaos";

export const dynamic = "force-dynamic";

const notFound = () => apiError(404, "not_found", "not found");

const Query = z.strictObject({
  /** Up to 100 probe job ids, comma-separated: what became of each (see probeFates). */
  probes: z
    .string()
    .optional()
    .transform((v) => (v ? v.split(",") : []))
    // Up to 18 digits: always within a bigint, so the id cast in SQL cannot fail.
    .pipe(z.array(z.string().regex(/^[1-9][0-9]{0,17}$/, "must be a job id")).max(100)),
});

/**
 * GET /api/chaos[?probes=id,…] → { faults: [{stage, sourceId, permanent, since, hits}],
 * probes: [{id, state, claims, failures}] }; 404 when chaos is off.
 */
export async function GET(request: Request): Promise<Response> {
  if (!chaosEnabled()) return notFound();
  const denied = await requireReader(request);
  if (denied) return denied;
  const query = parseQuery(request, Query);
  if (!query.ok) return query.response;
  const probes = await probeFates(await getDb(), query.value.probes);
  return json({ faults: listChaos(), probes });
}

const Body = z.discriminatedUnion("action", [
  z.strictObject({
    action: z.literal("set"),
    stage: z.enum(CHAOS_STAGES),
    sourceId: text(200, { min: 1 }),
    /** Park the job at once (PermanentJobError) instead of going through the retries. */
    permanent: z.boolean().default(true),
    /** Also put this many fetch jobs for the source on the queue now (see enqueueChaosProbes). */
    probes: z.number().int().min(0).max(100).default(0),
  }),
  z.strictObject({
    action: z.literal("clear"),
    stage: z.enum(CHAOS_STAGES).optional(),
    sourceId: text(200, { min: 1 }).optional(),
  }),
]);

/**
 * POST /api/chaos { action: "set", stage, sourceId, permanent?, probes? } → { fault, probeIds }
 * | { action: "clear", stage?, sourceId? } → { cleared }. Admin only, audited (chaos.set /
 * chaos.clear); 404 when WIREWATCH_CHAOS is off.
 */
export async function POST(request: Request): Promise<Response> {
  if (!chaosEnabled()) return notFound();
  const auth = await requireAdmin(request);
  if (auth instanceof Response) return auth;
  const body = await readJsonBody(request, Body);
  if (!body.ok) return body.response;
  const db = await getDb();
  const b = body.value;
  if (b.action === "set") {
    const fault = setChaos(b);
    const probeIds = b.probes > 0 ? await enqueueChaosProbes(db, b.sourceId, b.probes) : [];
    await writeAudit(db, {
      actor: auth.actor,
      action: "chaos.set",
      target: { stage: b.stage, sourceId: b.sourceId },
      affected: probeIds.length,
      detail: { permanent: fault.permanent, probeIds },
    });
    return json({ fault, probeIds });
  }
  const cleared = clearChaos(b.stage, b.sourceId);
  await writeAudit(db, {
    actor: auth.actor,
    action: "chaos.clear",
    target: { stage: b.stage ?? null, sourceId: b.sourceId ?? null },
    affected: cleared,
  });
  return json({ cleared });
}
