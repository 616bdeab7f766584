import { apiError, json, parseParam } from "@/lib/api/respond";
import { requireReader } from "@/lib/auth/guard";
import { getDb } from "@/lib/db";
import { sourceSettings } from "@/workers/admin/sources";
import { SourceIdParam } from "../param";

export const dynamic = "force-dynamic";

/**
 * GET /api/sources/:id/settings → { settings }: what the edit form shows (name, url, interval,
 * collectors, tickers; webhook secrets as a count), its origin and whether it may be edited.
 */
export async function GET(
  request: Request,
  { params }: { params: Promise<{ id: string }> },
): Promise<Response> {
  const denied = await requireReader(request);
  if (denied) return denied;
  const path = parseParam("id", (await params).id, SourceIdParam);
  if (!path.ok) return path.response;
  const settings = await sourceSettings(await getDb(), path.value);
  if (!settings) return apiError(404, "not_found", `no source "${path.value}"`);
  return json({ settings });
}
