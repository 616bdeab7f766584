import { z } from "zod";
import { readJsonBody } from "@/lib/api/body";
import { apiError, json } from "@/lib/api/respond";
import { requireAdmin, requireReader } from "@/lib/auth/guard";
import {
  CHAOS_STAGES,
  chaosEnabled,
  clearChaos,
  enqueueChaosProbes,
  listChaos,
  setChaos,
} from "@/lib/chaos";
import { writeAudit } from "@/lib/dashboard/audit";
import { getDb } from "@/lib/db";

export const dynamic = "force-dynamic";

const notFound = () => apiError(404, "not_found", "not found");

/** GET /api/chaos → { faults: [{stage, sourceId, permanent, since, hits}] }; 404 when chaos is off. */
export async function GET(request: Request): Promise<Response> {
  if (!chaosEnabled()) return notFound();
  const denied = await requireReader(request);
  if (denied) return denied;
  return json({ faults: listChaos() });
}

const Body = z.discriminatedUnion("action", [
  z.strictObject({
    action: z.literal("set"),
    stage: z.enum(CHAOS_STAGES),
    sourceId: z.string().trim().min(1).max(200),
    /** Park the job at once (PermanentJobError) instead of going through the retries. */
    permanent: z.boolean().default(true),
    /** Also put this many fetch jobs for the source on the queue now (see enqueueChaosProbes). */
    probes: z.number().int().min(0).max(100).default(0),
  }),
  z.strictObject({
    action: z.literal("clear"),
    stage: z.enum(CHAOS_STAGES).optional(),
    sourceId: z.string().trim().min(1).max(200).optional(),
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
