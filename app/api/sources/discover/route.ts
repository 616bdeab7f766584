import { readJsonBody } from "@/lib/api/body";
import { apiError, json } from "@/lib/api/respond";
import { requireAdmin } from "@/lib/auth/guard";
import { getDb } from "@/lib/db";
import { discoverFeeds } from "@/workers/sources/discover";
import { InspectBody } from "../sourceBody";
import { refusal } from "../sourceError";

export const dynamic = "force-dynamic";

/**
 * POST /api/sources/discover { url, allowPrivate? } → { discovery: { url, finalUrl, candidates:
 * [{ url, title, type, via }], ssrf, robots, problem } }: the feeds a site or feed URL leads to,
 * fetched through the fetcher (SSRF on the resolved address, robots.txt, timeouts, size caps).
 * Admin only: it makes the server fetch a URL. 400 not a URL, 422 blocked_ssrf with the reason.
 */
export async function POST(request: Request): Promise<Response> {
  const auth = await requireAdmin(request);
  if (auth instanceof Response) return auth;
  const body = await readJsonBody(request, InspectBody);
  if (!body.ok) return body.response;
  try {
    const discovery = await discoverFeeds(await getDb(), body.value.url, {
      allowPrivate: body.value.allowPrivate,
    });
    if (discovery.problem?.code === "blocked_ssrf" && !discovery.ssrf.allowed) {
      return apiError(422, "blocked_ssrf", `url: ${discovery.problem.message}`);
    }
    return json({ discovery });
  } catch (err) {
    return refusal(err);
  }
}
