"use client";

import { useQuery } from "@tanstack/react-query";
import type { ItemDetail } from "@/lib/dashboard/items";
import { getJson } from "./api";

/** GET /api/items/:key: the current row and its observation timeline. */
export function useItem(key: string, after?: string | null) {
  return useQuery({
    queryKey: ["item", key, after ?? null],
    queryFn: () => getJson<ItemDetail>(`/api/items/${key}`, { after }),
    refetchInterval: 10_000,
    retry: false,
  });
}
