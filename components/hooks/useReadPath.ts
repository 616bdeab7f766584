import { keepPreviousData, useQuery } from "@tanstack/react-query";
import type { ReadPathView } from "@/lib/dashboard/readPath";
import { getJson } from "./api";
import type { Serialized } from "./useSources";

export type ReadPathJson = Serialized<ReadPathView>;

/** GET /api/read-path?hours=, every 5 s: the read model, its builds and this process's reads. */
export function useReadPathQuery(params: { hours: number }) {
  return useQuery({
    queryKey: ["read-path", params],
    queryFn: () => getJson<{ readPath: ReadPathJson }>("/api/read-path", params),
    refetchInterval: 5_000,
    placeholderData: keepPreviousData,
  });
}
