import { keepPreviousData, useQuery } from "@tanstack/react-query";
import type { StoriesView } from "@/lib/dashboard/stories";
import { getJson } from "./api";
import type { Serialized } from "./useSources";

export type StoriesJson = Serialized<StoriesView>;
export type StorySourceJson = StoriesJson["sources"][number];

/** GET /api/stories?hours=, every 10 s: the story-API copy per story-api source. */
export function useStoriesQuery(params: { hours: number }) {
  return useQuery({
    queryKey: ["stories", params],
    queryFn: () => getJson<{ stories: StoriesJson }>("/api/stories", params),
    refetchInterval: 10_000,
    placeholderData: keepPreviousData,
  });
}
