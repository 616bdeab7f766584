import { apiError, json, parseParam } from "@/lib/api/respond";
import { requireAdmin } from "@/lib/auth/guard";
import { getDb } from "@/lib/db";
import { pauseQueue } from "@/workers/admin/queues";
import { QueueParam } from "../param";

export const dynamic = "force-dynamic";

/** POST /api/queues/:queue/pause → { result: { affected, auditId, message } }: stops every worker claiming from the queue (leased jobs finish); audited. */
export async function POST(
  request: Request,
  { params }: { params: Promise<{ queue: string }> },
): Promise<Response> {
  const auth = await requireAdmin(request);
  if (auth instanceof Response) return auth;
  const path = parseParam("queue", (await params).queue, QueueParam);
  if (!path.ok) return path.response;
  const queue = path.value;
  const result = await pauseQueue(await getDb(), queue, auth.actor);
  if (!result) return apiError(404, "not_found", `no queue "${queue}"`);
  return json({ result });
}
