"use client";

import { keepPreviousData, useQuery } from "@tanstack/react-query";
import type { ItemSearchPage } from "@/lib/dashboard/items";
import { getJson } from "./api";

/** GET /api/items: a bounded search, newest update first. */
export function useItems(params: { q?: string; source?: string; cursor?: string | null }) {
  return useQuery({
    queryKey: ["items", params],
    queryFn: () => getJson<ItemSearchPage>("/api/items", params),
    placeholderData: keepPreviousData,
    refetchInterval: 15_000,
  });
}
