import { z } from "zod";
import { json, parseQuery } from "@/lib/api/respond";
import { requireReader } from "@/lib/auth/guard";
import { getDb } from "@/lib/db";
import { id } from "@/lib/validation";
import { listDeadLetters } from "@/workers/queue/deadLetters";
import { badSelection, FilterQuery, toFilter } from "./filter";

export const dynamic = "force-dynamic";

const Query = FilterQuery.extend({
  cursor: id("a job id").optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
}).strict();

/** GET /api/dead-letters?stage&source&code&fingerprint&from&to&cursor&limit → { items, nextCursor } */
export async function GET(request: Request): Promise<Response> {
  const query = parseQuery(request, Query);
  if (!query.ok) return query.response;
  const denied = await requireReader(request);
  if (denied) return denied;
  const { cursor, limit, ...filter } = query.value;
  try {
    return json(await listDeadLetters(await getDb(), toFilter(filter), { cursor, limit }));
  } catch (err) {
    return badSelection(err);
  }
}
