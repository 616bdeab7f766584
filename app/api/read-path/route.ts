import { z } from "zod";
import { json, parseQuery } from "@/lib/api/respond";
import { requireReader } from "@/lib/auth/guard";
import { readPathView } from "@/lib/dashboard/readPath";
import { getDb } from "@/lib/db";

export const dynamic = "force-dynamic";

const Query = z.strictObject({ hours: z.coerce.number().int().min(1).max(24).default(1) });

/**
 * GET /api/read-path?hours=1..24 → { readPath }: the read model's head, lag and staleness, builds
 * over time, and this process's store and requests (hit ratio, time to first byte).
 */
export async function GET(request: Request): Promise<Response> {
  const query = parseQuery(request, Query);
  if (!query.ok) return query.response;
  const denied = await requireReader(request);
  if (denied) return denied;
  return json({ readPath: await readPathView(await getDb(), { hours: query.value.hours }) });
}
