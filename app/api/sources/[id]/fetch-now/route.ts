import { apiError, json } from "@/lib/api/respond";
import { requireAdmin } from "@/lib/auth/guard";
import { fetchSourceNow } from "@/lib/dashboard/sources";
import { getDb } from "@/lib/db";

export const dynamic = "force-dynamic";

/** POST /api/sources/:id/fetch-now → { result: { affected, auditId, message } }: makes the source's waiting fetch jobs due now; audited. */
export async function POST(
  request: Request,
  { params }: { params: Promise<{ id: string }> },
): Promise<Response> {
  const auth = await requireAdmin(request);
  if (auth instanceof Response) return auth;
  const { id } = await params;
  const result = await fetchSourceNow(await getDb(), id, auth.actor);
  if (!result) return apiError(404, "not_found", `no source "${id}"`);
  return json({ result });
}
