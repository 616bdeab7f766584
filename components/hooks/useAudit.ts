"use client";

import { keepPreviousData, useQuery } from "@tanstack/react-query";
import type { AuditRow } from "@/lib/dashboard/audit";
import { getJson } from "./api";

/** GET /api/audit: the admin_audit log, newest first, a page from `before`. */
export function useAudit(params: { action?: string; before?: string | null }) {
  return useQuery({
    queryKey: ["audit", params],
    queryFn: () =>
      getJson<{ entries: AuditRow[]; nextBefore: string | null; actions: string[] }>(
        "/api/audit",
        params,
      ),
    placeholderData: keepPreviousData,
    refetchInterval: 10_000,
  });
}
