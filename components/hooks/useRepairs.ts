"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { RepairChangeView, RepairRunView } from "@/lib/dashboard/repairs";
import { getJson, postJson } from "./api";

export type RepairRunsPage = {
  runs: RepairRunView[];
  nextBefore: string | null;
  activeRunId: string | null;
};

/** GET /api/repairs: history, newest first; polled fast while a run is active. */
export function useRepairRuns() {
  return useQuery({
    queryKey: ["repairs", "runs"],
    queryFn: () => getJson<RepairRunsPage>("/api/repairs"),
    refetchInterval: (query) => (query.state.data?.activeRunId ? 500 : 5_000),
  });
}

/** GET /api/repairs/:id: one run's progress and its field-by-field diff. */
export function useRepairRun(id: string | null, after?: string | null) {
  return useQuery({
    queryKey: ["repairs", "run", id, after ?? null],
    queryFn: () =>
      getJson<{ run: RepairRunView; changes: RepairChangeView[]; nextAfter: string | null }>(
        `/api/repairs/${id}`,
        { after },
      ),
    enabled: id !== null,
    // Progress while it runs (rows_examined moves every batch of 500), then at rest.
    refetchInterval: (query) => (query.state.data?.run.status === "running" ? 500 : 10_000),
  });
}

/** POST /api/repairs { dryRun }: starts a run in the background. */
export function useStartRepair() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: { dryRun: boolean }) =>
      postJson<{ runId: string; auditId: string }>("/api/repairs", body),
    onSettled: () => client.invalidateQueries({ queryKey: ["repairs"] }),
  });
}
