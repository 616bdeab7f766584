import { z } from "zod";
import { readJsonBody } from "@/lib/api/body";
import { json, parseQuery } from "@/lib/api/respond";
import { requireAdmin, requireReader } from "@/lib/auth/guard";
import { getDb } from "@/lib/db";
import { importOpml } from "@/workers/admin/sources";
import { exportSources } from "@/workers/sources/opml";

export const dynamic = "force-dynamic";

/**
 * 4 MiB of OPML: Feedly's and Inoreader's exports of a thousand feeds are about 250 KB, so this is
 * ten thousand feeds (the import's own cap, MAX_IMPORTED_SOURCES) with room for long titles.
 */
const OPML_BODY_LIMIT = 4 * 1024 * 1024;

const Body = z.strictObject({
  opml: z.string().min(1, "paste or upload an OPML file"),
  dryRun: z.boolean(),
  allowPrivate: z.boolean().default(false),
  strict: z.boolean().default(false),
  /** The uploaded file's name, for the audit row. */
  file: z.string().max(200).optional(),
});

/**
 * POST /api/sources/opml { opml, dryRun, allowPrivate?, strict?, file? } → { plan: { add,
 * problems (by line), errors }, applied: { added, addedMeanwhile, auditId } | null }: the dry run
 * shows the plan; the import adds its feeds as dashboard sources, audited. 400 for a body that is
 * not this shape; a malformed OPML is a plan with problems, not an error.
 */
export async function POST(request: Request): Promise<Response> {
  const auth = await requireAdmin(request);
  if (auth instanceof Response) return auth;
  const body = await readJsonBody(request, Body, { limit: OPML_BODY_LIMIT });
  if (!body.ok) return body.response;
  const { opml, ...options } = body.value;
  return json(await importOpml(await getDb(), opml, { ...options, actor: auth.actor }));
}

const Query = z.strictObject({});

/** GET /api/sources/opml → every feed source as an OPML 2.0 download (wirewatch-sources.opml). */
export async function GET(request: Request): Promise<Response> {
  const query = parseQuery(request, Query);
  if (!query.ok) return query.response;
  const denied = await requireReader(request);
  if (denied) return denied;
  const { opml } = await exportSources(await getDb(), { title: "wirewatch sources" });
  return new Response(opml, {
    headers: {
      "content-type": "text/x-opml; charset=utf-8",
      "content-disposition": 'attachment; filename="wirewatch-sources.opml"',
      "cache-control": "no-store",
    },
  });
}
