import { z } from "zod";
import { json, parseQuery } from "@/lib/api/respond";
import { requireReader } from "@/lib/auth/guard";
import { LATEST_LIMIT, latestNews } from "@/lib/dashboard/latestNews";
import { getDb } from "@/lib/db";

export const dynamic = "force-dynamic";

const Query = z.strictObject({
  limit: z.coerce.number().int().min(1).max(200).default(LATEST_LIMIT),
});

/** GET /api/overview/headlines?limit= → { rows }: the newest-updated current rows. */
export async function GET(request: Request): Promise<Response> {
  const query = parseQuery(request, Query);
  if (!query.ok) return query.response;
  const denied = await requireReader(request);
  if (denied) return denied;
  return json({ rows: await latestNews(await getDb(), query.value.limit) });
}
