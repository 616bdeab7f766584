import { apiError, json, parseParam } from "@/lib/api/respond";
import { requireAdmin } from "@/lib/auth/guard";
import { getDb } from "@/lib/db";
import { fetchSourceNow } from "@/workers/admin/sources";
import { SourceIdParam } from "../param";

export const dynamic = "force-dynamic";

/** POST /api/sources/:id/fetch-now → { result: { affected, auditId, message } }: makes the source's waiting fetch jobs due now; audited. */
export async function POST(
  request: Request,
  { params }: { params: Promise<{ id: string }> },
): Promise<Response> {
  const auth = await requireAdmin(request);
  if (auth instanceof Response) return auth;
  const path = parseParam("id", (await params).id, SourceIdParam);
  if (!path.ok) return path.response;
  const id = path.value;
  const result = await fetchSourceNow(await getDb(), id, auth.actor);
  if (!result) return apiError(404, "not_found", `no source "${id}"`);
  return json({ result });
}
