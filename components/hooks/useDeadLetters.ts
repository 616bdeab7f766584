"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type {
  DeadLetter,
  DeadLetterDetail,
  DeadLetterStats,
  DiscardResult,
  RequeueResult,
} from "@/workers/queue/deadLetters";
import { getJson, postJson } from "./api";

/** What JSON makes of a server type: dates arrive as ISO text. */
export type Wire<T> = T extends Date
  ? string
  : T extends (infer U)[]
    ? Wire<U>[]
    : T extends object
      ? { [K in keyof T]: Wire<T[K]> }
      : T;

export interface DeadLetterQuery {
  stage?: string;
  source?: string;
  code?: string;
  fingerprint?: string;
  from?: string;
  to?: string;
}

/** The selection a requeue or discard acts on (mirrors the routes' body). */
export interface DeadLetterSelection {
  filter: DeadLetterQuery & { ids?: string[] };
  all?: boolean;
  dryRun: boolean;
}

// Dead letters change only when a job dies or an admin acts: 5 s keeps the page current without
// hammering the GROUP BY over the dead-letter index.
const POLL_MS = 5_000;

/** GET /api/dead-letters/groups: depth, per stage, groups by fingerprint. */
export function useDeadLetterGroups(filter: DeadLetterQuery) {
  return useQuery({
    queryKey: ["dead-letters", "groups", filter],
    queryFn: () => getJson<Wire<DeadLetterStats>>("/api/dead-letters/groups", { ...filter }),
    refetchInterval: POLL_MS,
  });
}

/** GET /api/dead-letters: one page, newest first. */
export function useDeadLetters(filter: DeadLetterQuery, cursor: string | null, enabled = true) {
  return useQuery({
    queryKey: ["dead-letters", "list", filter, cursor],
    queryFn: () =>
      getJson<{ items: Wire<DeadLetter>[]; nextCursor: string | null }>("/api/dead-letters", {
        ...filter,
        cursor,
      }),
    refetchInterval: POLL_MS,
    enabled,
  });
}

/** GET /api/dead-letters/:id: payload, full error, failures, lease events. */
export function useDeadLetter(id: string | null) {
  return useQuery({
    queryKey: ["dead-letters", "one", id],
    queryFn: () => getJson<Wire<DeadLetterDetail>>(`/api/dead-letters/${id}`),
    enabled: id !== null,
    retry: false,
  });
}

/** POST /api/dead-letters/requeue; a real (not dry) run refreshes every dead-letter query. */
export function useRequeueDeadLetters() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (s: DeadLetterSelection & { force?: boolean }) =>
      postJson<RequeueResult>("/api/dead-letters/requeue", s),
    onSuccess: (result) => {
      if (!result.dryRun) void client.invalidateQueries({ queryKey: ["dead-letters"] });
    },
  });
}

/** POST /api/dead-letters/discard; a real (not dry) run refreshes every dead-letter query. */
export function useDiscardDeadLetters() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (s: DeadLetterSelection) => postJson<DiscardResult>("/api/dead-letters/discard", s),
    onSuccess: (result) => {
      if (!result.dryRun) void client.invalidateQueries({ queryKey: ["dead-letters"] });
    },
  });
}
