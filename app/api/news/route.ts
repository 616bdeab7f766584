import { listAnswer, toResponse } from "@/lib/readmodel/http";

export const dynamic = "force-dynamic";

/**
 * GET /api/news?limit=1..100 (20)&category=&lang=&cursor= → { items: PublicStory[], nextCursor,
 * model: { version, builtAt } }: canonical stories (one per cluster) in the model version's
 * frozen order, from the read model only (lib/readmodel/serve.ts), never a write table. Public:
 * no session; its own rate limit per client. ETag / 304, Cache-Control for shared caches,
 * X-Model-Version, X-Model-Age, X-Cache (lib/readmodel/http.ts).
 *
 * Under `next start` the server answers this path before Next routes it (directPath.ts, the same
 * answer without the framework's per-request cost); this handler answers it elsewhere (`next dev`
 * without instrumentation, tests).
 */
export async function GET(request: Request): Promise<Response> {
  return toResponse(await listAnswer(request));
}
