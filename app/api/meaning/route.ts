import { z } from "zod";
import { json, parseQuery } from "@/lib/api/respond";
import { requireReader } from "@/lib/auth/guard";
import { config } from "@/lib/config";
import { meaningOverview } from "@/lib/dashboard/meaning";
import { getDb } from "@/lib/db";

export const dynamic = "force-dynamic";

const Query = z.object({}).strict();

/**
 * GET /api/meaning → { now, backend: { kind: "pgvector" | "portable", description }, canonical,
 * models: [{ id, model, provider, kind, kindLabel ("lexical — not meaning" for the lexical
 * fallback), dims, languages, crossLingual, limits, meaningThreshold, distinctThreshold, state,
 * embedded, covered, coverage, backfill: { startedAt, completedAt, progress }, rate: { buckets:
 * [{ t, perMinute }], lastHour }, calls: { calls, errors, costUsd, tokens, lastError }, inSearch }],
 * searchModel: { id, model, kind, kindLabel } | null, unregistered: [{ model, provider, calls,
 * errors, costUsd, tokens, lastError }], latency: { count, kept, seen, p50Ms, p95Ms, maxMs,
 * fullTextOnly, oldestAt, newestAt } (this server process's) } (lib/dashboard/meaning.ts).
 */
export async function GET(request: Request): Promise<Response> {
  const query = parseQuery(request, Query);
  if (!query.ok) return query.response;
  const denied = await requireReader(request);
  if (denied) return denied;
  return json(
    await meaningOverview(await getDb(), {
      configuredSearchModel: config().WIREWATCH_SEARCH_MODEL,
    }),
  );
}
