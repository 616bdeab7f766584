import { z } from "zod";
import { json, parseQuery } from "@/lib/api/respond";
import { requireReader } from "@/lib/auth/guard";
import { overview } from "@/lib/dashboard/overview";
import { getDb } from "@/lib/db";

export const dynamic = "force-dynamic";

const Query = z.object({}).strict();

/** GET /api/overview → { overview }: the tiles of the home page, each with its level. */
export async function GET(request: Request): Promise<Response> {
  const query = parseQuery(request, Query);
  if (!query.ok) return query.response;
  const denied = await requireReader(request);
  if (denied) return denied;
  return json({ overview: await overview(await getDb()) });
}
