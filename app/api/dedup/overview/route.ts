import { z } from "zod";
import { json, parseQuery } from "@/lib/api/respond";
import { requireReader } from "@/lib/auth/guard";
import { dedupOverview, isWindowHours } from "@/lib/dashboard/dedup";
import { getDb } from "@/lib/db";

export const dynamic = "force-dynamic";

const Query = z
  .object({
    hours: z.coerce.number().refine(isWindowHours, "must be 6, 24 or 72").optional(),
  })
  .strict();

/**
 * GET /api/dedup/overview?hours=6|24|72 → { now, hours, bucketSeconds, decisions: { buckets:
 * [{t, url, exact, near, meaning, review, unique}], totals, decided }, latency: { buckets: [{t,
 * n, p50, p95}], p50, p95, p99 } (ms), sources: [{sourceId, sourceName, decided, duplicates,
 * decidedDay, duplicatesDay}], clusters: { live, largest, newest }, reviews: { pending,
 * oldestPendingAt }, lastDecisionAt } (lib/dashboard/dedup.ts DedupOverview).
 */
export async function GET(request: Request): Promise<Response> {
  const query = parseQuery(request, Query);
  if (!query.ok) return query.response;
  const denied = await requireReader(request);
  if (denied) return denied;
  const hours = query.value.hours;
  return json(await dedupOverview(await getDb(), hours && isWindowHours(hours) ? { hours } : {}));
}
