import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { TimeRange } from "@/components/ui/timeRanges";
import type { ActionResult, SourceDetail } from "@/lib/dashboard/sources";
import { getJson, postJson } from "./api";
import type { Serialized } from "./useSources";

export type SourceDetailJson = Serialized<SourceDetail>;
export type SourceAction = "fetch-now" | "pause" | "resume";

/**
 * GET /api/sources/:id, every 5 s: one source, its jobs, latest attempts, and its attempts and
 * codes over `range` (without one, the hour and the day). While another range loads, the previous
 * answer stays on screen (it says its own windows), but never another source's.
 */
export function useSourceQuery(id: string, params: { limit?: number; range?: TimeRange } = {}) {
  return useQuery({
    queryKey: ["sources", id, params],
    queryFn: () =>
      getJson<{ source: SourceDetailJson }>(`/api/sources/${encodeURIComponent(id)}`, params),
    refetchInterval: 5_000,
    placeholderData: (previous, previousQuery) =>
      previousQuery?.queryKey[1] === id ? previous : undefined,
  });
}

/** POST /api/sources/:id/{fetch-now,pause,resume}; refreshes the source's views after. */
export function useSourceActionMutation(id: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (action: SourceAction) =>
      postJson<{ result: Serialized<ActionResult> }>(
        `/api/sources/${encodeURIComponent(id)}/${action}`,
      ),
    onSettled: () => client.invalidateQueries({ queryKey: ["sources"] }),
  });
}
