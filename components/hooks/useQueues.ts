import { keepPreviousData, useQuery } from "@tanstack/react-query";
import type { QueueFlow, RetryingJob } from "@/lib/dashboard/queueFlow";
import type { QueuesView } from "@/lib/dashboard/queues";
import { getJson } from "./api";
import type { Serialized } from "./useSources";

export type QueuesJson = Serialized<QueuesView>;
export type QueueFlowJson = Serialized<QueueFlow>;
export type RetryingJobJson = Serialized<RetryingJob>;

export interface QueuesResponse {
  queues: QueuesJson;
  flow: QueueFlowJson[];
  retrying: { total: number; jobs: RetryingJobJson[] };
}

/**
 * GET /api/queues?hours=, every 10 s: depth, lag over time, leases and workers, throughput per
 * queue and the jobs waiting to retry.
 */
export function useQueuesQuery(params: { hours: number }) {
  return useQuery({
    queryKey: ["queues", params],
    queryFn: () => getJson<QueuesResponse>("/api/queues", params),
    refetchInterval: 10_000,
    placeholderData: keepPreviousData,
  });
}
