import { apiError, json, parseParam } from "@/lib/api/respond";
import { requireReader } from "@/lib/auth/guard";
import { getDb } from "@/lib/db";
import { id as bigintId } from "@/lib/validation";
import { getDeadLetter } from "@/workers/queue/deadLetters";

export const dynamic = "force-dynamic";

/**
 * GET /api/dead-letters/:id → the dead letter (or archived one) with payload, full last error
 * (stack included), failures and lease events; 404 when it is not one (live again, or gone).
 */
export async function GET(
  request: Request,
  { params }: { params: Promise<{ id: string }> },
): Promise<Response> {
  const path = parseParam("id", (await params).id, bigintId("a job id"));
  if (!path.ok) return path.response;
  const id = path.value;
  const denied = await requireReader(request);
  if (denied) return denied;
  const letter = await getDeadLetter(await getDb(), id);
  if (!letter) return apiError(404, "not_found", `job ${id} is not a dead letter`);
  return json(letter);
}
