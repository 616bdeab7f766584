import { keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { QueueFlow, RetryingJob } from "@/lib/dashboard/queueFlow";
import type { QueuesView } from "@/lib/dashboard/queues";
import { getJson, postJson } from "./api";
import type { Serialized } from "./useSources";

export type QueuesJson = Serialized<QueuesView>;
export type QueueFlowJson = Serialized<QueueFlow>;
export type RetryingJobJson = Serialized<RetryingJob>;

export interface QueuesResponse {
  queues: QueuesJson;
  flow: QueueFlowJson[];
  retrying: { total: number; jobs: RetryingJobJson[] };
  /** Queues an admin paused (workers/admin/queues.ts), and since when. */
  paused: { queue: string; since: string }[];
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

export type QueueAction = "pause" | "resume";

/** POST /api/queues/:queue/{pause,resume}; refreshes the Queues page after. */
export function useQueueActionMutation() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: ({ queue, action }: { queue: string; action: QueueAction }) =>
      postJson<{ result: { affected: number; auditId: string; message: string } }>(
        `/api/queues/${encodeURIComponent(queue)}/${action}`,
      ),
    onSettled: () => client.invalidateQueries({ queryKey: ["queues"] }),
  });
}
