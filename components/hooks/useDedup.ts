"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type {
  ClusterDetail,
  ClusterOrder,
  ClusterSummary,
  DedupOverview,
  WindowHours,
} from "@/lib/dashboard/dedup";
import type { DedupThresholds } from "@/lib/dedup/thresholds";
import type { ReviewView, ThresholdsView } from "@/workers/admin/dedup";
import type { DedupRunView, RunChange } from "@/workers/admin/dedupRerun";
import { getJson, postJson, putJson } from "./api";

/** GET /api/dedup/overview: plots, per-source rates, counts, thresholds, the latest runs. */
export function useDedupOverview(hours: WindowHours) {
  return useQuery({
    queryKey: ["dedup", "overview", hours],
    queryFn: () => getJson<DedupOverview>("/api/dedup/overview", { hours }),
    refetchInterval: 10_000,
  });
}

/** GET /api/dedup/clusters: live clusters, largest or newest first, a page at a time. */
export function useDedupClusters(order: ClusterOrder, cursor: string | null) {
  return useQuery({
    queryKey: ["dedup", "clusters", order, cursor],
    queryFn: () =>
      // Ten a page: the review queue and the thresholds follow on the same page.
      getJson<{ clusters: ClusterSummary[]; nextCursor: string | null }>("/api/dedup/clusters", {
        order,
        cursor,
        limit: 10,
      }),
    refetchInterval: 15_000,
  });
}

/** GET /api/dedup/clusters/:id: members side by side, their links and evidence, history. */
export function useDedupCluster(id: string) {
  return useQuery({
    queryKey: ["dedup", "cluster", id],
    queryFn: () => getJson<ClusterDetail>(`/api/dedup/clusters/${id}`),
    refetchInterval: 10_000,
    retry: false,
  });
}

/** GET /api/dedup/reviews?state=pending: the review queue, newest first, a page at a time. */
export function useDedupReviews(before: string | null) {
  return useQuery({
    queryKey: ["dedup", "reviews", before],
    queryFn: () =>
      getJson<{ reviews: ReviewView[]; nextBefore: string | null; pending: number }>(
        "/api/dedup/reviews",
        // Ten pairs a page: each is a card with both headlines, and the thresholds follow it.
        { state: "pending", before, limit: 10 },
      ),
    refetchInterval: 10_000,
  });
}

export type SettingsJson = ThresholdsView & { defaults: DedupThresholds };

/** GET /api/dedup/settings: the thresholds in force, their revision, and the defaults. */
export function useDedupSettings() {
  return useQuery({
    queryKey: ["dedup", "settings"],
    queryFn: () => getJson<SettingsJson>("/api/dedup/settings"),
    refetchInterval: 30_000,
  });
}

export type RunsJson = {
  runs: DedupRunView[];
  nextBefore: string | null;
  activeRunId: string | null;
};

/** GET /api/dedup/runs: re-runs newest first; polled fast while one is active. */
export function useDedupRuns(before: string | null) {
  return useQuery({
    queryKey: ["dedup", "runs", before],
    queryFn: () => getJson<RunsJson>("/api/dedup/runs", { before }),
    refetchInterval: (query) => (query.state.data?.activeRunId ? 500 : 5_000),
  });
}

/** GET /api/dedup/runs/:id: a re-run's progress and its diff (links that would appear or go). */
export function useDedupRun(id: string | null, after: string | null) {
  return useQuery({
    queryKey: ["dedup", "run", id, after],
    queryFn: () =>
      getJson<{ run: DedupRunView; changes: RunChange[]; nextAfter: string | null }>(
        `/api/dedup/runs/${id}`,
        // 50 changes a page: with the items they match, at most 150 headlines to look up.
        { after, limit: 50 },
      ),
    enabled: id !== null,
    refetchInterval: (query) => (query.state.data?.run.state === "running" ? 500 : 10_000),
  });
}

/** GET /api/dedup/titles: headlines for items a run's diff names by key. */
export function useDedupTitles(keys: string[]) {
  const sorted = [...new Set(keys)].sort();
  return useQuery({
    queryKey: ["dedup", "titles", sorted],
    queryFn: () =>
      getJson<{ titles: Record<string, { title: string | null; sourceId: string }> }>(
        "/api/dedup/titles",
        { keys: sorted.join(",") },
      ),
    enabled: sorted.length > 0 && sorted.length <= 200,
    staleTime: 60_000,
  });
}

/** After an action every dedup query is fetched again: counts, clusters and the queue move together. */
function useDedupMutation<B, R>(send: (body: B) => Promise<R>) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: send,
    onSettled: () => client.invalidateQueries({ queryKey: ["dedup"] }),
  });
}

/** POST /api/dedup/links/:id/undo: the item leaves its cluster; the pair is never merged again. */
export const useUndoLink = () =>
  useDedupMutation(({ linkId }: { linkId: string }) =>
    postJson<{ linkId: string; clusterId: string; dissolved: boolean; auditId: string }>(
      `/api/dedup/links/${linkId}/undo`,
    ),
  );

/** POST /api/dedup/reviews/:id/confirm | reject: link the pair, or never merge it. */
export const useDecideReview = () =>
  useDedupMutation(({ id, decision }: { id: string; decision: "confirm" | "reject" }) =>
    postJson<{ review: ReviewView; auditId: string }>(`/api/dedup/reviews/${id}/${decision}`),
  );

/** PUT /api/dedup/settings: new thresholds for the stage's next decisions (no re-run). */
export const useSaveThresholds = () =>
  useDedupMutation((body: { thresholds: DedupThresholds; expectedRevision: number }) =>
    putJson<SettingsJson & { auditId: string }>("/api/dedup/settings", body),
  );

/** POST /api/dedup/runs { dryRun: true, thresholds } | { applyRun }: starts a run in the background. */
export const useStartDedupRun = () =>
  useDedupMutation((body: { dryRun: true; thresholds: DedupThresholds } | { applyRun: string }) =>
    postJson<{ runId: string; auditId: string }>("/api/dedup/runs", body),
  );
