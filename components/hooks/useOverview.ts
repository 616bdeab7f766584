import { useQuery } from "@tanstack/react-query";
import type { LatestNewsRow } from "@/lib/dashboard/latestNews";
import type { Overview } from "@/lib/dashboard/overview";
import { getJson } from "./api";
import type { Serialized } from "./useSources";

export type OverviewJson = Serialized<Overview>;
export type HeadlineJson = Serialized<LatestNewsRow>;

/** GET /api/overview, every 5 s: the home page's tiles and the overall status. */
export function useOverviewQuery() {
  return useQuery({
    queryKey: ["overview"],
    queryFn: () => getJson<{ overview: OverviewJson }>("/api/overview"),
    refetchInterval: 5_000,
  });
}

/** GET /api/overview/headlines, every 10 s: the newest-updated current rows. */
export function useHeadlinesQuery(params: { limit?: number } = {}) {
  return useQuery({
    queryKey: ["overview", "headlines", params],
    queryFn: () => getJson<{ rows: HeadlineJson[] }>("/api/overview/headlines", params),
    refetchInterval: 10_000,
  });
}
