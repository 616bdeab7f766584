import { z } from "zod";
import { json, parseQuery } from "@/lib/api/respond";
import { requireReader } from "@/lib/auth/guard";
import { KNOWN_AUDIT_ACTIONS, listAudit } from "@/lib/dashboard/audit";
import { getDb } from "@/lib/db";
import { id, text } from "@/lib/validation";

export const dynamic = "force-dynamic";

const Query = z
  .object({
    action: text(200).optional(),
    before: id("an audit entry id").optional(),
    limit: z.coerce.number().int().min(1).max(200).optional(),
  })
  .strict();

/**
 * GET /api/audit?action&before&limit → { entries: [{id, at, actor, action, target, dryRun,
 * affected, detail}], nextBefore, actions } newest first; `action` exact or a prefix ("dead_letters.*").
 */
export async function GET(request: Request): Promise<Response> {
  const query = parseQuery(request, Query);
  if (!query.ok) return query.response;
  const denied = await requireReader(request);
  if (denied) return denied;
  const page = await listAudit(await getDb(), query.value);
  return json({ ...page, actions: KNOWN_AUDIT_ACTIONS });
}
