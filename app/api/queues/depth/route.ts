import { z } from "zod";
import { RANGE_HOURS, TIME_RANGES } from "@/components/ui/timeRanges";
import { json, parseQuery } from "@/lib/api/respond";
import { requireReader } from "@/lib/auth/guard";
import { getDb } from "@/lib/db";
import { depthBucketSeconds, queueDepthSeries } from "@/workers/queue/depthSeries";

export const dynamic = "force-dynamic";

const Query = z.strictObject({ range: z.enum(TIME_RANGES).default("1h") });

/**
 * GET /api/queues/depth?range=1h|6h|24h|7d (default 1h) → { range, from, to, bucketSeconds,
 * queues: [{ queue, points: [{ t, due, running, retrying, dead }], peak }] }: each queue's
 * depth over the range from its per-minute samples (workers/queue/depthSample.ts), at most
 * 200 buckets a series, each the largest sample in it; null where no worker sampled the queue.
 */
export async function GET(request: Request): Promise<Response> {
  const query = parseQuery(request, Query);
  if (!query.ok) return query.response;
  const denied = await requireReader(request);
  if (denied) return denied;
  const { range } = query.value;
  const to = new Date();
  const from = new Date(to.getTime() - RANGE_HOURS[range] * 3_600_000);
  const bucketSeconds = depthBucketSeconds(RANGE_HOURS[range] * 3600);
  const queues = await queueDepthSeries(await getDb(), { from, to, bucketSeconds });
  return json({ range, from, to, bucketSeconds, queues });
}
