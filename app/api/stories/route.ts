import { z } from "zod";
import { json, parseQuery } from "@/lib/api/respond";
import { requireReader } from "@/lib/auth/guard";
import { storiesView } from "@/lib/dashboard/stories";
import { getDb } from "@/lib/db";

export const dynamic = "force-dynamic";

const Query = z.strictObject({ hours: z.coerce.number().int().min(1).max(24).default(24) });

/**
 * GET /api/stories?hours=1..24 → { stories }: per story-api source its tickers, catch-up,
 * reloads, webhook deliveries (in the window) and rejections, notifications. Never the secrets.
 */
export async function GET(request: Request): Promise<Response> {
  const query = parseQuery(request, Query);
  if (!query.ok) return query.response;
  const denied = await requireReader(request);
  if (denied) return denied;
  return json({ stories: await storiesView(await getDb(), { hours: query.value.hours }) });
}
