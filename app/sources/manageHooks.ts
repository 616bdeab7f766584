"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { getJson, postJson } from "@/components/hooks/api";
import type { ActionResult } from "@/lib/dashboard/sources";
import type { NewSourceInput, SourceEdit, sourceSettings } from "@/workers/admin/sources";
import type { Discovery, Preview } from "@/workers/sources/discover";
import type { ApplyResult, ImportPlan } from "@/workers/sources/opml";

/**
 * The Sources pages' hooks for managing sources, one per endpoint (app/api/sources/**). Only these
 * pages use them, so they sit beside them rather than in components/hooks.
 */

export type SourceSettingsJson = NonNullable<Awaited<ReturnType<typeof sourceSettings>>>;
type Inspect = { url: string; allowPrivate: boolean };

/** POST /api/sources/discover: the feeds a pasted URL leads to. */
export function useDiscoverMutation() {
  return useMutation({
    mutationFn: (body: Inspect) =>
      postJson<{ discovery: Discovery }>("/api/sources/discover", body),
  });
}

/** POST /api/sources/preview: what one feed would ingest, with its verdicts. */
export function usePreviewMutation() {
  return useMutation({
    mutationFn: (body: Inspect) => postJson<{ preview: Preview }>("/api/sources/preview", body),
  });
}

/** POST /api/sources: adds a dashboard source; the Sources list refreshes after. */
export function useAddSourceMutation() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: NewSourceInput) =>
      postJson<{ result: ActionResult & { sourceId: string } }>("/api/sources", body),
    onSuccess: () => client.invalidateQueries({ queryKey: ["sources"] }),
  });
}

/** GET /api/sources/:id/settings: what the edit form starts from. */
export function useSourceSettingsQuery(id: string) {
  return useQuery({
    queryKey: ["sources", id, "settings"],
    queryFn: () =>
      getJson<{ settings: SourceSettingsJson }>(`/api/sources/${encodeURIComponent(id)}/settings`),
  });
}

/** PATCH /api/sources/:id (edit) or DELETE /api/sources/:id (remove, history kept). */
export function useChangeSourceMutation(id: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (change: { edit: SourceEdit } | { remove: true }) =>
      "remove" in change
        ? postJson<{ result: ActionResult }>(`/api/sources/${encodeURIComponent(id)}`, {}, "DELETE")
        : postJson<{ result: ActionResult }>(
            `/api/sources/${encodeURIComponent(id)}`,
            change.edit,
            "PATCH",
          ),
    onSettled: () => client.invalidateQueries({ queryKey: ["sources"] }),
  });
}

export interface OpmlRequest {
  opml: string;
  dryRun: boolean;
  allowPrivate: boolean;
  file?: string;
}

/** POST /api/sources/opml: the plan (dry run) or the import. */
export function useOpmlImportMutation() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: OpmlRequest) =>
      postJson<{ plan: ImportPlan; applied: ApplyResult | null }>("/api/sources/opml", body),
    onSuccess: (data) => {
      if (data.applied) void client.invalidateQueries({ queryKey: ["sources"] });
    },
  });
}
