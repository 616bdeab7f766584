import { z } from "zod";
import { json, parseQuery } from "@/lib/api/respond";
import { requireReader } from "@/lib/auth/guard";
import { queuesView } from "@/lib/dashboard/queues";
import { getDb } from "@/lib/db";

export const dynamic = "force-dynamic";

const Query = z.strictObject({ hours: z.coerce.number().int().min(1).max(24).default(1) });

/** GET /api/queues?hours=1..24 → { queues }: depth, lag over time, leases, workers. */
export async function GET(request: Request): Promise<Response> {
  const query = parseQuery(request, Query);
  if (!query.ok) return query.response;
  const denied = await requireReader(request);
  if (denied) return denied;
  return json({ queues: await queuesView(await getDb(), { hours: query.value.hours }) });
}
