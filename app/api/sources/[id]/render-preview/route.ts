import { apiError, json, parseParam } from "@/lib/api/respond";
import { requireAdmin } from "@/lib/auth/guard";
import { getDb } from "@/lib/db";
import { BrowserUnavailableError } from "@/workers/fetcher";
import { previewRender } from "@/workers/sources/renderPreview";
import { SourceIdParam } from "../param";

export const dynamic = "force-dynamic";

/**
 * POST /api/sources/:id/render-preview → { preview: { served, rendered, headlines, cpuMs, wallMs,
 * requests, blocked, blockedDetail, problem } }: the page source read as served and rendered in
 * headless Chromium, side by side, nothing written. Admin only: it makes the server fetch and
 * run a page. 404 no such source, 400 not a page, 503 browser_unavailable (no Chromium here).
 */
export async function POST(
  request: Request,
  { params }: { params: Promise<{ id: string }> },
): Promise<Response> {
  const auth = await requireAdmin(request);
  if (auth instanceof Response) return auth;
  const path = parseParam("id", (await params).id, SourceIdParam);
  if (!path.ok) return path.response;
  const id = path.value;
  const db = await getDb();
  const source = await db.prisma.source.findUnique({ where: { id } });
  if (!source) return apiError(404, "not_found", `no source "${id}"`);
  if (source.kind !== "page" || !source.url) {
    return apiError(
      400,
      "bad_request",
      `source "${id}" is a ${source.kind}: only a page is rendered`,
    );
  }
  try {
    const preview = await previewRender(db, {
      id: source.id,
      url: source.url,
      allowPrivate: source.allowPrivate,
    });
    return json({ preview });
  } catch (err) {
    if (err instanceof BrowserUnavailableError) {
      return apiError(503, "browser_unavailable", err.message);
    }
    throw err;
  }
}
