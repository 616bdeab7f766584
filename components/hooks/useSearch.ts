"use client";

import { keepPreviousData, useQuery } from "@tanstack/react-query";
import type { SearchAnswer } from "@/lib/search/search";
import { getJson } from "./api";

export interface SearchParams {
  q: string;
  lang?: string;
  source?: string;
  cursor?: string | null;
}

/**
 * GET /api/search: hybrid search of the stories, a page at a time. Not polled: a list that
 * reorders itself while it is read would move the hit under the pointer.
 */
export function useSearch(params: SearchParams, limit = 20) {
  return useQuery({
    queryKey: ["search", params, limit],
    queryFn: () => getJson<SearchAnswer>("/api/search", { ...params, limit }),
    enabled: params.q.trim() !== "",
    placeholderData: keepPreviousData,
    staleTime: 60_000,
  });
}
