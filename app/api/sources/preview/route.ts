import { readJsonBody } from "@/lib/api/body";
import { apiError, json } from "@/lib/api/respond";
import { requireAdmin } from "@/lib/auth/guard";
import { getDb } from "@/lib/db";
import { previewFeed } from "@/workers/sources/discover";
import { InspectBody } from "../sourceBody";
import { refusal } from "../sourceError";

export const dynamic = "force-dynamic";

/**
 * POST /api/sources/preview { url, allowPrivate? } → { preview: { ssrf, robots, fetch, feed:
 * { title, format, entryCount, entries }, validators: { etag, lastModified }, ok, problem } }:
 * what a poll of this feed would ingest, before it is saved. Admin only: it makes the server
 * fetch a URL. 400 not a URL, 422 blocked_ssrf with the reason.
 */
export async function POST(request: Request): Promise<Response> {
  const auth = await requireAdmin(request);
  if (auth instanceof Response) return auth;
  const body = await readJsonBody(request, InspectBody);
  if (!body.ok) return body.response;
  try {
    const preview = await previewFeed(await getDb(), body.value.url, {
      allowPrivate: body.value.allowPrivate,
    });
    if (preview.problem?.code === "blocked_ssrf" && !preview.ssrf.allowed) {
      return apiError(422, "blocked_ssrf", `url: ${preview.problem.message}`);
    }
    return json({ preview });
  } catch (err) {
    return refusal(err);
  }
}
