import { z } from "zod";
import { parseQuery } from "@/lib/api/respond";
import { keyErrorResponse, readResponse, refuseOverLimit } from "@/lib/readmodel/http";
import { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT } from "@/lib/readmodel/keys";
import { readModel } from "@/lib/readmodel/serve";

export const dynamic = "force-dynamic";

const Query = z
  .object({
    limit: z.coerce.number().int().min(1).max(MAX_PAGE_LIMIT).default(DEFAULT_PAGE_LIMIT),
    category: z.string().max(40).optional(),
    lang: z.string().max(40).optional(),
    cursor: z.string().max(512).optional(),
  })
  .strict();

/**
 * GET /api/news?limit=1..100 (20)&category=&lang=&cursor= → { items: PublicStory[], nextCursor,
 * model: { version, builtAt } }: canonical stories (one per cluster) in the model version's
 * frozen order, from the read model only (lib/readmodel/serve.ts), never a write table. Public:
 * no session; its own rate limit per client. ETag / 304, Cache-Control for shared caches,
 * X-Model-Version, X-Model-Age, X-Cache (lib/readmodel/http.ts).
 */
export async function GET(request: Request): Promise<Response> {
  const startedAt = performance.now();
  const limited = refuseOverLimit(request, "list", startedAt);
  if (limited) return limited;
  const query = parseQuery(request, Query);
  if (!query.ok) return query.response;
  const { limit, category, lang, cursor } = query.value;
  try {
    const result = await readModel().getList({ category, lang }, limit, cursor);
    return readResponse(request, result, "list", startedAt);
  } catch (err) {
    return keyErrorResponse(err);
  }
}
