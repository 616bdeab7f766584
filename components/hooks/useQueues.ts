import { keepPreviousData, useQuery } from "@tanstack/react-query";
import type { QueuesView } from "@/lib/dashboard/queues";
import { getJson } from "./api";
import type { Serialized } from "./useSources";

export type QueuesJson = Serialized<QueuesView>;

/** GET /api/queues?hours=, every 10 s: depth, lag over time, leases and workers. */
export function useQueuesQuery(params: { hours: number }) {
  return useQuery({
    queryKey: ["queues", params],
    queryFn: () => getJson<{ queues: QueuesJson }>("/api/queues", params),
    refetchInterval: 10_000,
    placeholderData: keepPreviousData,
  });
}
