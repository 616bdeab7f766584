"use client";

import { useQuery } from "@tanstack/react-query";
import type { MeaningOverview } from "@/lib/dashboard/meaning";
import { getJson } from "./api";

/** GET /api/meaning, every 10 s: models, coverage, backfill, rates, supplier calls, latency. */
export function useMeaning() {
  return useQuery({
    queryKey: ["meaning"],
    queryFn: () => getJson<MeaningOverview>("/api/meaning"),
    refetchInterval: 10_000,
  });
}
