import { apiError, json, parseParam } from "@/lib/api/respond";
import { requireReader } from "@/lib/auth/guard";
import { getCluster } from "@/lib/dashboard/dedup";
import { getDb } from "@/lib/db";
import { id as bigintId } from "@/lib/validation";

export const dynamic = "force-dynamic";

/**
 * GET /api/dedup/clusters/:id → { cluster, members: [{entryKey, sourceId, sourceName, title,
 * link, firstSeenAt, canonical, live, outcome, linkedBy: {id, stage, score, threshold,
 * matchedKey, matchedTitle, evidence: {shared, phrases, onlyHere, onlyThere, distance, raw},
 * decidedAt, decidedBy, …} | null}], endedLinks, events } (lib/dashboard/dedup.ts
 * ClusterDetail); 404 when there is no such cluster. A dissolved cluster is still answered.
 */
export async function GET(
  request: Request,
  { params }: { params: Promise<{ id: string }> },
): Promise<Response> {
  const path = parseParam("id", (await params).id, bigintId("a cluster id"));
  if (!path.ok) return path.response;
  const denied = await requireReader(request);
  if (denied) return denied;
  const cluster = await getCluster(await getDb(), path.value);
  if (!cluster) return apiError(404, "not_found", `no cluster ${path.value}`);
  return json(cluster);
}
