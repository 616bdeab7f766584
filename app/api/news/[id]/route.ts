import { storyAnswer, toResponse } from "@/lib/readmodel/http";

export const dynamic = "force-dynamic";

/**
 * GET /api/news/{id} → { story: PublicStory, model: { version, builtAt } }, 404 when the read
 * model holds no such story (never built, retracted, or now a duplicate of another). Public, from
 * the read model only, with the list's caching headers (lib/readmodel/http.ts). Answered before
 * Next routes it under `next start`, as /api/news is (lib/readmodel/directPath.ts).
 */
export async function GET(
  request: Request,
  { params }: { params: Promise<{ id: string }> },
): Promise<Response> {
  return toResponse(await storyAnswer(request, (await params).id));
}
