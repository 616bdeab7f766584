import { z } from "zod";
import { apiError, json, parseQuery } from "@/lib/api/respond";
import { requireReader } from "@/lib/auth/guard";
import { config } from "@/lib/config";
import { getDb } from "@/lib/db";
import { MAX_LIMIT, MAX_QUERY_CHARS, SearchInputError } from "@/lib/search/hybrid";
import { queryEmbedderFor } from "@/lib/search/queryEmbedders";
import { search } from "@/lib/search/search";
import { text } from "@/lib/validation";

export const dynamic = "force-dynamic";

const Query = z
  .object({
    q: text(MAX_QUERY_CHARS, { min: 1 }),
    lang: z
      .string()
      .regex(/^[A-Za-z]{2,3}$/, "must be a language code such as en or bn")
      .transform((s) => s.toLowerCase())
      .optional(),
    source: text(200, { min: 1 }).optional(),
    since: z.iso.datetime({ offset: true }).optional(),
    until: z.iso.datetime({ offset: true }).optional(),
    limit: z.coerce.number().int().min(1).max(MAX_LIMIT).optional(),
    cursor: z.string().max(400).optional(),
  })
  .strict();

/**
 * GET /api/search?q&lang&source&since&until&limit&cursor → { mode, hits: [{ entryKey, title,
 * summary, link, sourceId, sourceName, outlets, members, score, reasons: { lexical: { rank,
 * score } | null, vector: { similarity, model, kind, label } | null } … }], nextCursor, model
 * (id, kind, provider … or null: full text only), vectorBackend, notices, timings }.
 * Hybrid search over canonical items, one hit per story (lib/search/hybrid.ts).
 */
export async function GET(request: Request): Promise<Response> {
  const query = parseQuery(request, Query);
  if (!query.ok) return query.response;
  const denied = await requireReader(request);
  if (denied) return denied;
  const { q, lang, source, since, until, limit, cursor } = query.value;
  try {
    const db = await getDb();
    return json(
      await search(
        db,
        {
          q,
          filters: {
            lang,
            sourceId: source,
            since: since ? new Date(since) : undefined,
            until: until ? new Date(until) : undefined,
          },
          limit,
          cursor,
        },
        {
          configuredModel: config().WIREWATCH_SEARCH_MODEL,
          embedderFor: (model) => queryEmbedderFor(model, db),
        },
      ),
    );
  } catch (err) {
    if (err instanceof SearchInputError) return apiError(400, "bad_request", err.message);
    throw err;
  }
}
