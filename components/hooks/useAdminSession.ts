"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { getJson, postJson } from "./api";

/** GET /api/auth/session (lib/auth/guard.ts AdminStatus). */
export interface AdminSession {
  loggedIn: boolean;
  expiresAt: string | null;
  mode: "password" | "loopback" | "disabled";
  adminActions: boolean;
  reason: string | null;
  canRead: boolean;
}

export const ADMIN_SESSION_KEY = ["auth", "session"] as const;

/** Whether this browser is logged in and whether admin actions are available. */
export function useAdminSession() {
  return useQuery({
    queryKey: ADMIN_SESSION_KEY,
    queryFn: () => getJson<AdminSession>("/api/auth/session"),
    refetchInterval: 60_000,
  });
}

/** POST /api/auth/login; on success every query is refetched under the new session. */
export function useLogin() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (password: string) => postJson<AdminSession>("/api/auth/login", { password }),
    onSuccess: (session) => {
      client.setQueryData(ADMIN_SESSION_KEY, session);
      void client.invalidateQueries();
    },
  });
}

/** POST /api/auth/logout: ends every session of the admin, everywhere. */
export function useLogout() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () => postJson<{ loggedOut: boolean }>("/api/auth/logout"),
    onSettled: () => void client.invalidateQueries(),
  });
}
