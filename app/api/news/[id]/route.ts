import { z } from "zod";
import { parseParam } from "@/lib/api/respond";
import { readResponse, refuseOverLimit } from "@/lib/readmodel/http";
import { STORY_ID } from "@/lib/readmodel/keys";
import { readModel } from "@/lib/readmodel/serve";

export const dynamic = "force-dynamic";

const Id = z.string().regex(STORY_ID, "must be a story id (64 hex characters)");

/**
 * GET /api/news/{id} → { story: PublicStory, model: { version, builtAt } }, 404 when the read
 * model holds no such story (never built, retracted, or now a duplicate of another). Public, from
 * the read model only, with the list's caching headers (lib/readmodel/http.ts).
 */
export async function GET(
  request: Request,
  { params }: { params: Promise<{ id: string }> },
): Promise<Response> {
  const startedAt = performance.now();
  const limited = refuseOverLimit(request, "story", startedAt);
  if (limited) return limited;
  const id = parseParam("id", (await params).id, Id);
  if (!id.ok) return id.response;
  return readResponse(request, await readModel().getStory(id.value), "story", startedAt);
}
