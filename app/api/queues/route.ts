import { z } from "zod";
import { json, parseQuery } from "@/lib/api/respond";
import { requireReader } from "@/lib/auth/guard";
import { queueFlow, retryingJobs } from "@/lib/dashboard/queueFlow";
import { queuesView } from "@/lib/dashboard/queues";
import { getDb } from "@/lib/db";
import { pausedQueues } from "@/workers/admin/queues";
import { PAUSED_MARKER_QUEUE } from "@/workers/queue/paused";

export const dynamic = "force-dynamic";

const Query = z.strictObject({ hours: z.coerce.number().int().min(1).max(24).default(1) });

/**
 * GET /api/queues?hours=1..24 → { queues, flow, retrying, paused }: depth, lag over time, leases,
 * workers; per queue claimed, processed, failed and dead-lettered over time in the same buckets;
 * the jobs waiting to retry; the paused queues (whose markers are not shown as a queue).
 */
export async function GET(request: Request): Promise<Response> {
  const query = parseQuery(request, Query);
  if (!query.ok) return query.response;
  const denied = await requireReader(request);
  if (denied) return denied;
  const db = await getDb();
  const now = new Date();
  const queues = await queuesView(db, { hours: query.value.hours, now });
  const from = new Date(now.getTime() - query.value.hours * 3_600_000);
  const [flow, retrying, paused] = await Promise.all([
    queueFlow(db, { from, now, bucketSeconds: queues.bucketSeconds }),
    retryingJobs(db),
    pausedQueues(db),
  ]);
  const depth = queues.depth.filter((d) => d.queue !== PAUSED_MARKER_QUEUE);
  return json({ queues: { ...queues, depth }, flow, retrying, paused });
}
