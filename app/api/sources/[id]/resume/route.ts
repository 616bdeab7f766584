import { apiError, json } from "@/lib/api/respond";
import { requireAdmin } from "@/lib/auth/guard";
import { resumeSource } from "@/lib/dashboard/sources";
import { getDb } from "@/lib/db";

export const dynamic = "force-dynamic";

/** POST /api/sources/:id/resume → { result: { affected, auditId, message } }: resumes a source an admin paused; audited. */
export async function POST(
  request: Request,
  { params }: { params: Promise<{ id: string }> },
): Promise<Response> {
  const auth = await requireAdmin(request);
  if (auth instanceof Response) return auth;
  const { id } = await params;
  const result = await resumeSource(await getDb(), id, auth.actor);
  if (!result) return apiError(404, "not_found", `no source "${id}"`);
  return json({ result });
}
