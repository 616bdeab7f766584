import { json, parseQuery } from "@/lib/api/respond";
import { requireReader } from "@/lib/auth/guard";
import { getDb } from "@/lib/db";
import { deadLetterStats } from "@/workers/queue/deadLetters";
import { badSelection, FilterQuery, toFilter } from "../filter";

export const dynamic = "force-dynamic";

/**
 * GET /api/dead-letters/groups?stage&source&code&fingerprint&from&to →
 * { depth, oldestAgeSeconds, byStage: [{stage, depth, oldestAgeSeconds}],
 *   groups: [{fingerprint, stage, code, count, sampleMessage, firstSeen, lastSeen}] }
 */
export async function GET(request: Request): Promise<Response> {
  const query = parseQuery(request, FilterQuery.strict());
  if (!query.ok) return query.response;
  const denied = await requireReader(request);
  if (denied) return denied;
  try {
    return json(await deadLetterStats(await getDb(), toFilter(query.value), { groupLimit: 100 }));
  } catch (err) {
    return badSelection(err);
  }
}
