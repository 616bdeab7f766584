import { z } from "zod";
import { json, parseQuery } from "@/lib/api/respond";
import { requireReader } from "@/lib/auth/guard";
import { itemTitles, TITLES_MAX } from "@/lib/dashboard/dedup";
import { getDb } from "@/lib/db";

export const dynamic = "force-dynamic";

const Query = z
  .object({
    keys: z
      .string()
      .max(TITLES_MAX * 65)
      .transform((s) => s.split(","))
      .pipe(
        z
          .array(z.string().regex(/^[0-9a-f]{64}$/, "must be entry keys"))
          .min(1)
          .max(TITLES_MAX),
      ),
  })
  .strict();

/**
 * GET /api/dedup/titles?keys=k1,k2,… (up to 200 entry keys) → { titles: { [key]: { title,
 * sourceId } } }: the headlines a run's diff (which names items by key) shows; keys with no
 * item are left out.
 */
export async function GET(request: Request): Promise<Response> {
  const query = parseQuery(request, Query);
  if (!query.ok) return query.response;
  const denied = await requireReader(request);
  if (denied) return denied;
  return json({ titles: await itemTitles(await getDb(), query.value.keys) });
}
