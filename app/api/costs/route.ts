import { z } from "zod";
import { json, parseQuery } from "@/lib/api/respond";
import { requireReader } from "@/lib/auth/guard";
import { config } from "@/lib/config";
import { COST_WINDOWS, type CostWindow, costsOverview } from "@/lib/dashboard/costs";
import { getDb } from "@/lib/db";
import { runningExtractorId } from "@/workers/extract/running";

export const dynamic = "force-dynamic";

const Query = z
  .object({
    window: z.enum(Object.keys(COST_WINDOWS) as [CostWindow, ...CostWindow[]]).default("7d"),
  })
  .strict();

/**
 * GET /api/costs?window=24h|7d|30d (default 7d) → { now, countedAt, window, spend: { hourly,
 * daily: { bucketSeconds, series: [{ key, provider, model, costUsd, calls, tokensIn, tokensOut }],
 * buckets: [{ t, usd: { [key]: number } }], totalUsd } }, today: { costUsd, calls }, sources:
 * [{ sourceId, sourceName, costUsd, tokensIn, tokensOut, attempts, failed, errorRate,
 * uniqueStories, duplicates, duplicateRate, costPerUniqueStory }], forecast: { month,
 * monthToDateUsd, dailyAverageUsd, basisDays, daysInMonth, daysLeft, forecastUsd, budgetUsd,
 * share, embeddingMonthToDateUsd }, budgets: [{ provider, spentUsd, budgetUsd, exhausted,
 * skippedToday, lastSkippedAt, resetsAt }], calls: { byOutcome, total, attempts, failed,
 * corrections, correctionsOk, extractions, fallovers, byProvider }, topItems: [{ entryKey, title,
 * sourceId, sourceName, costUsd, calls, tokensIn, tokensOut }], coverage: { extractor,
 * canonical, done, remaining, ratio } } (lib/dashboard/costs.ts). The window sets the per-source
 * table, the outcomes and the top items; spend over time is always 24 hours and 30 days.
 */
export async function GET(request: Request): Promise<Response> {
  const query = parseQuery(request, Query);
  if (!query.ok) return query.response;
  const denied = await requireReader(request);
  if (denied) return denied;
  return json(
    await costsOverview(await getDb(), {
      window: query.value.window,
      budgets: { llm: config().WIREWATCH_EXTRACT_LLM_DAILY_BUDGET_USD },
      // The chain this process's extract stage runs; elsewhere (workers apart), the newest's.
      extractor: runningExtractorId() ?? undefined,
    }),
  );
}
