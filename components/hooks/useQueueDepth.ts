import { keepPreviousData, useQuery } from "@tanstack/react-query";
import type { TimeRange } from "@/components/ui/timeRanges";
import type { QueueDepthSeries } from "@/workers/queue/depthSeries";
import { getJson } from "./api";

export interface QueueDepthResponse {
  range: TimeRange;
  from: string;
  to: string;
  bucketSeconds: number;
  queues: QueueDepthSeries[];
}

/**
 * GET /api/queues/depth?range=, every 30 s: each queue's depth over the range from its
 * per-minute samples. Samples come once a minute, so polling faster would redraw the same points.
 */
export function useQueueDepthQuery(params: { range: TimeRange }) {
  return useQuery({
    queryKey: ["queues", "depth", params],
    queryFn: () => getJson<QueueDepthResponse>("/api/queues/depth", params),
    refetchInterval: 30_000,
    placeholderData: keepPreviousData,
  });
}
