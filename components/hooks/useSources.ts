import { useQuery } from "@tanstack/react-query";
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

/** GET /api/sources, every 5 s: health, breaker and the last hour of fetching per source. */
export function useSourcesQuery() {
  return useQuery({
    queryKey: ["sources"],
    queryFn: () => getJson<{ sources: SourceRowJson[] }>("/api/sources"),
    refetchInterval: 5_000,
  });
}
