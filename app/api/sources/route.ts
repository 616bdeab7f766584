import { z } from "zod";
import { json, parseQuery } from "@/lib/api/respond";
import { requireReader } from "@/lib/auth/guard";
import { listSources } from "@/lib/dashboard/sources";
import { getDb } from "@/lib/db";

export const dynamic = "force-dynamic";

const Query = z.object({}).strict();

/** GET /api/sources → { sources }: each source's health, breaker and last hour of fetching. */
export async function GET(request: Request): Promise<Response> {
  const query = parseQuery(request, Query);
  if (!query.ok) return query.response;
  const denied = await requireReader(request);
  if (denied) return denied;
  return json({ sources: await listSources(await getDb()) });
}
