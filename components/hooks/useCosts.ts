"use client";

import { keepPreviousData, useQuery } from "@tanstack/react-query";
import type { CostsOverview, CostWindow } from "@/lib/dashboard/costs";
import { getJson } from "./api";

/**
 * GET /api/costs, every 10 s: spend over time, per source, the forecast, budgets, outcomes, the
 * most expensive items and coverage. The last window's answer stays on screen while another
 * window loads.
 */
export function useCosts(params: { window: CostWindow }) {
  return useQuery({
    queryKey: ["costs", params],
    queryFn: () => getJson<CostsOverview>("/api/costs", params),
    refetchInterval: 10_000,
    placeholderData: keepPreviousData,
  });
}
