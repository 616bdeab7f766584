import { apiError, json, parseParam } from "@/lib/api/respond";
import { requireAdmin } from "@/lib/auth/guard";
import { getDb } from "@/lib/db";
import { resumeQueue } from "@/workers/admin/queues";
import { QueueParam } from "../param";

export const dynamic = "force-dynamic";

/** POST /api/queues/:queue/resume → { result: { affected, auditId, message } }: lets the queue's jobs be claimed again and wakes its workers; audited. */
export async function POST(
  request: Request,
  { params }: { params: Promise<{ queue: string }> },
): Promise<Response> {
  const auth = await requireAdmin(request);
  if (auth instanceof Response) return auth;
  const path = parseParam("queue", (await params).queue, QueueParam);
  if (!path.ok) return path.response;
  const queue = path.value;
  const result = await resumeQueue(await getDb(), queue, auth.actor);
  if (!result) return apiError(404, "not_found", `no queue "${queue}"`);
  return json({ result });
}
