import { keepPreviousData, useQuery } from "@tanstack/react-query";
import type { SourceSort } from "@/lib/dashboard/sourceList";
import type { SourceRow } from "@/lib/dashboard/sources";
import { getJson } from "./api";

/** What a server type looks like after JSON: Dates arrive as ISO strings. */
export type Serialized<T> = T extends Date
  ? string
  : T extends (infer U)[]
    ? Serialized<U>[]
    : T extends object
      ? { [K in keyof T]: Serialized<T[K]> }
      : T;

export type SourceRowJson = Serialized<SourceRow>;

export interface SourcesParams {
  limit?: number;
  cursor?: string | null;
  sort?: SourceSort;
  dir?: "asc" | "desc";
  kind?: string;
  health?: string;
  breaker?: string;
  q?: string;
}

/**
 * GET /api/sources, every 5 s: one page of sources (filtered and sorted by the server) with
 * health, breaker and the last hour of fetching. The page on screen stays while the next loads.
 */
export function useSourcesQuery(params: SourcesParams = {}) {
  return useQuery({
    queryKey: ["sources", params],
    queryFn: () =>
      getJson<{ sources: SourceRowJson[]; nextCursor: string | null }>("/api/sources", {
        ...params,
      }),
    placeholderData: keepPreviousData,
    refetchInterval: 5_000,
  });
}
